//! `WGPU_FLASH_ATTN_SHADER_DIR`: a developer's copy of a shader file stands in for the crate's own,
//! on the adapter WGPU_BACKEND selects. The folder is read once per process, before the first
//! kernel is built, so this test has a binary of its own.
// Native only: these tests block on the GPU (the browser's are in tests/web.rs).
#![cfg(not(target_arch = "wasm32"))]

mod common;

use common::{ctx, run_gpu, Inputs};
use wgpu_flash_attn::{kernels, reference, Attention, Kernel, PlanOptions};

#[test]
fn a_shader_file_in_the_folder_replaces_the_built_in_one() {
    let dir = std::env::temp_dir().join(format!("wgpu-flash-attn-shaders-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    // The portable forward kernel, changed to write twice its output.
    let store = "pack4(acc[i * RD4 + c] * inv)";
    assert!(
        kernels::forward::SOURCE.contains(store),
        "the output store moved"
    );
    let doubled = kernels::forward::SOURCE.replace(store, "pack4(acc[i * RD4 + c] * (2.0 * inv))");
    std::fs::write(dir.join("flash_fwd.wgsl"), doubled).unwrap();
    std::env::set_var(kernels::SHADER_DIR_VAR, &dir);

    let p = Attention::new(1, 2, 2, 20, 30, 16).causal(true);
    let options = PlanOptions {
        kernel: Some(Kernel::ForwardPortable),
        ..Default::default()
    };
    let plan = ctx().plan_with(&p, options).unwrap();
    assert!(kernels::forward::shader_source(plan.plan()).contains("(2.0 * inv)"));
    let inputs = Inputs::new(&p, 7, 1.0);
    let got = run_gpu(ctx(), &p, options, &inputs);
    let want = reference::attention(&p, &inputs.q, &inputs.k, &inputs.v);
    assert_eq!(got.out.len(), want.out.len());
    for (g, w) in got.out.iter().zip(&want.out) {
        assert!(
            (f64::from(*g) - 2.0 * w).abs() < 1e-4,
            "got {g}, want twice {w}: the folder's file did not run"
        );
    }
    std::fs::remove_dir_all(&dir).unwrap();
}
