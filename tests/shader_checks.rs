//! `WGPU_FLASH_ATTN_SHADER_CHECKS=1` builds the kernels with wgpu's index clamps (for debugging):
//! the results must not change. A test binary of its own, so that the variable is set before any
//! pipeline of this process is built.
// Native only: these tests block on the GPU (the browser's are in tests/web.rs).
#![cfg(not(target_arch = "wasm32"))]

mod common;
#[path = "common/kv.rs"]
mod kv;

use common::{check, ctx};
use wgpu_flash_attn::kvcache::{self, DecodeKernel};
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
    // The KV-cache kernels, built by the same pipeline builder: a split GQA decode over
    // shuffled 16-token pages and an appended causal chunked prefill, with the plan's kernel and
    // with each other kernel this device runs, against the f64 oracle.
    let (num_pages, table) = kv::shuffled_table(2, 5, 3, 41);
    let steps = [
        KvCacheAttention::decode(8, 2, 64, 1, &[70, 9], 80)
            .dtype(DType::F16)
            .paged(16, num_pages, &table)
            .num_splits(3)
            .with_lse(true),
        KvCacheAttention::new(4, 2, 32, &[0, 1, 20], &[30, 5])
            .contiguous(48)
            .causal(true)
            .append_new_kv(true),
    ];
    for (n, step) in steps.iter().enumerate() {
        let planned = kvcache::plan(step, ctx().caps()).unwrap().tiles.kernel;
        kv::check(step, 7100 + n as u64);
        let subgroup = kvcache::default_tiles(step, DecodeKernel::Subgroup, ctx().caps());
        assert_eq!(
            subgroup.is_ok(),
            ctx().caps().subgroup_sizes.is_some(),
            "{subgroup:?}"
        );
        let portable = kvcache::default_tiles(step, DecodeKernel::Portable, ctx().caps());
        for tiles in [portable.unwrap()].into_iter().chain(subgroup.ok()) {
            if tiles.kernel != planned {
                kv::check_on(ctx(), step, 7200 + n as u64, Some(tiles));
            }
        }
    }
}
