//! Attention on random data on the default adapter, checked against the f64 oracle.
//!
//! `cargo run --release --example basic`

use wgpu_flash_attn::{reference, Attention, DType, FlashContext};

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let ctx = FlashContext::default_blocking()?;
    let caps = ctx.caps();
    println!("adapter: {} ({}, {})", caps.name, caps.backend, caps.driver);
    for (dtype, causal) in [(DType::F32, false), (DType::F32, true), (DType::F16, true)] {
        let problem = Attention::new(2, 4, 2, 200, 333, 64)
            .dtype(dtype)
            .causal(causal)
            .with_lse(true);
        let q = random(problem.len_of(wgpu_flash_attn::Tensor::Q), 1);
        let k = random(problem.len_of(wgpu_flash_attn::Tensor::K), 2);
        let v = random(problem.len_of(wgpu_flash_attn::Tensor::V), 3);
        let plan = ctx.plan(&problem)?;
        let got = ctx.run_blocking(&problem, &q, &k, &v)?;
        let want = reference::attention(&problem, &q, &k, &v);
        let max_err = got
            .out
            .iter()
            .zip(&want.out)
            .map(|(g, w)| (*g as f64 - w).abs())
            .fold(0.0, f64::max);
        println!(
            "{:>3} causal={:<5} tiles {:?} storage {:?}: max |O - oracle| = {:.2e}",
            dtype.name(),
            causal,
            plan.plan().tiles,
            plan.plan().storage,
            max_err
        );
    }
    Ok(())
}

/// Deterministic values in [-1, 1) from a small xorshift generator (keeps the example dependency-free).
fn random(n: u64, seed: u64) -> Vec<f32> {
    let mut s = seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1;
    (0..n)
        .map(|_| {
            s ^= s << 13;
            s ^= s >> 7;
            s ^= s << 17;
            (s >> 40) as f32 / (1u64 << 23) as f32 - 1.0
        })
        .collect()
}
