//! Every bad input is a typed error carrying its numbers, never a panic.
// Native only: these tests block on the GPU (the browser's are in tests/web.rs).
#![cfg(not(target_arch = "wasm32"))]

mod common;

use common::ctx;
use wgpu_flash_attn::plan::{plan, plan_with};
use wgpu_flash_attn::{
    Attention, AttentionBuffers, DType, DeviceCaps, FlashError, PlanOptions, Strides, Tensor,
    TensorBuffer, Tiles,
};

fn storage(size: u64) -> wgpu::Buffer {
    ctx().device().create_buffer(&wgpu::BufferDescriptor {
        label: None,
        size,
        usage: wgpu::BufferUsages::STORAGE,
        mapped_at_creation: false,
    })
}

#[test]
fn zero_sizes() {
    for (p, what) in [
        (Attention::new(0, 1, 1, 4, 4, 8), "batch"),
        (Attention::new(1, 0, 1, 4, 4, 8), "heads_q"),
        (Attention::new(1, 1, 0, 4, 4, 8), "heads_kv"),
        (Attention::new(1, 1, 1, 0, 4, 8), "seq_q"),
        (Attention::new(1, 1, 1, 4, 0, 8), "seq_kv"),
        (Attention::new(1, 1, 1, 4, 4, 0), "head_dim"),
    ] {
        assert_eq!(ctx().plan(&p).unwrap_err(), FlashError::ZeroSize { what });
    }
}

#[test]
fn unsupported_head_dims() {
    for d in [2, 6, 130, 260, 512] {
        let err = ctx().plan(&Attention::new(1, 1, 1, 4, 4, d)).unwrap_err();
        assert_eq!(err, FlashError::UnsupportedHeadDim { got: d, max: 256 });
        assert!(err.to_string().contains(&d.to_string()));
    }
}

#[test]
fn heads_not_divisible() {
    let err = ctx().plan(&Attention::new(1, 6, 4, 4, 4, 8)).unwrap_err();
    assert_eq!(
        err,
        FlashError::HeadsNotDivisible {
            heads_q: 6,
            heads_kv: 4
        }
    );
}

#[test]
fn bad_scale_and_strides() {
    let err = ctx()
        .plan(&Attention::new(1, 1, 1, 4, 4, 8).softmax_scale(f32::NAN))
        .unwrap_err();
    assert!(
        matches!(
            err,
            FlashError::BadOption {
                what: "softmax_scale",
                ..
            }
        ),
        "{err}"
    );
    let odd = Strides {
        batch: 64,
        seq: 10,
        head: 8,
    };
    let err = ctx()
        .plan(&Attention::new(1, 1, 1, 4, 4, 8).strides(Tensor::K, odd))
        .unwrap_err();
    assert!(
        matches!(
            err,
            FlashError::BadLayout {
                tensor: "k",
                what: "seq stride",
                got: 10,
                ..
            }
        ),
        "{err}"
    );
    // An output layout whose rows overlap.
    let overlapping = Strides {
        batch: 256,
        seq: 4,
        head: 64,
    };
    let err = ctx()
        .plan(&Attention::new(1, 1, 1, 4, 4, 8).strides(Tensor::O, overlapping))
        .unwrap_err();
    assert!(
        matches!(err, FlashError::BadLayout { tensor: "out", .. }),
        "{err}"
    );
}

#[test]
fn tensor_larger_than_a_binding() {
    let caps = ctx().caps().clone();
    // 2^31 elements of keys: beyond every device's max_storage_buffer_binding_size in f32.
    let p = Attention::new(1, 1, 1, 16, 1 << 25, 64);
    match ctx().plan(&p).unwrap_err() {
        FlashError::DeviceLimit { needed, limit, .. } => {
            assert!(needed > limit);
            assert_eq!(limit, caps.max_storage_buffer_binding_size);
        }
        e => panic!("unexpected {e}"),
    }
}

/// The error of planning `p` with forced tiles.
fn forced_tiles_err(p: &Attention, caps: &DeviceCaps, tiles: Tiles) -> FlashError {
    plan_with(
        p,
        caps,
        PlanOptions {
            tiles: Some(tiles),
            ..Default::default()
        },
    )
    .unwrap_err()
}

#[test]
fn limits_of_a_webgpu_default_device() {
    let caps = DeviceCaps::webgpu_defaults();
    // Tiles that need more than 16 KiB of workgroup memory are refused with the numbers.
    let big = Tiles {
        block_m: 64,
        block_n: 64,
        threads_x: 16,
        threads_y: 16,
    };
    let err = forced_tiles_err(&Attention::new(1, 1, 1, 64, 64, 128), &caps, big);
    assert!(
        matches!(err, FlashError::DeviceLimit { limit: 16384, .. }),
        "{err}"
    );
    let many = Tiles {
        block_m: 32,
        block_n: 32,
        threads_x: 32,
        threads_y: 16,
    };
    let err = forced_tiles_err(&Attention::new(1, 1, 1, 64, 64, 4), &caps, many);
    assert!(
        matches!(
            err,
            FlashError::DeviceLimit {
                needed: 512,
                limit: 256,
                ..
            }
        ),
        "{err}"
    );
    let ragged = Tiles {
        block_m: 10,
        block_n: 8,
        threads_x: 4,
        threads_y: 4,
    };
    let err = forced_tiles_err(&Attention::new(1, 1, 1, 64, 64, 4), &caps, ragged);
    assert!(
        matches!(err, FlashError::BadOption { what: "tiles", .. }),
        "{err}"
    );
    // Too many query heads for one dispatch dimension.
    let err = plan(&Attention::new(1, 70000, 1, 4, 4, 4), &caps).unwrap_err();
    assert!(
        matches!(
            err,
            FlashError::DeviceLimit {
                needed: 70000,
                limit: 65535,
                ..
            }
        ),
        "{err}"
    );
}

#[test]
fn host_slices_of_the_wrong_length() {
    let p = Attention::new(1, 2, 1, 8, 8, 8);
    let (q, kv) = (vec![0.5; 128], vec![0.5; 64]);
    let err = ctx().run_blocking(&p, &q[..100], &kv, &kv).unwrap_err();
    assert_eq!(
        err,
        FlashError::ShapeMismatch {
            tensor: "q",
            expected: 128,
            got: 100
        }
    );
}

#[test]
fn buffers_that_do_not_fit() {
    let p = Attention::new(1, 2, 1, 8, 8, 8)
        .dtype(DType::F32)
        .with_lse(true);
    let plan = ctx().plan(&p).unwrap();
    let (q, kv, o, lse) = (storage(512), storage(256), storage(512), storage(64));
    let small = storage(500);
    let mut enc = ctx().device().create_command_encoder(&Default::default());
    let bufs = |q, out, lse| AttentionBuffers {
        q,
        k: (&kv).into(),
        v: (&kv).into(),
        out,
        lse,
        alibi_slopes: None,
        sinks: None,
        mask: None,
    };
    let mut fail = |q, out, lse| plan.encode(&mut enc, &bufs(q, out, lse)).unwrap_err();
    // Too small, counting the offset.
    let err = fail((&small).into(), (&o).into(), Some((&lse).into()));
    assert_eq!(
        err,
        FlashError::BufferTooSmall {
            tensor: "q",
            needed: 512,
            got: 500
        }
    );
    let err = fail(
        TensorBuffer {
            buffer: &q,
            offset: 16,
        },
        (&o).into(),
        Some((&lse).into()),
    );
    assert_eq!(
        err,
        FlashError::BufferTooSmall {
            tensor: "q",
            needed: 528,
            got: 512
        }
    );
    // Offsets must be multiples of 4 elements.
    let err = fail(
        TensorBuffer {
            buffer: &q,
            offset: 4,
        },
        (&o).into(),
        Some((&lse).into()),
    );
    assert!(
        matches!(
            err,
            FlashError::BadLayout {
                tensor: "q",
                what: "byte offset",
                got: 4,
                ..
            }
        ),
        "{err}"
    );
    // LSE asked for but not given, and an LSE buffer too small.
    let err = fail((&q).into(), (&o).into(), None);
    assert!(
        matches!(err, FlashError::BadOption { what: "lse", .. }),
        "{err}"
    );
    let tiny = storage(32);
    let err = fail((&q).into(), (&o).into(), Some((&tiny).into()));
    assert_eq!(
        err,
        FlashError::BufferTooSmall {
            tensor: "lse",
            needed: 64,
            got: 32
        }
    );
    // The output may not share a buffer with an input.
    let err = fail((&q).into(), (&q).into(), Some((&lse).into()));
    assert!(
        matches!(err, FlashError::BadLayout { tensor: "out", .. }),
        "{err}"
    );
    // Nor may the LSE.
    let err = fail((&q).into(), (&o).into(), Some((&q).into()));
    assert!(
        matches!(
            err,
            FlashError::BadLayout {
                tensor: "lse",
                what: "buffer",
                ..
            }
        ),
        "{err}"
    );
    // A buffer without STORAGE usage.
    let uniform = ctx().device().create_buffer(&wgpu::BufferDescriptor {
        label: None,
        size: 512,
        usage: wgpu::BufferUsages::UNIFORM,
        mapped_at_creation: false,
    });
    let err = fail((&uniform).into(), (&o).into(), Some((&lse).into()));
    assert!(
        matches!(
            err,
            FlashError::BadLayout {
                tensor: "q",
                what: "buffer usage bits",
                ..
            }
        ),
        "{err}"
    );
    // And the good call works.
    plan.encode(
        &mut enc,
        &bufs((&q).into(), (&o).into(), Some((&lse).into())),
    )
    .unwrap();
    ctx().queue().submit([enc.finish()]);
}

#[test]
fn errors_name_their_numbers() {
    let err = FlashError::DeviceLimit {
        what: "max_storage_buffer_binding_size",
        needed: 300,
        limit: 200,
    };
    assert_eq!(
        err.to_string(),
        "max_storage_buffer_binding_size: the problem needs 300, the device allows 200"
    );
}
