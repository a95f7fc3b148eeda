//! Shared test machinery: one context per test binary, seeded inputs, guarded and poisoned
//! buffers, and FlashAttention's tolerance rule (the kernel's error against f64 may be at most
//! twice the error of a naive attention computed in the kernel's storage precision, plus a floor).
#![allow(dead_code)]

use half::f16;
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use wgpu_flash_attn::context::{from_dtype_bytes, to_dtype_bytes};
use wgpu_flash_attn::{
    reference, AlibiSlopes, Attention, AttentionBuffers, DType, FlashContext, HostInputs, MaskKind,
    PlanOptions, Tensor, TensorBuffer,
};

/// The adapter of this run (WGPU_BACKEND picks it). No adapter is a failure, never a skip.
#[cfg(not(target_arch = "wasm32"))]
pub fn ctx() -> &'static FlashContext {
    use std::sync::OnceLock;
    static CTX: OnceLock<FlashContext> = OnceLock::new();
    CTX.get_or_init(|| {
        let ctx = FlashContext::default_blocking().unwrap_or_else(|e| {
            panic!("no GPU adapter for the tests (install a Vulkan driver such as lavapipe): {e}")
        });
        let c = ctx.caps();
        eprintln!(
            "adapter: {} | {} | {} | f16 {} | subgroups {:?}",
            c.name, c.backend, c.driver, c.shader_f16, c.subgroup_sizes
        );
        ctx
    })
}

pub fn random(n: u64, seed: u64, magnitude: f32) -> Vec<f32> {
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    (0..n)
        .map(|_| rng.random_range(-1.0f32..1.0) * magnitude)
        .collect()
}

const GUARD: u32 = 0xDEAD_BEEF;
/// Bytes before each tensor in its buffer: not a multiple of the storage offset alignment, so the
/// binding must start below the tensor.
pub const LEAD: u64 = 48;
const TAIL: u64 = 64;

/// A buffer holding `payload` at byte LEAD, with guard words before and after.
pub fn guarded_buffer(ctx: &FlashContext, label: &str, payload: &[u8]) -> wgpu::Buffer {
    let size = (LEAD + payload.len() as u64).next_multiple_of(4) + TAIL;
    let mut bytes: Vec<u8> = std::iter::repeat_n(GUARD.to_le_bytes(), size as usize / 4)
        .flatten()
        .collect();
    bytes[LEAD as usize..LEAD as usize + payload.len()].copy_from_slice(payload);
    let buffer = ctx.device().create_buffer(&wgpu::BufferDescriptor {
        label: Some(label),
        size,
        usage: wgpu::BufferUsages::STORAGE
            | wgpu::BufferUsages::COPY_SRC
            | wgpu::BufferUsages::COPY_DST,
        mapped_at_creation: false,
    });
    ctx.queue().write_buffer(&buffer, 0, &bytes);
    buffer
}

/// Reads a guarded buffer back, asserts its guards are intact, and returns the payload bytes.
#[cfg(not(target_arch = "wasm32"))]
pub fn read_guarded(ctx: &FlashContext, buffer: &wgpu::Buffer, payload_len: u64) -> Vec<u8> {
    pollster::block_on(read_guarded_async(ctx, buffer, payload_len))
}

/// [`read_guarded`] without blocking (the browser cannot block).
pub async fn read_guarded_async(
    ctx: &FlashContext,
    buffer: &wgpu::Buffer,
    payload_len: u64,
) -> Vec<u8> {
    let staging = ctx.device().create_buffer(&wgpu::BufferDescriptor {
        label: Some("staging"),
        size: buffer.size(),
        usage: wgpu::BufferUsages::MAP_READ | wgpu::BufferUsages::COPY_DST,
        mapped_at_creation: false,
    });
    let mut enc = ctx.device().create_command_encoder(&Default::default());
    enc.copy_buffer_to_buffer(buffer, 0, &staging, 0, buffer.size());
    ctx.queue().submit([enc.finish()]);
    let bytes = ctx.read(&staging).await.expect("readback");
    let end = (LEAD + payload_len) as usize;
    for (at, w) in bytes.chunks_exact(4).enumerate() {
        let at = at * 4;
        if at + 4 <= LEAD as usize || at >= end.next_multiple_of(4) {
            assert_eq!(
                u32::from_le_bytes([w[0], w[1], w[2], w[3]]),
                GUARD,
                "guard word at byte {at} was overwritten"
            );
        }
    }
    bytes[LEAD as usize..end].to_vec()
}

/// Host inputs of one case.
pub struct Inputs {
    pub q: Vec<f32>,
    pub k: Vec<f32>,
    pub v: Vec<f32>,
    /// ALiBi slopes in [0, 0.5), when the problem uses ALiBi.
    pub alibi: Option<Vec<f32>>,
    /// Sink logits in [-2, 2), when the problem uses sinks.
    pub sinks: Option<Vec<f32>>,
    /// A bias in [-2, 2) with about one -inf in eight, or a boolean mask with about one 0 in four.
    pub mask: Option<Vec<f32>>,
}

impl Inputs {
    pub fn new(p: &Attention, seed: u64, qk_magnitude: f32) -> Self {
        Inputs {
            q: random(p.span_of(Tensor::Q), seed, qk_magnitude),
            k: random(p.span_of(Tensor::K), seed + 1, qk_magnitude),
            v: random(p.span_of(Tensor::V), seed + 2, 1.0),
            alibi: p.alibi.map(|_| {
                random(p.alibi_len(), seed + 3, 0.25)
                    .iter()
                    .map(|x| x + 0.25)
                    .collect()
            }),
            sinks: p.sinks.then(|| random(p.heads_q as u64, seed + 4, 2.0)),
            mask: p.mask.map(|m| {
                let r = random(p.mask_len(), seed + 5, 1.0);
                match m.kind {
                    MaskKind::Additive => r
                        .iter()
                        .map(|&x| {
                            if x < -0.75 {
                                f32::NEG_INFINITY
                            } else {
                                2.0 * x
                            }
                        })
                        .collect(),
                    MaskKind::Boolean => r
                        .iter()
                        .map(|&x| if x < -0.5 { 0.0 } else { 1.0 })
                        .collect(),
                }
            }),
        }
    }

    pub fn host(&self) -> HostInputs<'_> {
        HostInputs {
            q: &self.q,
            k: &self.k,
            v: &self.v,
            alibi_slopes: self.alibi.as_deref(),
            sinks: self.sinks.as_deref(),
            mask: self.mask.as_deref(),
        }
    }
}

/// What the GPU produced, gathered contiguously.
pub struct GpuResult {
    pub out: Vec<f32>,
    pub lse: Vec<f32>,
}

/// Runs the forward kernel through `encode` with guarded, NaN-poisoned buffers at odd offsets.
#[cfg(not(target_arch = "wasm32"))]
pub fn run_gpu(
    ctx: &FlashContext,
    p: &Attention,
    options: PlanOptions,
    inputs: &Inputs,
) -> GpuResult {
    pollster::block_on(run_gpu_async(ctx, p, options, inputs))
}

/// [`run_gpu`] without blocking.
pub async fn run_gpu_async(
    ctx: &FlashContext,
    p: &Attention,
    options: PlanOptions,
    inputs: &Inputs,
) -> GpuResult {
    let plan = ctx
        .plan_with(p, options)
        .unwrap_or_else(|e| panic!("plan failed for {p:?}: {e}"));
    let e = p.dtype.size();
    let q = guarded_buffer(ctx, "q", &to_dtype_bytes(&inputs.q, p.dtype));
    let k = guarded_buffer(ctx, "k", &to_dtype_bytes(&inputs.k, p.dtype));
    let v = guarded_buffer(ctx, "v", &to_dtype_bytes(&inputs.v, p.dtype));
    let o_len = p.span_of(Tensor::O) * e;
    let nan = vec![f32::NAN; p.span_of(Tensor::O) as usize];
    let o = guarded_buffer(ctx, "out", &to_dtype_bytes(&nan, p.dtype)[..o_len as usize]);
    let lse_nan = vec![f32::NAN; p.lse_len() as usize];
    let lse = guarded_buffer(ctx, "lse", bytemuck::cast_slice(&lse_nan));
    let alibi = inputs
        .alibi
        .as_ref()
        .map(|a| guarded_buffer(ctx, "alibi", bytemuck::cast_slice(a)));
    let sinks = inputs
        .sinks
        .as_ref()
        .map(|a| guarded_buffer(ctx, "sinks", bytemuck::cast_slice(a)));
    let mask = inputs
        .mask
        .as_ref()
        .map(|m| guarded_buffer(ctx, "mask", &wgpu_flash_attn::context::mask_bytes(p, m)));
    let at = |buffer| TensorBuffer {
        buffer,
        offset: LEAD,
    };
    let mut enc = ctx.device().create_command_encoder(&Default::default());
    plan.encode(
        &mut enc,
        &AttentionBuffers {
            q: at(&q),
            k: at(&k),
            v: at(&v),
            out: at(&o),
            lse: p.with_lse.then(|| at(&lse)),
            alibi_slopes: alibi.as_ref().map(at),
            sinks: sinks.as_ref().map(at),
            mask: mask.as_ref().map(at),
        },
    )
    .expect("encode");
    ctx.queue().submit([enc.finish()]);
    let out = from_dtype_bytes(&read_guarded_async(ctx, &o, o_len).await, p.dtype);
    let lse: Vec<f32> =
        bytemuck::pod_collect_to_vec(&read_guarded_async(ctx, &lse, p.lse_len() * 4).await);
    for (x, t) in [(&q, Tensor::Q), (&k, Tensor::K), (&v, Tensor::V)] {
        read_guarded_async(ctx, x, p.span_of(t) * e).await;
    }
    GpuResult {
        out: reference::gather(p, Tensor::O, &out),
        lse,
    }
}

/// Rounds a value through the storage type.
pub fn round_to(dtype: DType, x: f32) -> f32 {
    match dtype {
        DType::F32 => x,
        DType::F16 => f16::from_f32(x).to_f32(),
        DType::BF16 => half::bf16::from_f32(x).to_f32(),
    }
}

/// Naive attention carried out in the storage precision, the yardstick of the tolerance rule:
/// f32 arithmetic for f32; for f16, f32 scores and sums (as any f16 kernel accumulates) with the
/// probabilities and the output rounded to f16. Where f16 products are allowed
/// ([`Attention::allow_f16_products`]), the inputs and probabilities are rounded to f16 as the
/// tensor-core tier rounds them, and the output to the storage type.
pub fn naive_lowp(p: &Attention, inputs: &Inputs) -> Vec<f32> {
    if let Some((cq, ck)) = &p.cu_seqlens {
        // Sequence by sequence, each over its slice of the packed tensors.
        let (hq, hkv, d) = (p.heads_q as usize, p.heads_kv as usize, p.head_dim as usize);
        let mut out = Vec::new();
        for b in 0..p.batch as usize {
            let mut seq = p.sequence(b as u32);
            let (q0, q1, k0, k1) = (
                cq[b] as usize,
                cq[b + 1] as usize,
                ck[b] as usize,
                ck[b + 1] as usize,
            );
            let alibi = match p.alibi {
                Some(AlibiSlopes::PerBatchHead) => {
                    seq.alibi = Some(AlibiSlopes::PerHead);
                    inputs
                        .alibi
                        .as_ref()
                        .map(|a| a[b * hq..(b + 1) * hq].to_vec())
                }
                _ => inputs.alibi.clone(),
            };
            let part = Inputs {
                q: inputs.q[q0 * hq * d..q1 * hq * d].to_vec(),
                k: inputs.k[k0 * hkv * d..k1 * hkv * d].to_vec(),
                v: inputs.v[k0 * hkv * d..k1 * hkv * d].to_vec(),
                alibi,
                sinks: inputs.sinks.clone(),
                mask: None,
            };
            out.extend(naive_lowp(&seq, &part));
        }
        return out;
    }
    let r = |x: f32| round_to(p.dtype, x);
    // What the products take: the storage type, or f16 where allowed.
    let rp = |x: f32| {
        if p.allow_f16_products {
            round_to(DType::F16, r(x))
        } else {
            r(x)
        }
    };
    // Each element rounded once, not once per score it enters.
    let [q, k, v] =
        [&inputs.q, &inputs.k, &inputs.v].map(|x| x.iter().map(|&e| rp(e)).collect::<Vec<f32>>());
    let d = p.head_dim as usize;
    let group = p.heads_q / p.heads_kv;
    let at = |t: Tensor, b: u32, s: u32, h: u32| {
        p.strides_of(t).offset(b as u64, s as u64, h as u64) as usize
    };
    let (heads, seq_q) = (p.heads_q as usize, p.seq_q as usize);
    // Rows in O's order (b, i, h), each computed on its own; None when it sees no key and no
    // sink.
    let rows = reference::par_map(p.batch as usize * seq_q * heads, |row| {
        let (b, i, h) = reference::o_row(p, row);
        let slope = match (p.alibi, &inputs.alibi) {
            (Some(AlibiSlopes::PerHead), Some(a)) => a[h as usize],
            (Some(AlibiSlopes::PerBatchHead), Some(a)) => a[(b * p.heads_q + h) as usize],
            _ => 0.0,
        };
        let sink = inputs.sinks.as_ref().map(|s| s[h as usize]);
        let qi = at(Tensor::Q, b, i, h);
        let s: Vec<f32> = (0..p.seq_kv)
            .map(|j| {
                if !reference::visible(p, i, j) {
                    return f32::NEG_INFINITY;
                }
                let kj = at(Tensor::K, b, j, h / group);
                let mut x = p.scale() * (0..d).map(|c| q[qi + c] * k[kj + c]).sum::<f32>();
                if p.softcap > 0.0 {
                    x = p.softcap * (x / p.softcap).tanh();
                }
                let m = match (p.mask, &inputs.mask) {
                    (Some(spec), Some(values)) => {
                        let planes_b = if spec.per_head { p.heads_q } else { 1 };
                        let plane = if spec.per_batch { b * planes_b } else { 0 }
                            + if spec.per_head { h } else { 0 };
                        let e = values[((plane * p.seq_q + i) * p.seq_kv + j) as usize];
                        match spec.kind {
                            MaskKind::Additive => e,
                            MaskKind::Boolean if e != 0.0 => 0.0,
                            MaskKind::Boolean => f32::NEG_INFINITY,
                        }
                    }
                    _ => 0.0,
                };
                x - slope * (i as f32 + p.seq_kv as f32 - p.seq_q as f32 - j as f32).abs() + m
            })
            .collect();
        let max = s
            .iter()
            .cloned()
            .chain(sink)
            .fold(f32::NEG_INFINITY, f32::max);
        if max == f32::NEG_INFINITY {
            return None;
        }
        let e: Vec<f32> = s.iter().map(|x| (x - max).exp()).collect();
        let sum: f32 = e.iter().sum::<f32>() + sink.map_or(0.0, |s| (s - max).exp());
        // The probabilities rounded as a kernel stores them.
        let pr: Vec<f32> = e.iter().map(|x| rp(x / sum)).collect();
        let vrows: Vec<usize> = (0..p.seq_kv)
            .map(|j| at(Tensor::V, b, j, h / group))
            .collect();
        Some(
            (0..d)
                .map(|c| {
                    let mut acc = 0.0f32;
                    for (pj, vj) in pr.iter().zip(&vrows) {
                        acc += pj * v[vj + c];
                    }
                    r(acc)
                })
                .collect::<Vec<f32>>(),
        )
    });
    rows.into_iter()
        .flat_map(|row| row.unwrap_or_else(|| vec![0.0; d]))
        .collect()
}

#[cfg(not(target_arch = "wasm32"))]
/// The kernel tiers to test on this adapter: `FLASH_TEST_KERNELS` (a comma list of
/// `Kernel::name`s) if set, otherwise every tier the adapter can run. A tier that is asked for but
/// missing fails; one the adapter lacks is skipped loudly.
pub fn tiers() -> &'static [wgpu_flash_attn::Kernel] {
    use wgpu_flash_attn::Kernel;
    static TIERS: std::sync::OnceLock<Vec<Kernel>> = std::sync::OnceLock::new();
    TIERS.get_or_init(|| {
        let all = [
            Kernel::ForwardPortable,
            Kernel::ForwardSubgroup,
            Kernel::ForwardCoopMatrix,
        ];
        let probe = Attention::new(1, 1, 1, 16, 16, 64).dtype(DType::F16);
        let offered = |k: Kernel| {
            ctx().plan_with(
                &probe,
                PlanOptions {
                    kernel: Some(k),
                    ..Default::default()
                },
            )
        };
        match std::env::var("FLASH_TEST_KERNELS") {
            Ok(list) => list
                .split(',')
                .map(|name| {
                    let k = *all
                        .iter()
                        .find(|k| k.name() == name.trim())
                        .unwrap_or_else(|| panic!("FLASH_TEST_KERNELS: unknown kernel {name:?}"));
                    if let Err(e) = offered(k) {
                        panic!("FLASH_TEST_KERNELS asks for {name}, which this adapter cannot run: {e}");
                    }
                    k
                })
                .collect(),
            Err(_) => all
                .into_iter()
                .filter(|&k| match offered(k) {
                    Ok(_) => true,
                    Err(e) => {
                        eprintln!("SKIPPED: the {} tier on this adapter: {e}", k.name());
                        false
                    }
                })
                .collect(),
        }
    })
}

#[cfg(not(target_arch = "wasm32"))]
/// Checks one case against the oracle with the 2x-naive rule, on every tier of [`tiers`] (or on
/// the kernel `options` forces); returns the largest (kernel error, naive error) over them.
pub fn check(p: &Attention, options: PlanOptions, seed: u64, qk_magnitude: f32) -> (f64, f64) {
    if options.kernel.is_some() {
        return check_one(p, options, seed, qk_magnitude);
    }
    let mut worst = (0.0f64, 0.0f64);
    let mut ran = 0;
    for &kernel in tiers() {
        let forced = PlanOptions {
            kernel: Some(kernel),
            ..options
        };
        // A tier may refuse a case (forced tiles whose rows do not fit a subgroup, say): skip it
        // loudly, but every case must run on at least one tier.
        if let Err(e) = ctx().plan_with(p, forced) {
            eprintln!(
                "SKIPPED: {} tier for {} {:?}: {e}",
                kernel.name(),
                shape(p),
                options.tiles
            );
            continue;
        }
        let (k, n) = check_one(p, forced, seed, qk_magnitude);
        worst = (worst.0.max(k), worst.1.max(n));
        ran += 1;
    }
    assert!(ran > 0, "{p:?} {options:?}: no tier could run this case");
    worst
}

#[cfg(not(target_arch = "wasm32"))]
/// [`run_gpu`] on every tier of [`tiers`] that can run the case, each result with its tier.
pub fn run_tiers(
    p: &Attention,
    options: PlanOptions,
    inputs: &Inputs,
) -> Vec<(wgpu_flash_attn::Kernel, GpuResult)> {
    let runs: Vec<_> = tiers()
        .iter()
        .filter_map(|&kernel| {
            let forced = PlanOptions {
                kernel: Some(kernel),
                ..options
            };
            match ctx().plan_with(p, forced) {
                Ok(_) => Some((kernel, run_gpu(ctx(), p, forced, inputs))),
                Err(e) => {
                    eprintln!("SKIPPED: {} tier for {}: {e}", kernel.name(), shape(p));
                    None
                }
            }
        })
        .collect();
    assert!(!runs.is_empty(), "{p:?}: no tier could run this case");
    runs
}

/// [`check`] on the one kernel that `options` selects.
#[cfg(not(target_arch = "wasm32"))]
pub fn check_one(p: &Attention, options: PlanOptions, seed: u64, qk_magnitude: f32) -> (f64, f64) {
    check_inputs(p, options, &Inputs::new(p, seed, qk_magnitude))
}

/// [`check_one`] on given inputs.
#[cfg(not(target_arch = "wasm32"))]
pub fn check_inputs(p: &Attention, options: PlanOptions, inputs: &Inputs) -> (f64, f64) {
    let got = run_gpu(ctx(), p, options, inputs);
    compare(p, options, inputs, &got)
}

/// [`check`] without blocking, on a given context.
pub async fn check_async(
    ctx: &FlashContext,
    p: &Attention,
    options: PlanOptions,
    seed: u64,
    qk_magnitude: f32,
) -> (f64, f64) {
    let inputs = Inputs::new(p, seed, qk_magnitude);
    let got = run_gpu_async(ctx, p, options, &inputs).await;
    compare(p, options, &inputs, &got)
}

/// Compares a GPU result with the oracle by the 2x-naive rule (and the LSE, when asked for);
/// returns (kernel error, naive error).
pub fn compare(
    p: &Attention,
    options: PlanOptions,
    inputs: &Inputs,
    got: &GpuResult,
) -> (f64, f64) {
    let rd = |x: f32| round_to(p.dtype, x) as f64;
    let want = reference::attention_full(p, inputs.host(), rd);
    let naive = naive_lowp(p, inputs);
    let mut kernel_err = 0.0f64;
    let mut naive_err = 0.0f64;
    assert_eq!(got.out.len(), want.out.len(), "{p:?}: output lengths");
    assert_eq!(naive.len(), want.out.len(), "{p:?}: naive output length");
    if p.with_lse {
        assert_eq!(got.lse.len(), want.lse.len(), "{p:?}: lse lengths");
    }
    for (idx, ((g, w), n)) in got.out.iter().zip(&want.out).zip(&naive).enumerate() {
        assert!(
            g.is_finite(),
            "{p:?}: output {idx} is {g} (NaN poison left or overflow)"
        );
        kernel_err = kernel_err.max((*g as f64 - w).abs());
        naive_err = naive_err.max((*n as f64 - w).abs());
    }
    let floor = match p.dtype {
        DType::F32 if p.allow_f16_products => 1e-4,
        DType::F32 => 1e-6,
        DType::F16 => 1e-4,
        DType::BF16 => 1e-3,
    };
    eprintln!(
        "{:?} {} {:?}: kernel err {kernel_err:.3e}, naive {} err {naive_err:.3e}",
        shape(p),
        options.kernel.map_or("auto", |k| k.name()),
        options.tiles,
        p.dtype.name()
    );
    assert!(
        kernel_err <= 2.0 * naive_err + floor,
        "{p:?} {options:?}: kernel error {kernel_err:.3e} > 2 x naive error {naive_err:.3e} + {floor:e}"
    );
    if p.with_lse {
        for (idx, (g, w)) in got.lse.iter().zip(&want.lse).enumerate() {
            if *w == f64::NEG_INFINITY {
                assert_eq!(
                    *g,
                    f32::NEG_INFINITY,
                    "{p:?}: lse {idx} of a row without keys must be -inf"
                );
            } else {
                let exact = p.dtype == DType::F32 && !p.allow_f16_products;
                let tol = 1e-5 * w.abs().max(1.0) + if exact { 0.0 } else { 1e-3 };
                assert!(
                    (*g as f64 - w).abs() <= tol,
                    "{p:?}: lse {idx}: got {g}, want {w}"
                );
            }
        }
    }
    (kernel_err, naive_err)
}

pub fn shape(p: &Attention) -> String {
    format!(
        "B{} H{}/{} {}x{} d{} {}{}",
        p.batch,
        p.heads_q,
        p.heads_kv,
        p.seq_q,
        p.seq_kv,
        p.head_dim,
        p.dtype.name(),
        if p.causal { " causal" } else { "" }
    )
}

/// A seeded random problem combining every option: GQA, a variable-length batch one time in five
/// (some sequences empty), causal, windows, softcap, ALiBi, sinks, masks, scale and LSE, with a
/// head_dim from `dims`, a dtype from `dtypes` and sequences up to `max_seq`.
pub fn random_problem(
    rng: &mut impl Rng,
    dims: &[u32],
    dtypes: &[DType],
    max_seq: u32,
) -> Attention {
    let hkv = rng.random_range(1..=2);
    let (hq, d) = (
        hkv * rng.random_range(1..=2),
        dims[rng.random_range(0..dims.len())],
    );
    let base = if rng.random_bool(0.2) {
        let n = rng.random_range(1..=4);
        let mut cu = (vec![0u32], vec![0u32]);
        // Some sequences may be empty, but not every query: a batch of no query token at all is
        // refused by validation (tests/variants.rs checks that).
        for i in 0..n {
            cu.0.push(cu.0.last().unwrap() + rng.random_range(u32::from(i == 0)..=max_seq - 10));
            cu.1.push(cu.1.last().unwrap() + rng.random_range(0..=max_seq - 10));
        }
        Attention::varlen(hq, hkv, d, &cu.0, &cu.1)
    } else {
        Attention::new(
            rng.random_range(1..=2),
            hq,
            hkv,
            rng.random_range(1..=max_seq),
            rng.random_range(1..=max_seq),
            d,
        )
    };
    let varlen = base.cu_seqlens.is_some();
    let side = |rng: &mut dyn rand::RngCore| {
        if rng.random_bool(0.3) {
            rng.random_range(0..40)
        } else {
            -1
        }
    };
    let (left, right) = (side(rng), side(rng));
    base.dtype(dtypes[rng.random_range(0..dtypes.len())])
        .causal(rng.random_bool(0.4))
        .window_size(left, right)
        .softcap(if rng.random_bool(0.25) {
            rng.random_range(1.0..20.0)
        } else {
            0.0
        })
        .alibi(match rng.random_range(0..5) {
            0 => Some(AlibiSlopes::PerHead),
            1 => Some(AlibiSlopes::PerBatchHead),
            _ => None,
        })
        .sinks(rng.random_bool(0.25))
        .attn_mask(match rng.random_range(0..6) {
            _ if varlen => None,
            0 => Some(wgpu_flash_attn::AttnMask {
                kind: MaskKind::Additive,
                per_batch: rng.random_bool(0.5),
                per_head: rng.random_bool(0.5),
            }),
            1 => Some(wgpu_flash_attn::AttnMask {
                kind: MaskKind::Boolean,
                per_batch: rng.random_bool(0.5),
                per_head: rng.random_bool(0.5),
            }),
            _ => None,
        })
        .softmax_scale(rng.random_range(0.05..0.6))
        .with_lse(rng.random_bool(0.7))
}

/// A tuner's trial times: each positive and finite, and the winner's time their minimum.
pub fn assert_winner_is_fastest(winner_ms: f64, trial_ms: &[f64]) {
    assert!(
        trial_ms.iter().all(|&ms| ms > 0.0 && ms.is_finite()),
        "{trial_ms:?}"
    );
    let fastest = trial_ms.iter().copied().fold(f64::INFINITY, f64::min);
    assert_eq!(winner_ms, fastest, "{trial_ms:?}");
}
