//! An inference-server loop with attention only (one layer per step): sequences decode one token
//! per step over a paged KV cache while a long prompt arrives; the prompt is either prefilled in
//! one step or in chunks under a per-step token budget (chunked prefill, as Sarathi-Serve), each
//! chunk sharing its dispatch with the decoding tokens. Reports the decoding sequences'
//! inter-token latency (the GPU time of each step: append + rotary, attention, split-KV combine),
//! and the host time each step spends planning and encoding (a new plan each step: the sequence
//! lengths change).
//!
//! ```sh
//! cargo run --release --example serving                  # 32k prompt, 32 decoders (a real GPU)
//! cargo run --release --example serving -- --prompt 512 --decoders 4 --context 256 \
//!     --budget 128 --heads 8 --heads-kv 2 --dim 64      # small enough for a software driver
//! ```
//!
//! Flags (each takes a number): --prompt, --decoders, --context (the longest decoder context; they
//! start at context/2 .. context), --budget (tokens per step in the chunked schedule), --heads,
//! --heads-kv, --dim, --page-size, --steps-before (decode-only steps before the prompt arrives),
//! --steps-after (decode-only steps after it is done); and --prefill-route auto|forward|kv-cache
//! (where the prompt's chunks run, `PrefillRoute`; auto, the default, takes the forward kernels
//! where they have tensor cores).
//!
//! Queries, keys and values are seeded random numbers: the rest of the model is left out, and the
//! cost of attention does not depend on the values.

use wgpu_flash_attn::timing::GpuTimer;
use wgpu_flash_attn::{
    DType, FlashContext, KvCacheAttention, KvCacheBuffers, PrefillRoute, RotaryEmbedding,
};

struct Config {
    prompt: u32,
    decoders: u32,
    context: u32,
    budget: u32,
    heads: u32,
    heads_kv: u32,
    dim: u32,
    page_size: u32,
    before: u32,
    after: u32,
    route: PrefillRoute,
}

fn parse() -> Result<Config, String> {
    let mut c = Config {
        prompt: 32768,
        decoders: 32,
        context: 4096,
        budget: 2048,
        heads: 32,
        heads_kv: 8,
        dim: 128,
        page_size: 16,
        before: 16,
        after: 64,
        route: PrefillRoute::Auto,
    };
    let args: Vec<String> = std::env::args().skip(1).collect();
    for pair in args.chunks(2) {
        let [flag, value] = pair else {
            return Err(format!("{pair:?}: flags take a value"));
        };
        if flag == "--prefill-route" {
            c.route = value.parse().map_err(|e| format!("{flag}: {e}"))?;
            continue;
        }
        let v: u32 = value.parse().map_err(|e| format!("{flag} {value}: {e}"))?;
        match flag.as_str() {
            "--prompt" => c.prompt = v,
            "--decoders" => c.decoders = v,
            "--context" => c.context = v,
            "--budget" => c.budget = v,
            "--heads" => c.heads = v,
            "--heads-kv" => c.heads_kv = v,
            "--dim" => c.dim = v,
            "--page-size" => c.page_size = v,
            "--steps-before" => c.before = v,
            "--steps-after" => c.after = v,
            _ => return Err(format!("unknown flag {flag} (see the file's header)")),
        }
    }
    if c.budget <= c.decoders {
        return Err("--budget must leave room for prompt tokens beside the decoders".into());
    }
    Ok(c)
}

/// A paged cache shared by all sequences: pages handed out on demand from a free list.
struct Pages {
    next_free: u32,
    tables: Vec<Vec<u32>>,
}

impl Pages {
    fn ensure(&mut self, seq: usize, tokens: u32, page_size: u32) {
        while (self.tables[seq].len() as u32) * page_size < tokens {
            self.tables[seq].push(self.next_free);
            self.next_free += 1;
        }
    }
}

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let c = parse()?;
    let ctx = FlashContext::default_blocking()?;
    let caps = ctx.caps();
    println!("adapter: {} ({}, {})", caps.name, caps.backend, caps.driver);
    let timer = GpuTimer::new(&ctx)
        .ok_or("this example times steps with GPU timestamps (TIMESTAMP_QUERY)")?;
    println!(
        "{} sequences decoding (contexts of {}..{} tokens), a {}-token prompt arrives; \
         heads {}/{}, d {}, f16, pages of {} tokens; prefill route {:?}",
        c.decoders,
        c.context / 2,
        c.context,
        c.prompt,
        c.heads,
        c.heads_kv,
        c.dim,
        c.page_size,
        c.route
    );
    let device = ctx.device();
    let max_tokens = c.decoders + c.prompt; // the largest step: the whole prompt at once
    let row = |heads: u32| heads as u64 * c.dim as u64 * 2;
    let buffer = |label, bytes: u64| {
        device.create_buffer(&wgpu::BufferDescriptor {
            label: Some(label),
            size: bytes.max(16),
            usage: wgpu::BufferUsages::STORAGE | wgpu::BufferUsages::COPY_DST,
            mapped_at_creation: false,
        })
    };
    let random_f16 = |n: u64, seed: u64| -> Vec<u8> {
        let mut s = seed | 1;
        (0..n)
            .flat_map(|_| {
                s ^= s << 13;
                s ^= s >> 7;
                s ^= s << 17;
                let x = (s >> 40) as f32 / (1u64 << 23) as f32 - 1.0;
                half::f16::from_f32(x).to_le_bytes()
            })
            .collect()
    };
    let q = buffer("q", max_tokens as u64 * row(c.heads));
    let k_new = buffer("k_new", max_tokens as u64 * row(c.heads_kv));
    let v_new = buffer("v_new", max_tokens as u64 * row(c.heads_kv));
    let out = buffer("out", max_tokens as u64 * row(c.heads));
    for (b, seed) in [(&q, 1), (&k_new, 2), (&v_new, 3)] {
        ctx.queue()
            .write_buffer(b, 0, &random_f16(b.size() / 2, seed));
    }
    let steps_total = c.before + c.after + c.prompt.div_ceil(c.budget - c.decoders);
    let pool_tokens = c.decoders as u64 * (c.context + steps_total + c.page_size) as u64
        + (c.prompt + c.page_size) as u64;
    let num_pages = pool_tokens.div_ceil(c.page_size as u64) as u32 + c.decoders + 1;
    let cache_bytes = num_pages as u64 * c.page_size as u64 * row(c.heads_kv);
    let k_cache = buffer("k_cache", cache_bytes);
    let v_cache = buffer("v_cache", cache_bytes);

    println!(
        "| schedule | steps | ITL p50 ms | ITL p99 ms | ITL max ms | prompt done after ms | host ms per step, plan / encode, p50 |"
    );
    println!("|---|---|---|---|---|---|---|");
    for (name, chunk) in [
        ("prefill at once", c.prompt),
        ("chunked prefill", c.budget - c.decoders),
    ] {
        // Decoders start with contexts spread over context/2 .. context tokens.
        let mut lens: Vec<u32> = (0..c.decoders)
            .map(|i| c.context / 2 + (i * c.context / 2) / c.decoders.max(1))
            .collect();
        let mut pages = Pages {
            next_free: 0,
            tables: vec![Vec::new(); c.decoders as usize + 1],
        };
        let mut prompt_done = 0u32;
        let mut latencies = Vec::new();
        let mut plan_ms = Vec::new();
        let mut encode_ms = Vec::new();
        let mut prompt_ms = 0.0;
        let mut step = 0u32;
        let mut after = 0u32;
        // Untimed warm-up steps compile every pipeline the run needs (decode-only and mixed).
        for warm in [true, false] {
            loop {
                let prefill = if step >= c.before && prompt_done < c.prompt {
                    chunk.min(c.prompt - prompt_done)
                } else {
                    0
                };
                let mut cu = vec![0u32];
                let mut cached = Vec::new();
                for (i, len) in lens.iter().enumerate() {
                    pages.ensure(i, len + 1, c.page_size);
                    cu.push(cu.last().unwrap() + 1);
                    cached.push(*len);
                }
                if prefill > 0 {
                    pages.ensure(c.decoders as usize, prompt_done + prefill, c.page_size);
                    cu.push(cu.last().unwrap() + prefill);
                    cached.push(prompt_done);
                }
                let batch = cached.len();
                let per_seq = pages.tables[..batch]
                    .iter()
                    .map(Vec::len)
                    .max()
                    .unwrap_or(1);
                let mut table = vec![0u32; batch * per_seq];
                for (b, t) in pages.tables[..batch].iter().enumerate() {
                    table[b * per_seq..b * per_seq + t.len()].copy_from_slice(t);
                }
                let problem = KvCacheAttention::new(c.heads, c.heads_kv, c.dim, &cu, &cached)
                    .dtype(DType::F16)
                    .paged(c.page_size, num_pages, &table)
                    .causal(true)
                    .append_new_kv(true)
                    .rotary(Some(RotaryEmbedding::half_split(c.dim, 10000.0)));
                let problem = problem.prefill_route(c.route);
                let host = std::time::Instant::now();
                let plan = ctx.plan_kv_cache(&problem)?;
                let planned = host.elapsed().as_secs_f64() * 1e3;
                let mut encoder = device.create_command_encoder(&Default::default());
                plan.encode_timed(
                    &mut encoder,
                    &KvCacheBuffers::new(&q, &k_cache, &v_cache, &out).new_kv(&k_new, &v_new),
                    Some(timer.writes()),
                )?;
                let encoded = host.elapsed().as_secs_f64() * 1e3 - planned;
                timer.resolve(&mut encoder);
                ctx.queue().submit([encoder.finish()]);
                let ms = pollster::block_on(timer.read_ms(&ctx))?;
                if warm {
                    // One decode-only step and one mixed step, then start over.
                    if step == 0 {
                        step = c.before;
                        continue;
                    }
                    break;
                }
                latencies.push(ms);
                plan_ms.push(planned);
                encode_ms.push(encoded);
                for len in lens.iter_mut() {
                    *len += 1;
                }
                if prefill > 0 {
                    prompt_done += prefill;
                    prompt_ms += ms;
                } else if step >= c.before {
                    after += 1;
                }
                step += 1;
                if prompt_done >= c.prompt && after >= c.after {
                    break;
                }
            }
            if warm {
                // Reset the run after warming up (the cache contents do not matter).
                lens = (0..c.decoders)
                    .map(|i| c.context / 2 + (i * c.context / 2) / c.decoders.max(1))
                    .collect();
                pages = Pages {
                    next_free: 0,
                    tables: vec![Vec::new(); c.decoders as usize + 1],
                };
                step = 0;
            }
        }
        let steps = latencies.len();
        latencies.sort_by(f64::total_cmp);
        let pct = |p: f64| latencies[((steps as f64 - 1.0) * p).round() as usize];
        plan_ms.sort_by(f64::total_cmp);
        encode_ms.sort_by(f64::total_cmp);
        println!(
            "| {name} | {steps} | {:.3} | {:.3} | {:.3} | {:.1} | {:.3} / {:.3} |",
            pct(0.5),
            pct(0.99),
            latencies[steps - 1],
            prompt_ms,
            plan_ms[steps / 2],
            encode_ms[steps / 2]
        );
    }
    Ok(())
}
