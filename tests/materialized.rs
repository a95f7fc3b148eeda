//! The materialized ("standard attention") baseline against the f64 oracle, on the default adapter.
//!
//! No adapter is a failure, not a skip: CI installs a software Vulkan driver (lavapipe).
// Native only: these tests block on the GPU (the browser's are in tests/web.rs).
#![cfg(not(target_arch = "wasm32"))]

use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use wgpu::util::DeviceExt;
use wgpu_flash_attn::context::{from_dtype_bytes, to_dtype_bytes};
use wgpu_flash_attn::kernels::materialized::{self, Materialized, MaterializedOptions};
use wgpu_flash_attn::{
    reference, Attention, AttentionBuffers, DType, FlashContext, FlashError, Storage, Tensor,
    TensorBuffer,
};

fn context() -> FlashContext {
    FlashContext::default_blocking().expect(
        "no GPU adapter: this test needs one (CI installs lavapipe); it fails rather than skips",
    )
}

fn random(n: u64, rng: &mut ChaCha8Rng) -> Vec<f32> {
    (0..n).map(|_| rng.random_range(-1.0f32..1.0)).collect()
}

fn inputs(p: &Attention, seed: u64) -> [Vec<f32>; 3] {
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    [
        random(p.span_of(Tensor::Q), &mut rng),
        random(p.span_of(Tensor::K), &mut rng),
        random(p.span_of(Tensor::V), &mut rng),
    ]
}

/// Runs the baseline once on fresh buffers (O poisoned with NaN first) and reads O back as f32.
/// Q, K and V share one buffer, K and V at offsets that are not multiples of the binding alignment.
fn run(
    ctx: &FlashContext,
    p: &Attention,
    opts: MaterializedOptions,
    qkv: &[Vec<f32>; 3],
) -> Vec<f32> {
    let base = Materialized::new_with(ctx, p, opts).expect("baseline builds");
    let device = ctx.device();
    let unit = 4 * p.dtype.size();
    let mut bytes = Vec::new();
    let mut offsets = [0u64; 3];
    for (i, data) in qkv.iter().enumerate() {
        // Leave one 4-element gap so that no tensor starts on an aligned binding offset.
        bytes.resize(bytes.len() + unit as usize, 0);
        offsets[i] = bytes.len() as u64;
        bytes.extend(to_dtype_bytes(data, p.dtype));
        bytes.resize((bytes.len() as u64).next_multiple_of(unit) as usize, 0);
    }
    let qkv_buf = device.create_buffer_init(&wgpu::util::BufferInitDescriptor {
        label: Some("qkv"),
        contents: &bytes,
        usage: wgpu::BufferUsages::STORAGE,
    });
    let o_bytes = (p.span_of(Tensor::O) * p.dtype.size()).next_multiple_of(4);
    let out = device.create_buffer_init(&wgpu::util::BufferInitDescriptor {
        label: Some("out"),
        contents: &vec![0xffu8; o_bytes as usize],
        usage: wgpu::BufferUsages::STORAGE | wgpu::BufferUsages::COPY_SRC,
    });
    let read = device.create_buffer(&wgpu::BufferDescriptor {
        label: Some("read"),
        size: o_bytes,
        usage: wgpu::BufferUsages::MAP_READ | wgpu::BufferUsages::COPY_DST,
        mapped_at_creation: false,
    });
    let tb = |offset| TensorBuffer {
        buffer: &qkv_buf,
        offset,
    };
    let buffers = AttentionBuffers {
        q: tb(offsets[0]),
        k: tb(offsets[1]),
        v: tb(offsets[2]),
        out: (&out).into(),
        lse: None,
        alibi_slopes: None,
        sinks: None,
        mask: None,
    };
    let mut encoder = device.create_command_encoder(&Default::default());
    base.encode(&mut encoder, &buffers, None).expect("encodes");
    encoder.copy_buffer_to_buffer(&out, 0, &read, 0, o_bytes);
    ctx.queue().submit([encoder.finish()]);
    let got = pollster::block_on(ctx.read(&read)).expect("reads back");
    from_dtype_bytes(&got, p.dtype)
}

fn round_f16(x: f32) -> f64 {
    half::f16::from_f32(x).to_f64()
}

/// Checks the baseline against the oracle. f32: a fixed 2e-5 (inputs in [-1, 1), head_dim <= 128
/// and a few hundred keys keep f32 rounding near 1e-6). f16: the FlashAttention rule, no worse than
/// twice the error of a naive attention in f16 (inputs and output rounded to f16) plus 1e-4.
fn check(ctx: &FlashContext, p: &Attention, opts: MaterializedOptions, seed: u64) -> Vec<f32> {
    let qkv = inputs(p, seed);
    let got = run(ctx, p, opts, &qkv);
    let got = reference::gather(p, Tensor::O, &got);
    let exact = reference::attention(p, &qkv[0], &qkv[1], &qkv[2]).out;
    let tol = match p.dtype {
        DType::F32 => 2e-5,
        DType::F16 | DType::BF16 => {
            let round = |x: f32| match p.dtype {
                DType::BF16 => half::bf16::from_f32(x).to_f64(),
                _ => round_f16(x),
            };
            let rounded = reference::attention_with(p, &qkv[0], &qkv[1], &qkv[2], round).out;
            let naive = rounded
                .iter()
                .zip(&exact)
                .map(|(r, e)| (round(*r as f32) - e).abs())
                .fold(0.0, f64::max);
            2.0 * naive + 1e-4
        }
    };
    assert_eq!(got.len(), exact.len());
    let mut err = 0.0f64;
    for (idx, (g, e)) in got.iter().zip(&exact).enumerate() {
        let d = (*g as f64 - e).abs();
        assert!(d.is_finite(), "{p:?}: element {idx} is {g} (expected {e})");
        err = err.max(d);
    }
    println!(
        "{:?} {} causal={} -> max err {err:.2e} (tol {tol:.2e})",
        (p.batch, p.heads_q, p.heads_kv, p.seq_q, p.seq_kv, p.head_dim),
        p.dtype.name(),
        p.causal
    );
    assert!(err <= tol, "{p:?}: max |O - oracle| = {err:e} > {tol:e}");
    got
}

#[test]
fn f32_plain_and_causal_gqa() {
    let ctx = context();
    let o = MaterializedOptions::default();
    check(&ctx, &Attention::new(1, 2, 2, 37, 37, 16), o, 1);
    check(
        &ctx,
        &Attention::new(2, 4, 2, 70, 130, 64).causal(true),
        o,
        2,
    );
    check(
        &ctx,
        &Attention::new(1, 3, 1, 130, 70, 64).causal(true),
        o,
        3,
    );
    check(&ctx, &Attention::new(1, 1, 1, 1, 1, 8).causal(true), o, 4);
    // head_dim 128: two pv column blocks; 20: a head-dim step that is not a multiple of 16.
    check(&ctx, &Attention::new(1, 2, 1, 65, 65, 128), o, 5);
    check(
        &ctx,
        &Attention::new(2, 3, 3, 65, 17, 20).softmax_scale(0.7),
        o,
        6,
    );
}

#[test]
fn f16_causal_gqa_and_masked_rows() {
    let ctx = context();
    let o = MaterializedOptions::default();
    check(
        &ctx,
        &Attention::new(2, 4, 2, 70, 130, 64)
            .dtype(DType::F16)
            .causal(true),
        o,
        7,
    );
    check(
        &ctx,
        &Attention::new(2, 3, 3, 65, 17, 20).dtype(DType::F16),
        o,
        8,
    );
    // seq_q > seq_kv, causal: queries i < seq_q - seq_kv see no key at all and must give exactly 0.
    let p = Attention::new(1, 2, 1, 100, 40, 32)
        .dtype(DType::F16)
        .causal(true);
    let got = check(&ctx, &p, o, 9);
    let (h, d) = (p.heads_q as usize, p.head_dim as usize);
    for i in 0..60 {
        let row = &got[i * h * d..(i + 1) * h * d];
        assert!(
            row.iter().all(|&x| x == 0.0),
            "fully masked row {i} is not zero: {row:?}"
        );
    }
}

#[test]
fn packed_f16_and_chunks() {
    let ctx = context();
    let packed = MaterializedOptions {
        force_packed_f16: true,
        ..Default::default()
    };
    let p = Attention::new(2, 3, 1, 50, 90, 32)
        .dtype(DType::F16)
        .causal(true);
    check(&ctx, &p, packed, 10);
    // One pair per chunk (6 chunks), then 4 pairs per chunk (a short last chunk).
    let pair = materialized::pair_score_bytes(&p);
    for (pairs, chunks) in [(1, 6), (4, 2)] {
        let opts = MaterializedOptions {
            max_score_bytes: Some(pairs * pair),
            ..Default::default()
        };
        let base = Materialized::new_with(&ctx, &p, opts).unwrap();
        assert_eq!(
            (base.pairs_per_chunk(), base.chunks()),
            (pairs as u32, chunks)
        );
        assert_eq!(base.score_bytes(), pairs * pair);
        check(&ctx, &p.clone().dtype(DType::F32), opts, 11);
        check(&ctx, &p, opts, 12);
    }
    let base = Materialized::new_with(&ctx, &p, packed).unwrap();
    assert_eq!(base.storage(), Storage::F16Packed);
    assert_eq!((base.pairs_per_chunk(), base.chunks()), (6, 1));
}

#[test]
fn cannot_allocate_and_bad_buffers() {
    let ctx = context();
    let p = Attention::new(1, 2, 2, 64, 64, 16);
    let opts = MaterializedOptions {
        max_score_bytes: Some(64 * 64 * 4 - 1),
        ..Default::default()
    };
    match Materialized::new_with(&ctx, &p, opts) {
        Err(FlashError::DeviceLimit { needed, limit, .. }) => {
            assert_eq!((needed, limit), (64 * 64 * 4, 64 * 64 * 4 - 1))
        }
        other => panic!("expected DeviceLimit, got {other:?}"),
    }
    // A sequence whose scores exceed any device's binding: 2^20 x 2^20 f32 is 4 TiB.
    let huge = Attention::new(1, 1, 1, 1 << 20, 1 << 20, 64);
    assert!(matches!(
        Materialized::new(&ctx, &huge),
        Err(FlashError::DeviceLimit { .. })
    ));

    let base = Materialized::new(&ctx, &p.clone().with_lse(true)).unwrap();
    let buf = |size| {
        ctx.device().create_buffer(&wgpu::BufferDescriptor {
            label: None,
            size,
            usage: wgpu::BufferUsages::STORAGE,
            mapped_at_creation: false,
        })
    };
    let full = 64 * 2 * 16 * 4;
    let (q, k, v, o, small) = (buf(full), buf(full), buf(full), buf(full), buf(full - 4));
    let mut encoder = ctx.device().create_command_encoder(&Default::default());
    let mut buffers = AttentionBuffers {
        q: (&q).into(),
        k: (&k).into(),
        v: (&v).into(),
        out: (&small).into(),
        lse: None,
        alibi_slopes: None,
        sinks: None,
        mask: None,
    };
    assert!(matches!(
        base.encode(&mut encoder, &buffers, None),
        Err(FlashError::BufferTooSmall { tensor: "out", .. })
    ));
    buffers.out = (&q).into();
    assert!(matches!(
        base.encode(&mut encoder, &buffers, None),
        Err(FlashError::BadLayout { .. })
    ));
    // with_lse is ignored: no LSE buffer is needed.
    buffers.out = (&o).into();
    base.encode(&mut encoder, &buffers, None).unwrap();
}

#[test]
fn shader_is_valid_wgsl_in_every_variant() {
    let validate = |name: &str, src: &str| {
        let module = naga::front::wgsl::parse_str(src)
            .unwrap_or_else(|e| panic!("{name}: {}", e.emit_to_string(src)));
        naga::valid::Validator::new(
            naga::valid::ValidationFlags::all(),
            naga::valid::Capabilities::all(),
        )
        .validate(&module)
        .unwrap_or_else(|e| panic!("{name}: {e:?}"));
    };
    validate("materialized.wgsl as-is", materialized::SOURCE);
    for storage in [Storage::F32, Storage::F16, Storage::F16Packed] {
        for causal in [false, true] {
            let p = Attention::new(1, 1, 1, 8, 8, 20).causal(causal);
            validate(
                &format!("{storage:?} causal={causal}"),
                &materialized::shader_source(&p, storage),
            );
        }
    }
}
