//! The KV-cache test machinery shared by `tests/kvcache.rs` and `tests/shader_checks.rs`: seeded
//! steps with NaN-poisoned cache slots, running a step on the GPU, and its f64 oracle.
#![allow(dead_code)]

use crate::common::{
    ctx, guarded_buffer, naive_lowp, random, read_guarded, round_to, Inputs, LEAD,
};
use wgpu_flash_attn::context::{from_dtype_bytes, to_dtype_bytes};
use wgpu_flash_attn::kvcache::{self, CacheLayout};
use wgpu_flash_attn::{
    reference, Attention, DType, FlashContext, KvCacheAttention, KvCacheBuffers, RotaryAngles,
    RotaryEmbedding, RotaryStyle, TensorBuffer,
};

/// Host data of one step.
pub struct Step {
    pub q: Vec<f32>,
    pub k_cache: Vec<f32>,
    pub v_cache: Vec<f32>,
    pub k_new: Vec<f32>,
    pub v_new: Vec<f32>,
    pub table: Vec<f32>,
}

/// Element index of (sequence b, token t, kv head h, 0) in a cache.
pub fn cache_at(p: &KvCacheAttention, b: u32, t: u32, h: u32) -> usize {
    let (hkv, d) = (p.heads_kv as usize, p.head_dim as usize);
    let row = match &p.layout {
        CacheLayout::Contiguous { capacity } => b as usize * *capacity as usize + t as usize,
        CacheLayout::Paged {
            page_size,
            block_table,
            ..
        } => {
            let page = block_table[(b * p.pages_per_seq() + t / page_size) as usize];
            page as usize * *page_size as usize + (t % page_size) as usize
        }
    };
    (row * hkv + h as usize) * d
}

pub fn theta_of(r: &RotaryEmbedding) -> f64 {
    match r.angles {
        RotaryAngles::Theta(t) => t as f64,
        RotaryAngles::Table { .. } => TABLE_THETA,
    }
}

const TABLE_THETA: f64 = 500.0;

/// cos/sin tables [positions][dim / 2], cos first, from TABLE_THETA.
pub fn rotary_table(r: &RotaryEmbedding, positions: u32) -> Vec<f32> {
    let half = r.dim as usize / 2;
    let angle = |p: usize, i: usize| p as f64 * TABLE_THETA.powf(-(2.0 * i as f64) / r.dim as f64);
    let mut t: Vec<f32> = (0..positions as usize * half)
        .map(|k| angle(k / half, k % half).cos() as f32)
        .collect();
    t.extend((0..positions as usize * half).map(|k| angle(k / half, k % half).sin() as f32));
    t
}

/// Rotates one head row at position `pos` by the definition, in f64 (or in f32 as a GPU computes
/// the angles, when `f32_angles`), reading the table when the embedding has one.
pub fn rope(r: &RotaryEmbedding, table: &[f32], x: &[f64], pos: u32, f32_angles: bool) -> Vec<f64> {
    let half = r.dim as usize / 2;
    let cs = |i: usize| -> (f64, f64) {
        match r.angles {
            RotaryAngles::Table { positions } => {
                let at = pos as usize * half + i;
                (
                    table[at] as f64,
                    table[positions as usize * half + at] as f64,
                )
            }
            RotaryAngles::Theta(theta) if f32_angles => {
                let inv = (-(2.0 * i as f32) / r.dim as f32 * theta.log2()).exp2();
                let a = pos as f32 * inv;
                (a.cos() as f64, a.sin() as f64)
            }
            _ => {
                let a = pos as f64 * theta_of(r).powf(-(2.0 * i as f64) / r.dim as f64);
                (a.cos(), a.sin())
            }
        }
    };
    let mut out = x.to_vec();
    for i in 0..half {
        let (a, b) = match r.style {
            RotaryStyle::Interleaved => (2 * i, 2 * i + 1),
            RotaryStyle::HalfSplit => (i, i + half),
        };
        let (c, s) = cs(i);
        out[a] = x[a] * c - x[b] * s;
        out[b] = x[a] * s + x[b] * c;
    }
    out
}

pub fn make_step(p: &KvCacheAttention, seed: u64) -> Step {
    let (hq, hkv, d) = (p.heads_q as u64, p.heads_kv as u64, p.head_dim as u64);
    let total_q = p.total_q() as u64;
    let mut k_cache = vec![f32::NAN; p.cache_len() as usize];
    let mut v_cache = vec![f32::NAN; p.cache_len() as usize];
    // Values by logical position (sequence, token, head), so that any layout holds the same data.
    let longest = p.cached.iter().copied().max().unwrap_or(0) as u64;
    let logical = p.batch() as u64 * longest * hkv * d;
    let fill_k = random(logical, seed + 10, 1.0);
    let fill_v = random(logical, seed + 11, 1.0);
    for b in 0..p.batch() {
        for t in 0..p.cached[b as usize] {
            for h in 0..p.heads_kv {
                let at = cache_at(p, b, t, h);
                let from = (((b as u64 * longest + t as u64) * hkv + h as u64) * d) as usize;
                let n = d as usize;
                k_cache[at..at + n].copy_from_slice(&fill_k[from..from + n]);
                v_cache[at..at + n].copy_from_slice(&fill_v[from..from + n]);
            }
        }
    }
    let table = match p.rotary {
        Some(
            r @ RotaryEmbedding {
                angles: RotaryAngles::Table { positions },
                ..
            },
        ) => rotary_table(&r, positions),
        _ => Vec::new(),
    };
    Step {
        q: random(total_q * hq * d, seed, 1.5),
        k_cache,
        v_cache,
        k_new: random(p.new_kv_len(), seed + 12, 1.5),
        v_new: random(p.new_kv_len(), seed + 13, 1.0),
        table,
    }
}

/// One sequence of the step as a plain attention problem, with its inputs: (problem, inputs for
/// the oracle (exact values, read as they are), inputs for the storage-precision yardstick).
pub fn sequence(p: &KvCacheAttention, s: &Step, b: u32) -> (Attention, Inputs, Inputs) {
    let (hq, hkv, d) = (p.heads_q as usize, p.heads_kv as usize, p.head_dim as usize);
    let (sq, sk) = (p.seq_q(b), p.kv_len(b));
    let prob = Attention::new(1, p.heads_q, p.heads_kv, sq.max(1), sk.max(1), p.head_dim)
        .causal(p.causal)
        .softmax_scale(p.scale())
        .dtype(p.dtype)
        .allow_f16_products(p.allow_f16_products)
        .with_lse(true);
    let rd = |x: f32| round_to(p.dtype, x);
    let q0 = p.cu_seqlens_q[b as usize] as usize;
    let cached = p.cached[b as usize];
    // exact: f64 rotation of the stored (rounded) inputs; lowp: f32 angles, result rounded again.
    let mut exact = Inputs::new(&prob, 0, 0.0);
    let mut lowp = Inputs::new(&prob, 0, 0.0);
    let row = |x: &[f32]| -> Vec<f64> { x.iter().map(|&v| rd(v) as f64).collect() };
    let rotate = |x: Vec<f64>, pos: u32, f32_angles: bool| match &p.rotary {
        Some(r) => rope(r, &s.table, &x, pos, f32_angles),
        None => x,
    };
    for i in 0..sq as usize {
        let pos = sk - sq + i as u32;
        for h in 0..hq {
            let src = &s.q[((q0 + i) * hq + h) * d..][..d];
            let at = (i * hq + h) * d;
            let e = rotate(row(src), pos, false);
            let l = rotate(row(src), pos, true);
            for c in 0..d {
                exact.q[at + c] = e[c] as f32;
                lowp.q[at + c] = rd(l[c] as f32);
            }
        }
    }
    for j in 0..sk {
        for h in 0..hkv {
            let at = (j as usize * hkv + h) * d;
            let (ek, lk, v) = if j < cached {
                let c = cache_at(p, b, j, h as u32);
                let k = row(&s.k_cache[c..c + d]);
                (k.clone(), k, row(&s.v_cache[c..c + d]))
            } else {
                let t = q0 + (j - cached) as usize;
                let src = (t * hkv + h) * d;
                let k = row(&s.k_new[src..src + d]);
                (
                    rotate(k.clone(), j, false),
                    rotate(k, j, true),
                    row(&s.v_new[src..src + d]),
                )
            };
            for c in 0..d {
                exact.k[at + c] = ek[c] as f32;
                lowp.k[at + c] = rd(lk[c] as f32);
                exact.v[at + c] = v[c] as f32;
                lowp.v[at + c] = v[c] as f32;
            }
        }
    }
    (prob, exact, lowp)
}

pub struct GpuStep {
    pub out: Vec<f32>,
    pub lse: Vec<f32>,
    pub k_cache: Vec<f32>,
    pub v_cache: Vec<f32>,
    pub splits: u32,
}

pub fn run_step_on(
    ctx: &FlashContext,
    p: &KvCacheAttention,
    s: &Step,
    tiles: Option<kvcache::DecodeTiles>,
) -> GpuStep {
    let plan = ctx
        .plan_kv_cache_with(p, tiles)
        .unwrap_or_else(|e| panic!("plan failed for {p:?} ({tiles:?}): {e}"));
    let up = |label, x: &[f32]| guarded_buffer(ctx, label, &to_dtype_bytes(x, p.dtype));
    let q = up("q", &s.q);
    let k_cache = up("k_cache", &s.k_cache);
    let v_cache = up("v_cache", &s.v_cache);
    let k_new = up("k_new", &s.k_new);
    let v_new = up("v_new", &s.v_new);
    let out = up("out", &vec![f32::NAN; p.q_len() as usize]);
    let lse = guarded_buffer(
        ctx,
        "lse",
        bytemuck::cast_slice(&vec![f32::NAN; p.lse_len() as usize]),
    );
    let table = guarded_buffer(ctx, "rotary table", bytemuck::cast_slice(&s.table));
    let at = |buffer| TensorBuffer {
        buffer,
        offset: LEAD,
    };
    let mut buffers = KvCacheBuffers::new(at(&q), at(&k_cache), at(&v_cache), at(&out));
    if p.with_lse {
        buffers = buffers.lse(at(&lse));
    }
    if p.append_new_kv {
        buffers = buffers.new_kv(at(&k_new), at(&v_new));
    }
    if !s.table.is_empty() {
        buffers = buffers.rotary_table(at(&table));
    }
    let mut enc = ctx.device().create_command_encoder(&Default::default());
    plan.encode(&mut enc, &buffers).expect("encode");
    ctx.queue().submit([enc.finish()]);
    let e = p.dtype.size();
    let read = |b, n: u64| from_dtype_bytes(&read_guarded(ctx, b, n * e), p.dtype);
    for (b, n) in [
        (&q, p.q_len()),
        (&k_new, p.new_kv_len()),
        (&v_new, p.new_kv_len()),
    ] {
        read(b, n);
    }
    GpuStep {
        out: read(&out, p.q_len()),
        lse: bytemuck::pod_collect_to_vec(&read_guarded(ctx, &lse, p.lse_len() * 4)),
        k_cache: read(&k_cache, p.cache_len()),
        v_cache: read(&v_cache, p.cache_len()),
        splits: plan.plan().splits,
    }
}

/// Runs a step and checks O and LSE against the oracle (2x-naive rule), the appended cache rows
/// against the rotated new keys, and every other cache element against its old bits.
pub fn check(p: &KvCacheAttention, seed: u64) -> GpuStep {
    check_on(ctx(), p, seed, None)
}

pub fn check_on(
    ctx: &FlashContext,
    p: &KvCacheAttention,
    seed: u64,
    tiles: Option<kvcache::DecodeTiles>,
) -> GpuStep {
    let s = make_step(p, seed);
    let got = run_step_on(ctx, p, &s, tiles);
    let (hq, d) = (p.heads_q as usize, p.head_dim as usize);
    let mut kernel_err = 0.0f64;
    let mut naive_err = 0.0f64;
    // f32 in f32 throughout, or f16 somewhere (storage, or the products of a prefill chunk).
    let exact = p.dtype == DType::F32 && !p.allow_f16_products;
    let lse_tol = |w: f64| 1e-5 * w.abs().max(1.0) + if exact { 0.0 } else { 2e-3 };
    for b in 0..p.batch() {
        let (sq, sk) = (p.seq_q(b) as usize, p.kv_len(b));
        if sq == 0 {
            continue;
        }
        let q0 = p.cu_seqlens_q[b as usize] as usize;
        let rows = q0 * hq..(q0 + sq) * hq;
        if sk == 0 {
            // No key at all: O = 0, LSE = -inf.
            assert!(
                got.out[rows.start * d..rows.end * d]
                    .iter()
                    .all(|&x| x == 0.0),
                "{p:?}: seq {b} without keys"
            );
            if p.with_lse {
                assert!(
                    got.lse[rows].iter().all(|&x| x == f32::NEG_INFINITY),
                    "{p:?}: seq {b} LSE"
                );
            }
            continue;
        }
        let (prob, exact, lowp) = sequence(p, &s, b);
        let want = reference::attention_full(&prob, exact.host(), |x| x as f64);
        let naive = naive_lowp(&prob, &lowp);
        let gpu = &got.out[q0 * hq * d..(q0 + sq) * hq * d];
        for (i, ((&g, w), n)) in gpu.iter().zip(&want.out).zip(&naive).enumerate() {
            assert!(g.is_finite(), "{p:?}: seq {b} output {i} is {g}");
            kernel_err = kernel_err.max((g as f64 - w).abs());
            naive_err = naive_err.max((*n as f64 - w).abs());
        }
        if p.with_lse {
            for i in 0..sq {
                for h in 0..hq {
                    let g = got.lse[(q0 + i) * hq + h];
                    let w = want.lse[h * sq + i];
                    if w == f64::NEG_INFINITY {
                        assert_eq!(
                            g,
                            f32::NEG_INFINITY,
                            "{p:?}: seq {b} row {i} head {h} sees no key"
                        );
                    } else {
                        assert!(
                            (g as f64 - w).abs() <= lse_tol(w),
                            "{p:?}: seq {b} row {i} head {h}: lse {g}, want {w}"
                        );
                    }
                }
            }
        }
    }
    let floor = if exact { 1e-6 } else { 1e-4 };
    eprintln!(
        "{} splits {}: kernel err {kernel_err:.3e}, naive {} err {naive_err:.3e}",
        describe(p),
        got.splits,
        p.dtype.name()
    );
    assert!(
        kernel_err <= 2.0 * naive_err + floor,
        "{p:?}: kernel error {kernel_err:.3e} > 2 x naive {naive_err:.3e} + {floor:e}"
    );
    check_cache(p, &s, &got);
    got
}

pub fn check_cache(p: &KvCacheAttention, s: &Step, got: &GpuStep) {
    let (hkv, d) = (p.heads_kv as usize, p.head_dim as usize);
    let rd = |x: f32| round_to(p.dtype, x);
    let mut expected_k: Vec<f32> = s.k_cache.iter().map(|&x| rd(x)).collect();
    let mut expected_v: Vec<f32> = s.v_cache.iter().map(|&x| rd(x)).collect();
    let mut appended = vec![false; expected_k.len()];
    // Rotated keys are rounded once to the storage type. With angles from theta the GPU's exp2
    // and sin/cos are approximate (WGSL allows a few ulp of exp2 and more for sin/cos; NVIDIA's
    // differ from a CPU's by about 2e-7 relative), and the angle error grows with the position.
    let base_tol = if p.dtype == DType::F32 { 2e-5 } else { 4e-3 };
    let mut tol = vec![base_tol; expected_k.len()];
    if p.append_new_kv {
        for b in 0..p.batch() {
            let q0 = p.cu_seqlens_q[b as usize] as usize;
            for i in 0..p.seq_q(b) {
                let pos = p.cached[b as usize] + i;
                for h in 0..hkv {
                    let src = ((q0 + i as usize) * hkv + h) * d;
                    let k: Vec<f64> = s.k_new[src..src + d]
                        .iter()
                        .map(|&x| rd(x) as f64)
                        .collect();
                    let k = match &p.rotary {
                        Some(r) => rope(r, &s.table, &k, pos, false),
                        None => k,
                    };
                    let at = cache_at(p, b, pos, h as u32);
                    let angle_tol = match &p.rotary {
                        Some(r) if matches!(r.angles, RotaryAngles::Theta(_)) => 4e-7 * pos as f32,
                        _ => 0.0,
                    };
                    for c in 0..d {
                        tol[at + c] = base_tol + angle_tol;
                        expected_k[at + c] = k[c] as f32;
                        expected_v[at + c] = rd(s.v_new[src + c]);
                        appended[at + c] = true;
                    }
                }
            }
        }
    }
    for (name, want, have) in [
        ("k", &expected_k, &got.k_cache),
        ("v", &expected_v, &got.v_cache),
    ] {
        for (i, (w, g)) in want.iter().zip(have.iter()).enumerate() {
            if appended[i] {
                assert!(
                    (w - g).abs() <= tol[i] * w.abs().max(1.0),
                    "{p:?}: appended {name}_cache[{i}] = {g}, want {w}"
                );
            } else {
                assert!(
                    w.to_bits() == g.to_bits() || (w.is_nan() && g.is_nan()),
                    "{p:?}: {name}_cache[{i}] changed: {w} -> {g}"
                );
            }
        }
    }
}

pub fn describe(p: &KvCacheAttention) -> String {
    let layout = match &p.layout {
        CacheLayout::Contiguous { capacity } => format!("contiguous {capacity}"),
        CacheLayout::Paged {
            page_size,
            num_pages,
            ..
        } => format!("paged {num_pages}x{page_size}"),
    };
    format!(
        "H{}/{} d{} {} q{:?} cached{:?} {layout}{}{}{}",
        p.heads_q,
        p.heads_kv,
        p.head_dim,
        p.dtype.name(),
        p.cu_seqlens_q,
        p.cached,
        if p.causal { " causal" } else { "" },
        if p.append_new_kv { " append" } else { "" },
        p.rotary.map_or(String::new(), |r| format!(
            " rotary {:?} {} {:?}",
            r.style, r.dim, r.angles
        )),
    )
}

/// A block table for `batch` sequences of `pages_per_seq` pages, pages shuffled (seeded) over a
/// pool with `spare` unused pages.
pub fn shuffled_table(batch: u32, pages_per_seq: u32, spare: u32, seed: u64) -> (u32, Vec<u32>) {
    let num_pages = batch * pages_per_seq + spare;
    let mut pages: Vec<u32> = (0..num_pages).collect();
    let r = random(num_pages as u64, seed, 1.0);
    let mut keyed: Vec<(f32, u32)> = r.into_iter().zip(pages.drain(..)).collect();
    keyed.sort_by(|a, b| a.0.total_cmp(&b.0));
    let table = keyed
        .iter()
        .take((batch * pages_per_seq) as usize)
        .map(|k| k.1)
        .collect();
    (num_pages, table)
}
