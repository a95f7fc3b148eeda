//! `WGPU_FLASH_ATTN_SHADER_CHECKS=1` builds the kernels with wgpu's index clamps (for debugging):
//! the results must not change. A test binary of its own, so that the variable is set before any
//! pipeline of this process is built.

mod common;

use common::{check, ctx};
use wgpu_flash_attn::{Attention, DType, KvCacheAttention, PlanOptions};

#[test]
fn kernels_built_with_wgpu_bounds_checks_give_the_same_results() {
    // Set before the first context and pipeline of this process; nothing else reads it here.
    std::env::set_var("WGPU_FLASH_ATTN_SHADER_CHECKS", "1");
    for (n, p) in [
        Attention::new(1, 2, 1, 33, 70, 64)
            .causal(true)
            .with_lse(true),
        Attention::new(2, 2, 2, 40, 40, 32)
            .dtype(DType::F16)
            .window_size(8, 3),
    ]
    .into_iter()
    .enumerate()
    {
        check(&p, PlanOptions::default(), 7000 + n as u64, 2.0);
    }
    // The KV-cache kernels are built by the same pipeline builder: planning builds them.
    let step = KvCacheAttention::decode(4, 2, 64, 1, &[50, 7], 64);
    assert!(ctx().plan_kv_cache(&step).is_ok());
}
