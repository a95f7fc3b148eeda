//! Library tests in a browser, on its WebGPU adapter, through wasm-bindgen-test:
//! `cargo test --target wasm32-unknown-unknown --test web` with wasm-bindgen-test-runner as the
//! target's runner (`scripts/test-web.sh` sets it up and runs headless Chromium).
//!
//! Nothing here may block: every readback awaits. Shapes are small because CI's browser renders
//! WebGPU on the CPU (SwiftShader). On native targets this file compiles to nothing.
#![cfg(target_arch = "wasm32")]

mod common;

use wasm_bindgen_test::{console_log, wasm_bindgen_test, wasm_bindgen_test_configure};
use wgpu::util::DeviceExt;
use wgpu_flash_attn::context::{from_dtype_bytes, to_dtype_bytes};
use wgpu_flash_attn::kernels::materialized::Materialized;
use wgpu_flash_attn::{
    reference, Attention, AttentionBuffers, DType, FlashContext, FlashError, Kernel, PlanOptions,
    Storage, Tensor, Tiles,
};

wasm_bindgen_test_configure!(run_in_browser);

/// A context on the browser's adapter, created the way the crate creates its own (the adapter's
/// limits, the features it offers). No adapter is a failure, never a skip.
async fn ctx() -> FlashContext {
    let ctx = FlashContext::new_default()
        .await
        .unwrap_or_else(|e| panic!("the browser offers no WebGPU adapter: {e}"));
    let c = ctx.caps();
    console_log!(
        "adapter: {:?} | {} | f16 {} | timestamps {} | subgroups {:?} | workgroup storage {} B",
        c.name,
        c.backend,
        c.shader_f16,
        c.timestamp_query,
        c.subgroup_sizes,
        c.max_workgroup_storage_bytes
    );
    ctx
}

#[wasm_bindgen_test]
async fn plan_follows_the_browser_device() {
    let ctx = ctx().await;
    let caps = ctx.caps().clone();
    assert_eq!(caps.backend, "BrowserWebGpu");
    let limits = ctx.device().limits();
    assert_eq!(
        caps.max_workgroup_storage_bytes,
        limits.max_compute_workgroup_storage_size
    );
    for (dtype, d) in [(DType::F32, 64), (DType::F32, 128), (DType::F16, 256)] {
        let p = Attention::new(1, 2, 2, 100, 100, d).dtype(dtype);
        let plan = ctx.plan(&p).expect("plans").plan().clone();
        // wgpu's web backend exposes neither subgroups nor cooperative matrices: portable tier.
        assert_eq!(plan.kernel, Kernel::ForwardPortable, "{p:?}");
        assert!(
            plan.workgroup_bytes <= limits.max_compute_workgroup_storage_size,
            "{p:?}: {} bytes of workgroup memory, the device allows {}",
            plan.workgroup_bytes,
            limits.max_compute_workgroup_storage_size
        );
        assert!(plan.tiles.threads() <= limits.max_compute_invocations_per_workgroup);
        if dtype == DType::F16 {
            let want = if caps.shader_f16 {
                Storage::F16
            } else {
                Storage::F16Packed
            };
            assert_eq!(plan.storage, want, "shader-f16 {}", caps.shader_f16);
        }
    }
    // A tile larger than the device's workgroup memory is refused with the device's number.
    let big = Tiles {
        block_m: 64,
        block_n: 64,
        threads_x: 16,
        threads_y: 16,
    };
    let p = Attention::new(1, 1, 1, 64, 64, 256);
    match ctx.plan_with(
        &p,
        PlanOptions {
            tiles: Some(big),
            ..Default::default()
        },
    ) {
        Err(FlashError::DeviceLimit { limit, .. }) => {
            assert_eq!(limit, limits.max_compute_workgroup_storage_size as u64)
        }
        other => panic!("expected a device-limit error, got {other:?}"),
    }
    // A tier the device lacks is an error, not a silent fallback, when forced.
    let forced = PlanOptions {
        kernel: Some(Kernel::ForwardSubgroup),
        ..Default::default()
    };
    assert!(ctx.plan_with(&p, forced).is_err());
}

#[wasm_bindgen_test]
async fn device_with_webgpu_default_limits_gets_tiles_that_fit_them() {
    // A caller's device made with WebGPU's defaults (16 KiB of workgroup memory), not the
    // adapter's limits: the plan must follow the device, and the kernel must still be right.
    let instance = wgpu::Instance::new(wgpu::InstanceDescriptor::new_without_display_handle());
    let adapter = instance
        .request_adapter(&Default::default())
        .await
        .expect("the browser offers a WebGPU adapter");
    let (device, queue) = adapter
        .request_device(&wgpu::DeviceDescriptor {
            required_limits: wgpu::Limits::default(),
            ..Default::default()
        })
        .await
        .expect("a device with the default limits");
    let ctx = FlashContext::new(device, queue, &adapter).expect("wraps the device");
    let default_bytes = wgpu::Limits::default().max_compute_workgroup_storage_size;
    assert_eq!(ctx.caps().max_workgroup_storage_bytes, default_bytes);
    assert!(!ctx.caps().shader_f16, "no features were requested");
    let p = Attention::new(1, 2, 1, 21, 37, 128)
        .causal(true)
        .with_lse(true);
    let plan = ctx.plan(&p).expect("plans").plan().clone();
    assert!(
        plan.workgroup_bytes <= default_bytes,
        "{} bytes of workgroup memory on a device that allows {default_bytes}",
        plan.workgroup_bytes
    );
    common::check_async(&ctx, &p, PlanOptions::default(), 7, 1.0).await;
    let f16 = p.clone().dtype(DType::F16);
    assert_eq!(
        ctx.plan(&f16).expect("plans").plan().storage,
        Storage::F16Packed
    );
    common::check_async(&ctx, &f16, PlanOptions::default(), 8, 1.0).await;
}

#[wasm_bindgen_test]
async fn forward_f32_causal_gqa_against_the_oracle() {
    let ctx = ctx().await;
    let p = Attention::new(1, 4, 2, 33, 47, 32)
        .causal(true)
        .with_lse(true);
    common::check_async(&ctx, &p, PlanOptions::default(), 1, 1.0).await;
}

#[wasm_bindgen_test]
async fn forward_f16_against_the_oracle() {
    // Packed u32 pairs where the browser lacks shader-f16 (SwiftShader), native f16 elsewhere.
    let ctx = ctx().await;
    let p = Attention::new(2, 2, 1, 17, 40, 64)
        .dtype(DType::F16)
        .with_lse(true);
    common::check_async(&ctx, &p, PlanOptions::default(), 2, 1.0).await;
    let packed = PlanOptions {
        force_packed_f16: true,
        ..Default::default()
    };
    common::check_async(&ctx, &p, packed, 3, 1.0).await;
}

#[wasm_bindgen_test]
async fn forward_bf16_window_softcap_against_the_oracle() {
    let ctx = ctx().await;
    let p = Attention::new(1, 2, 2, 29, 29, 16)
        .dtype(DType::BF16)
        .window_size(5, 3)
        .softcap(2.0)
        .with_lse(true);
    common::check_async(&ctx, &p, PlanOptions::default(), 4, 2.0).await;
}

#[wasm_bindgen_test]
async fn run_reads_back_without_blocking() {
    // The convenience path: upload, run and map for reading, all awaited.
    let ctx = ctx().await;
    let p = Attention::new(1, 2, 2, 9, 21, 8)
        .causal(true)
        .with_lse(true);
    let inputs = common::Inputs::new(&p, 5, 1.0);
    let got = ctx
        .run(&p, &inputs.q, &inputs.k, &inputs.v)
        .await
        .expect("runs");
    let want = reference::attention(&p, &inputs.q, &inputs.k, &inputs.v);
    let err = got
        .out
        .iter()
        .zip(&want.out)
        .map(|(g, w)| (*g as f64 - w).abs())
        .fold(0.0, f64::max);
    assert!(got.out.iter().all(|x| x.is_finite()));
    assert!(err < 1e-5, "max error {err:e}");
    let lse = got.lse.expect("lse asked for");
    for (g, w) in lse.iter().zip(&want.lse) {
        assert!((*g as f64 - w).abs() < 1e-5, "lse {g} vs {w}");
    }
}

#[wasm_bindgen_test]
async fn materialized_baseline_against_the_oracle() {
    let ctx = ctx().await;
    let p = Attention::new(1, 2, 2, 70, 65, 32).causal(true);
    let inputs = common::Inputs::new(&p, 6, 1.0);
    let base = Materialized::new(&ctx, &p).expect("the baseline fits");
    let device = ctx.device();
    let upload = |data: &[f32]| {
        device.create_buffer_init(&wgpu::util::BufferInitDescriptor {
            label: None,
            contents: &to_dtype_bytes(data, p.dtype),
            usage: wgpu::BufferUsages::STORAGE,
        })
    };
    let (q, k, v) = (upload(&inputs.q), upload(&inputs.k), upload(&inputs.v));
    let nan = vec![f32::NAN; p.span_of(Tensor::O) as usize];
    let out = device.create_buffer_init(&wgpu::util::BufferInitDescriptor {
        label: None,
        contents: &to_dtype_bytes(&nan, p.dtype),
        usage: wgpu::BufferUsages::STORAGE | wgpu::BufferUsages::COPY_SRC,
    });
    let read = device.create_buffer(&wgpu::BufferDescriptor {
        label: None,
        size: out.size(),
        usage: wgpu::BufferUsages::MAP_READ | wgpu::BufferUsages::COPY_DST,
        mapped_at_creation: false,
    });
    let mut encoder = device.create_command_encoder(&Default::default());
    base.encode(&mut encoder, &AttentionBuffers::new(&q, &k, &v, &out), None)
        .expect("encodes");
    encoder.copy_buffer_to_buffer(&out, 0, &read, 0, out.size());
    ctx.queue().submit([encoder.finish()]);
    let got = from_dtype_bytes(&ctx.read(&read).await.expect("reads back"), p.dtype);
    let want = reference::attention(&p, &inputs.q, &inputs.k, &inputs.v);
    let mut err = 0.0f64;
    for (i, (g, w)) in got.iter().zip(&want.out).enumerate() {
        assert!(g.is_finite(), "element {i} is {g}");
        err = err.max((*g as f64 - w).abs());
    }
    console_log!("materialized max error {err:.2e}");
    assert!(err < 2e-5, "max error {err:e}");
}
