//! Decode benchmark: attention of a few query tokens per sequence over long KV caches (split-KV),
//! contiguous and paged (and, for diagnosis, paged in storage order or contiguous with padded
//! entries), on the default adapter (honours `WGPU_BACKEND` / `WGPU_ADAPTER_NAME`).
//!
//! ```sh
//! cargo bench --bench decode                       # small defaults, fine on a software driver
//! cargo bench --bench decode -- --batch 8 --heads 32 --heads-kv 8 --dim 128 --dtype f16 \
//!     --kv 32768,131072 --layouts contiguous,paged --runs 20 --json decode.json
//! ```
//!
//! Time is measured on the GPU with timestamp queries at the start and end of the step's compute
//! pass (attention and the split-KV combine), median of `--runs` after a warm-up of at least
//! `--warmup` steps and `--warmup-ms` of back-to-back steps (so that clocks have ramped up before
//! timing: short steps on a cold GPU otherwise measure its idle clocks; `--first-warmup-ms` can
//! lengthen it for the first configuration of each length); without
//! `TIMESTAMP_QUERY`, the wall time of submit + wait. By default each timed step is a submission
//! of its own, started once the one before was read back (`--timing idle`); `--timing queued`
//! (timestamps only) records all runs in one submission, each between its own timestamps and
//! after a 256 MiB buffer clear, as triton's `do_bench` times the PyTorch peers.
//! Every run's time goes to the JSON (`ms_runs`). Bandwidth counts the K and V bytes the step
//! must read (each visible key once per KV head). The cache holds seeded random values, uploaded
//! from the host or, with `--fill gpu`, written by a compute pass (no staging copy, and no host
//! copy: the oracle computes the elements it reads); the paged layout views the same buffers
//! through a block table of `--page-size` pages, shuffled within each sequence's region. Sampled
//! output rows are checked against an f64 oracle; an error above tolerance makes the run exit
//! nonzero. `--tune` also runs the split tuner (`autotune::tune_kv_cache`) after each length's
//! configurations and times its winner as a row of its own ("(tuned)").

mod common;

use common::{max_err, median, poison, read_back};
use std::io::Write;
use std::path::PathBuf;
use std::rc::Rc;
use std::time::Instant;

use clap::Parser;
use serde::Serialize;
use wgpu_flash_attn::context::from_dtype_bytes;
use wgpu_flash_attn::kvcache::{self, DecodeTilesSpec, KvCacheAttention, PrefillRoute};
use wgpu_flash_attn::timing::{time_pass, GpuTimer};
use wgpu_flash_attn::{autotune, DType, FlashContext, FlashError, KvCacheBuffers};

#[derive(Parser, Debug, Clone, Serialize)]
#[command(
    about = "KV-cache decoding (split-KV, contiguous and paged caches) on the default wgpu adapter"
)]
struct Args {
    /// Sequences decoding together.
    #[arg(long, default_value_t = 4)]
    batch: u32,
    /// Query heads.
    #[arg(long, default_value_t = 8)]
    heads: u32,
    /// Key/value heads.
    #[arg(long, default_value_t = 2)]
    heads_kv: u32,
    /// Head dimension.
    #[arg(long, default_value_t = 128)]
    dim: u32,
    /// Storage type: f16, f32 or bf16.
    #[arg(long, default_value = "f16")]
    dtype: String,
    /// KV cache lengths to sweep (tokens per sequence).
    #[arg(long, value_delimiter = ',', default_value = "1024,4096")]
    kv: Vec<u32>,
    /// Query tokens per sequence (1 = plain decoding; more = speculative or multi-token).
    #[arg(long, default_value_t = 1)]
    seq_q: u32,
    /// Cache layouts to run, in this order (a layout may repeat): contiguous (entries of kv
    /// tokens), paged (each sequence's pages in a shuffled order), paged-in-order (the block
    /// table in storage order: the contiguous reads through the table), contiguous-padded
    /// (entries of kv + `--pad-tokens` tokens, so that the sequences do not start at multiples of
    /// a power of two). All views of one pair of cache buffers per length.
    #[arg(long, value_enum, value_delimiter = ',', default_values_t = [Layout::Contiguous, Layout::Paged])]
    layouts: Vec<Layout>,
    /// contiguous-padded: tokens of room after each sequence's entry (at least 1; the cache
    /// buffers then hold batch * (kv + this) tokens).
    #[arg(long, default_value_t = 0)]
    pad_tokens: u32,
    /// Tokens per page of the paged layouts.
    #[arg(long, default_value_t = 16, value_parser = clap::value_parser!(u32).range(1..))]
    page_size: u32,
    /// Force the number of KV splits (a list sweeps them; 0 or default: the plan's choice).
    #[arg(long, value_delimiter = ',')]
    splits: Vec<u32>,
    /// Force the P V threads along head_dim (threads_v: 4, 8, 16 or 32), to sweep the tiles. The
    /// single-knob flags change the plan's tiles, whichever kernel it chose; the subgroup kernel
    /// ignores this one.
    #[arg(long)]
    threads_v: Option<u32>,
    /// Force the workgroup size (64, 128 or 256 invocations).
    #[arg(long)]
    threads: Option<u32>,
    /// Force the threads that share one key's scores (portable: 2, 4, 8 or 16; subgroup: lanes per
    /// key, a power of two up to the smallest subgroup size).
    #[arg(long)]
    threads_per_key: Option<u32>,
    /// Force the keys each thread scores per tile (portable: 1, 2 or 4; subgroup: 1 to 8; keys per
    /// tile = threads * keys_per_thread / threads_per_key).
    #[arg(long)]
    keys_per_thread: Option<u32>,
    /// Tile configurations to sweep on the same data, each `plan` (the plan's choice),
    /// `portable` or `subgroup` (that kernel's default tiles), THREADS/THREADS_PER_KEY/
    /// KEYS_PER_THREAD/THREADS_V for the portable kernel (e.g. 128/4/1/16), or
    /// sg:THREADS/THREADS_PER_KEY/KEYS_PER_THREAD for the subgroup kernel (e.g. sg:128/16/2);
    /// overrides the single-knob flags above.
    #[arg(long, value_delimiter = ',')]
    tiles: Vec<String>,
    /// Also run the split tuner (`autotune::tune_kv_cache`) on each length and layout, after the
    /// listed configurations, and time its winner as one more row.
    #[arg(long)]
    tune: bool,
    /// Timed runs (the median is reported).
    #[arg(long, default_value_t = 30)]
    runs: usize,
    /// Untimed warm-up runs (at least).
    #[arg(long, default_value_t = 3)]
    warmup: usize,
    /// Untimed warm-up time per configuration, milliseconds (at least), spent on back-to-back steps.
    #[arg(long, default_value_t = 300)]
    warmup_ms: u64,
    /// Untimed warm-up of the first configuration of each length (after its caches are written,
    /// or kept), milliseconds: the larger of this and `--warmup-ms` applies (0: warmed like the
    /// rest).
    #[arg(long, default_value_t = 0)]
    first_warmup_ms: u64,
    /// How timed steps run: `idle` (each step its own submission, started on an idle GPU once
    /// the one before was read back) or `queued` (all `--runs` steps in one submission, each
    /// between its own two timestamps, after a clear of a 256 MiB buffer, as triton's `do_bench`
    /// clears the L2 cache before each PyTorch run, with a barrier on either side of each step;
    /// needs `TIMESTAMP_QUERY`, at most 2048 runs). `--tune`'s trials are timed `idle` either way.
    #[arg(long, value_enum, default_value_t = Timing::Idle)]
    timing: Timing,
    /// How the caches reach the GPU: `host` (uploaded through `Queue::write_buffer`) or `gpu`
    /// (the same values written by a compute pass, no staging copy).
    #[arg(long, value_enum, default_value_t = Fill::Host)]
    fill: Fill,
    /// Allocate the K and V caches once, at the size the longest `--kv` needs, and write each
    /// length's values into them, instead of new buffers per length (`--fill host` only).
    #[arg(long)]
    reuse_caches: bool,
    /// With --reuse-caches: a length equal to the one before keeps the values already in the
    /// caches instead of writing them again.
    #[arg(long)]
    keep_caches: bool,
    /// After the caches of each length are written (or kept), also write this many MiB from the
    /// host into a buffer of their own (made once): does a large transfer alone slow the steps
    /// that follow?
    #[arg(long, default_value_t = 0)]
    scratch_write_mib: u32,
    /// Idle time once each length's caches are in place (written or kept), before its first
    /// configuration's warm-up, milliseconds.
    #[arg(long, default_value_t = 0)]
    settle_ms: u64,
    /// Output rows checked against the f64 oracle per configuration.
    #[arg(long, default_value_t = 8)]
    check_rows: usize,
    /// Seed of the inputs and of the checked rows.
    #[arg(long, default_value_t = 1)]
    seed: u64,
    /// Also write the results as JSON to this file.
    #[arg(long)]
    json: Option<PathBuf>,
    /// Passed by `cargo bench`; ignored.
    #[arg(long, hide = true)]
    #[serde(skip)]
    bench: bool,
}

/// `--timing`.
#[derive(clap::ValueEnum, Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
enum Timing {
    Idle,
    Queued,
}

/// `--layouts`.
#[derive(clap::ValueEnum, Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
enum Layout {
    Contiguous,
    Paged,
    PagedInOrder,
    ContiguousPadded,
}

/// A cache's values as the oracle reads them: the host's copy (`--fill host`, which uploads it),
/// or computed element by element from the seed's mix, as `fill` and the GPU's fill compute
/// them (`--fill gpu`, where the host keeps none).
#[derive(Clone)]
enum CacheValues {
    Bytes(Rc<Vec<u8>>),
    Seeded(u32),
}

impl CacheValues {
    fn new(fill_kind: Fill, elems: usize, seed: u64, dtype: DType) -> CacheValues {
        match fill_kind {
            Fill::Host => CacheValues::Bytes(Rc::new(fill(elems, seed, dtype))),
            Fill::Gpu => CacheValues::Seeded(seed_mix(seed)),
        }
    }

    fn at(&self, i: usize, dtype: DType) -> f64 {
        match self {
            CacheValues::Bytes(bytes) => value(bytes, i, dtype),
            // Exact in every storage type, so no rounding to it is needed.
            CacheValues::Seeded(mix) => f64::from(element(*mix, i, dtype)),
        }
    }

    /// The host's copy, to upload (`--fill host` makes one).
    fn bytes(&self) -> &[u8] {
        match self {
            CacheValues::Bytes(bytes) => bytes,
            CacheValues::Seeded(_) => unreachable!("--fill gpu uploads nothing"),
        }
    }
}

/// How the caches reach device memory (`--fill`).
#[derive(clap::ValueEnum, Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
enum Fill {
    /// Written on the host and uploaded with `Queue::write_buffer`, 256 MiB at a time.
    Host,
    /// Written on the GPU by a compute pass (the same values): no staging copy.
    Gpu,
}

/// `--layouts`, `--timing` and `--fill` values print as they are spelled on the command line.
macro_rules! display_as_value {
    ($($t:ty),*) => {$(
        impl std::fmt::Display for $t {
            fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                let value = clap::ValueEnum::to_possible_value(self).expect("no value is skipped");
                f.write_str(value.get_name())
            }
        }
    )*};
}
display_as_value!(Layout, Timing, Fill);

/// How the timed steps are timed (`--timing`), with what each way needs made once per run.
enum StepTimer {
    /// Each step its own submission: its two timestamps, or the wall time without timestamps.
    Idle(Option<GpuTimer>),
    /// All runs in one submission: a timestamp pair per step, and the buffer cleared before each.
    Queued {
        timer: GpuTimer,
        flush: wgpu::Buffer,
    },
}

#[derive(Serialize)]
struct Row {
    peer: &'static str,
    /// Ours: the KV-cache kernel that ran (empty when none did); the peers': the SDPA backend.
    backend: String,
    dtype: String,
    batch: u32,
    heads: u32,
    heads_kv: u32,
    kv_len: u32,
    seq_q: u32,
    head_dim: u32,
    layout: String,
    page_size: Option<u32>,
    ms: Option<f64>,
    ms_min: Option<f64>,
    gbps: Option<f64>,
    splits: Option<u32>,
    tiles: Option<String>,
    dispatch_windows: Option<usize>,
    /// Every timed run, ms, in the order they ran.
    ms_runs: Vec<f64>,
    max_err: Option<f64>,
    error: Option<String>,
}

impl Row {
    /// A row of ours for this configuration, before it runs.
    fn unmeasured(args: &Args, kv: u32, layout: Layout, page_size: Option<u32>) -> Row {
        Row {
            peer: "wgpu-flash-attn",
            // The kernel that ran, once known.
            backend: String::new(),
            dtype: args.dtype.clone(),
            batch: args.batch,
            heads: args.heads,
            heads_kv: args.heads_kv,
            kv_len: kv,
            seq_q: args.seq_q,
            head_dim: args.dim,
            layout: layout.to_string(),
            page_size,
            ms: None,
            ms_min: None,
            gbps: None,
            splits: None,
            tiles: None,
            dispatch_windows: None,
            ms_runs: Vec::new(),
            max_err: None,
            error: None,
        }
    }
}

#[derive(Serialize)]
struct Report<'a> {
    #[serde(flatten)]
    run: common::RunInfo,
    max_storage_buffer_binding_size: u64,
    args: &'a Args,
    rows: &'a [Row],
}

fn main() {
    let args = Args::parse();
    match run(&args) {
        Ok(true) => {}
        Ok(false) => {
            eprintln!("FAILED: a configuration failed or exceeded its error tolerance");
            std::process::exit(1);
        }
        Err(e) => {
            eprintln!("error: {e}");
            std::process::exit(2);
        }
    }
}

/// The same hash as benches/fill_cache.wgsl.
fn hash(x: u32) -> u32 {
    let s = x.wrapping_mul(747_796_405).wrapping_add(2_891_336_453);
    let w = ((s >> ((s >> 28) + 4)) ^ s).wrapping_mul(277_803_737);
    (w >> 22) ^ w
}

/// What a seed adds to every element index before the hash (benches/fill_cache.wgsl's `seed`).
fn seed_mix(seed: u64) -> u32 {
    hash(seed as u32)
}

/// Element `e` of the values seeded with `seed_mix(seed) == mix`, as benches/fill_cache.wgsl
/// writes them on the GPU: in [-1, 1), exactly representable in `dtype`.
fn element(mix: u32, e: usize, dtype: DType) -> f32 {
    let h = hash((e as u32).wrapping_add(mix));
    match dtype {
        DType::BF16 => ((h >> 25) as i32 - 64) as f32 / 64.0,
        _ => ((h >> 21) as i32 - 1024) as f32 / 1024.0,
    }
}

/// `n` seeded values in the storage type's bytes (at most 2^32 - 1: element indices are 32-bit,
/// as in the GPU's fill).
fn fill(n: usize, seed: u64, dtype: DType) -> Vec<u8> {
    assert!(u32::try_from(n).is_ok(), "{n} elements: at most 2^32 - 1");
    let mix = seed_mix(seed);
    let mut out = Vec::with_capacity(n * dtype.size() as usize);
    for e in 0..n {
        let x = element(mix, e, dtype);
        match dtype {
            DType::F32 => out.extend_from_slice(&x.to_le_bytes()),
            DType::F16 => out.extend_from_slice(&half::f16::from_f32(x).to_le_bytes()),
            DType::BF16 => out.extend_from_slice(&half::bf16::from_f32(x).to_le_bytes()),
        }
    }
    out
}

fn value(bytes: &[u8], i: usize, dtype: DType) -> f64 {
    match dtype {
        DType::F32 => f32::from_le_bytes(bytes[4 * i..4 * i + 4].try_into().unwrap()) as f64,
        DType::F16 => half::f16::from_le_bytes([bytes[2 * i], bytes[2 * i + 1]]).to_f64(),
        DType::BF16 => half::bf16::from_le_bytes([bytes[2 * i], bytes[2 * i + 1]]).to_f64(),
    }
}

/// benches/fill_cache.wgsl for `dtype`'s storage.
fn fill_pipeline(ctx: &FlashContext, dtype: DType) -> wgpu::ComputePipeline {
    let kind = match dtype {
        DType::F32 => 0,
        DType::F16 => 1,
        DType::BF16 => 2,
    };
    let source = wgpu_flash_attn::kernels::with_header(
        include_str!("fill_cache.wgsl"),
        &format!("const KIND: u32 = {kind}u;\n"),
    );
    common::compute_pipeline(ctx, "fill cache", source, "fill")
}

/// A cache buffer of `elems` seeded values written on the GPU by `pipeline` (`fill_pipeline` of
/// `dtype`; the same values as `fill`), in windows that each fit one storage binding; waits until
/// written.
fn gpu_fill(
    ctx: &FlashContext,
    pipeline: &wgpu::ComputePipeline,
    label: &str,
    elems: usize,
    seed: u64,
    dtype: DType,
) -> Result<wgpu::Buffer, FlashError> {
    use wgpu::util::DeviceExt;
    let device = ctx.device();
    let limits = device.limits();
    // At most 512 MiB, within the binding limit, on the offset alignment.
    let align = u64::from(limits.min_storage_buffer_offset_alignment).max(4);
    let window = (512u64 << 20).min(limits.max_storage_buffer_binding_size) / align * align;
    let bytes = (elems as u64 * dtype.size()).next_multiple_of(4);
    let buffer = storage_buffer(ctx, label, bytes);
    let mut encoder = device.create_command_encoder(&Default::default());
    for start in (0..bytes).step_by(window as usize) {
        let size = window.min(bytes - start);
        let params: [u32; 4] = [
            (start / dtype.size()) as u32,
            (size / 4) as u32,
            seed_mix(seed),
            0,
        ];
        let uniform = device.create_buffer_init(&wgpu::util::BufferInitDescriptor {
            label: Some("fill cache params"),
            contents: bytemuck::cast_slice(&params),
            usage: wgpu::BufferUsages::UNIFORM,
        });
        let window = wgpu::BufferBinding {
            buffer: &buffer,
            offset: start,
            size: wgpu::BufferSize::new(size),
        };
        let bind_group = common::bind_group(
            ctx,
            "fill cache",
            pipeline,
            &[
                uniform.as_entire_binding(),
                wgpu::BindingResource::Buffer(window),
            ],
        );
        let mut pass = encoder.begin_compute_pass(&Default::default());
        pass.set_pipeline(pipeline);
        pass.set_bind_group(0, &bind_group, &[]);
        pass.dispatch_workgroups(4096, 1, 1);
    }
    ctx.queue().submit([encoder.finish()]);
    device
        .poll(wgpu::PollType::wait_indefinitely())
        .map_err(|e| FlashError::Readback(e.to_string()))?;
    Ok(buffer)
}

fn upload(ctx: &FlashContext, label: &str, bytes: &[u8]) -> wgpu::Buffer {
    let buffer = storage_buffer(ctx, label, bytes.len() as u64);
    write_in_pieces(ctx, &buffer, bytes);
    buffer
}

fn storage_buffer(ctx: &FlashContext, label: &str, bytes: u64) -> wgpu::Buffer {
    ctx.device().create_buffer(&wgpu::BufferDescriptor {
        label: Some(label),
        size: bytes.next_multiple_of(4).max(4),
        usage: wgpu::BufferUsages::STORAGE
            | wgpu::BufferUsages::COPY_DST
            | wgpu::BufferUsages::COPY_SRC,
        mapped_at_creation: false,
    })
}

/// `bytes` into the start of `buffer`, through `Queue::write_buffer` in pieces: one staging copy
/// of a multi-gigabyte cache would double the host memory.
fn write_in_pieces(ctx: &FlashContext, buffer: &wgpu::Buffer, bytes: &[u8]) {
    for (k, chunk) in bytes.chunks(256 << 20).enumerate() {
        ctx.queue()
            .write_buffer(buffer, (k as u64) << 28, &chunk[..chunk.len() / 4 * 4]);
        ctx.queue().submit([]);
    }
}

fn run(args: &Args) -> Result<bool, Box<dyn std::error::Error>> {
    let dtype: DType = args.dtype.parse()?;
    if args.keep_caches && !args.reuse_caches {
        return Err(
            "--keep-caches keeps what --reuse-caches wrote: it needs --reuse-caches".into(),
        );
    }
    if args.reuse_caches && args.fill != Fill::Host {
        return Err("--reuse-caches writes the caches from the host: it needs --fill host".into());
    }
    let ctx = FlashContext::default_blocking()?;
    let caps = ctx.caps().clone();
    if args.runs == 0 {
        return Err("--runs must be at least 1".into());
    }
    let timer = match args.timing {
        Timing::Idle => StepTimer::Idle(GpuTimer::new(&ctx)),
        Timing::Queued => {
            if args.runs > GpuTimer::MAX_PAIRS as usize {
                return Err(format!(
                    "--timing queued takes at most {} runs (a timestamp pair each)",
                    GpuTimer::MAX_PAIRS
                )
                .into());
            }
            let timer =
                GpuTimer::with_pairs(&ctx, args.runs as u32).ok_or(FlashError::MissingFeature {
                    what: "--timing queued",
                    feature: "TIMESTAMP_QUERY",
                })?;
            let flush = ctx.device().create_buffer(&wgpu::BufferDescriptor {
                label: Some("L2 flush"),
                size: 256 << 20,
                usage: wgpu::BufferUsages::STORAGE | wgpu::BufferUsages::COPY_DST,
                mapped_at_creation: false,
            });
            StepTimer::Queued { timer, flush }
        }
    };
    // Lengths checked before any cache is filled.
    let padded = args.layouts.contains(&Layout::ContiguousPadded);
    if padded && args.pad_tokens == 0 {
        return Err("contiguous-padded needs --pad-tokens of at least 1".into());
    }
    let pad = if padded { args.pad_tokens } else { 0 };
    let paged = args
        .layouts
        .iter()
        .any(|l| matches!(l, Layout::Paged | Layout::PagedInOrder));
    // Elements of one cache (K or V) of a length; 32-bit element indices (in `fill` and on the
    // GPU) allow at most 2^32 - 1, checked below.
    let cache_elems_of = |kv: u32| {
        u64::from(args.batch) * u64::from(kv + pad) * u64::from(args.heads_kv) * u64::from(args.dim)
    };
    for &kv in &args.kv {
        if paged && kv % args.page_size != 0 {
            return Err(format!(
                "--page-size {} must divide every --kv length",
                args.page_size
            )
            .into());
        }
        if kv.checked_add(pad).is_none() {
            return Err(format!("--kv {kv} + --pad-tokens {pad} overflows").into());
        }
        let elems = cache_elems_of(kv);
        if elems > u64::from(u32::MAX) {
            return Err(format!("--kv {kv}: {elems} cache elements, at most 2^32 - 1").into());
        }
    }
    if u64::from(args.scratch_write_mib) << 20 > caps.max_buffer_size {
        return Err(format!(
            "--scratch-write-mib {}: more than this device's max_buffer_size ({} bytes)",
            args.scratch_write_mib, caps.max_buffer_size
        )
        .into());
    }
    let timing = if matches!(timer, StepTimer::Idle(None)) {
        "wall-clock"
    } else {
        "gpu-timestamps"
    };
    println!(
        "adapter: {} ({}, {}), ~{} compute units, timing: {timing} ({} steps)",
        caps.name, caps.backend, caps.driver, caps.compute_units, args.timing
    );
    println!(
        "| kv | layout | splits | tiles (BMxBNxTHxTV/TK/KK; sg: BMxBNxTH/TK/KK) | ms (median) | ms (min) | GB/s of K+V | max err |"
    );
    println!("|---|---|---|---|---|---|---|---|");
    let (b, hq, hkv, d, sq) = (args.batch, args.heads, args.heads_kv, args.dim, args.seq_q);
    let tile_list: Vec<DecodeTilesSpec> = if args.tiles.is_empty() {
        vec![DecodeTilesSpec {
            kernel: None,
            threads: args.threads,
            threads_per_key: args.threads_per_key,
            keys_per_thread: args.keys_per_thread,
            threads_v: args.threads_v,
        }]
    } else {
        args.tiles
            .iter()
            .map(|t| t.parse())
            .collect::<Result<_, _>>()?
    };
    let mut rows = Vec::new();
    let mut all_ok = true;
    // --reuse-caches: one pair of buffers for every length, as large as the longest needs (of
    // those that fit a buffer), made at the first length.
    let cache_bytes_of = |kv: u32| cache_elems_of(kv) * dtype.size();
    let reuse_bytes = args
        .kv
        .iter()
        .map(|&kv| cache_bytes_of(kv))
        .filter(|&bytes| bytes <= caps.max_buffer_size)
        .max()
        .unwrap_or(0);
    let mut reused: Option<(wgpu::Buffer, wgpu::Buffer)> = None;
    let mut reused_kv = None;
    let mut kept_values: Option<(CacheValues, CacheValues)> = None;
    let fill_pipeline = (args.fill == Fill::Gpu).then(|| fill_pipeline(&ctx, dtype));
    // --scratch-write-mib: a buffer of its own for the host's writes, and what is written.
    let scratch = (args.scratch_write_mib > 0).then(|| {
        let bytes = u64::from(args.scratch_write_mib) << 20;
        (
            storage_buffer(&ctx, "scratch", bytes),
            vec![0x5au8; bytes as usize],
        )
    });
    for &kv in &args.kv {
        // One pair of cache buffers per length, shared by all layouts (padded rows only where
        // contiguous-padded is asked for).
        let cache_elems = cache_elems_of(kv) as usize;
        // The bench holds each cache in one buffer (the library would take pages from several).
        let cache_bytes = cache_bytes_of(kv);
        if cache_bytes > caps.max_buffer_size {
            let why = format!(
                "skipped: a {cache_bytes}-byte cache exceeds this device's max_buffer_size ({})",
                caps.max_buffer_size
            );
            eprintln!("SKIPPED: kv {kv}: {why}");
            for layout in &args.layouts {
                let mut row = Row::unmeasured(args, kv, *layout, None);
                row.error = Some(why.clone());
                rows.push(row);
            }
            continue;
        }
        // The GPU idles while the host fills the caches. A longer warm-up after that (3 s here
        // until bench-results/h200-2026-12-01-session18) was followed on the H200 by whole
        // series of runs 2-4x slow; series like that came with 200 ms too (session19). They come
        // most often after the GPU has idled for a second or more, as it does here, and at times
        // in the middle of a length (session20, calls 10-12). By default the first configuration
        // warms like the others; --first-warmup-ms gives it a longer warm-up. Every run goes to
        // the JSON (ms_runs).
        let mut warmup_ms = args.warmup_ms.max(args.first_warmup_ms);
        // --keep-caches: the same length as the one before keeps the caches' values, on the host
        // too (not computed again, so the GPU does not wait for them).
        let kept = args.keep_caches && reused_kv == Some(kv);
        if !kept {
            // The previous length's values go before the new ones are made.
            kept_values = None;
        }
        // --fill gpu: the host makes no copy of the caches; the oracle computes the elements it
        // reads (so the GPU does not idle for the host before the first configuration).
        let (k_values, v_values) = match &kept_values {
            Some(values) if kept => values.clone(),
            _ => (
                CacheValues::new(args.fill, cache_elems, args.seed + 1, dtype),
                CacheValues::new(args.fill, cache_elems, args.seed + 2, dtype),
            ),
        };
        if args.keep_caches {
            kept_values = Some((k_values.clone(), v_values.clone()));
        }
        let q_host = fill((b * sq * hq * d) as usize, args.seed, dtype);
        let (k, v) = match args.fill {
            Fill::Host if args.reuse_caches => {
                let (k, v) = reused.get_or_insert_with(|| {
                    (
                        storage_buffer(&ctx, "k_cache", reuse_bytes),
                        storage_buffer(&ctx, "v_cache", reuse_bytes),
                    )
                });
                if !kept {
                    write_in_pieces(&ctx, k, k_values.bytes());
                    write_in_pieces(&ctx, v, v_values.bytes());
                }
                reused_kv = Some(kv);
                (k.clone(), v.clone())
            }
            Fill::Host => (
                upload(&ctx, "k_cache", k_values.bytes()),
                upload(&ctx, "v_cache", v_values.bytes()),
            ),
            Fill::Gpu => {
                let pipeline = fill_pipeline.as_ref().expect("made for --fill gpu");
                (
                    gpu_fill(&ctx, pipeline, "k_cache", cache_elems, args.seed + 1, dtype)?,
                    gpu_fill(&ctx, pipeline, "v_cache", cache_elems, args.seed + 2, dtype)?,
                )
            }
        };
        if let Some((buffer, bytes)) = &scratch {
            write_in_pieces(&ctx, buffer, bytes);
        }
        let q = upload(&ctx, "q", &q_host);
        let out_bytes = (b * sq * hq * d) as u64 * dtype.size();
        // Poisoned before each configuration: nothing to upload.
        let out = storage_buffer(&ctx, "out", out_bytes);
        if args.settle_ms > 0 {
            ctx.device()
                .poll(wgpu::PollType::wait_indefinitely())
                .map_err(|e| FlashError::Readback(e.to_string()))?;
            std::thread::sleep(std::time::Duration::from_millis(args.settle_ms));
        }
        for &layout in &args.layouts {
            // The step's query tokens are the caches' last seq_q tokens (already appended). The
            // KV-cache kernel runs them all, also where seq_q would make a prefill chunk.
            let base = KvCacheAttention::decode(hq, hkv, d, sq, &vec![kv; b as usize], kv)
                .dtype(dtype)
                .prefill_route(PrefillRoute::KvCache);
            let (problem, table) = match layout {
                Layout::Contiguous => (base, None),
                Layout::ContiguousPadded => (base.contiguous(kv + pad), None),
                Layout::Paged | Layout::PagedInOrder => {
                    let per_seq = kv / args.page_size;
                    let table = if layout == Layout::Paged {
                        shuffled_pages(b, per_seq, args.seed)
                    } else {
                        (0..b * per_seq).collect()
                    };
                    (base.paged(args.page_size, b * per_seq, &table), Some(table))
                }
            };
            let split_list: Vec<Option<u32>> = if args.splits.is_empty() {
                vec![None]
            } else {
                args.splits.iter().map(|&s| (s > 0).then_some(s)).collect()
            };
            // One configuration: timed, checked against the oracle, printed; `is_tuned` marks the
            // split tuner's winner.
            let mut measure = |splits: Option<u32>,
                               forced: DecodeTilesSpec,
                               is_tuned: bool|
             -> Result<Row, Box<dyn std::error::Error>> {
                let problem = match splits {
                    Some(n) => problem.clone().num_splits(n),
                    None => problem.clone(),
                };
                let page_size = table.as_ref().map(|_| args.page_size);
                let mut row = Row::unmeasured(args, kv, layout, page_size);
                // A step that writes nothing cannot pass on the configuration before's output.
                poison(&ctx, &out, out_bytes);
                let result = bench(
                    &ctx,
                    &timer,
                    args,
                    (forced, warmup_ms),
                    &problem,
                    [&q, &k, &v, &out],
                );
                // A configuration that failed before its warm-up leaves the long one to the next.
                if result.is_ok() {
                    warmup_ms = args.warmup_ms;
                }
                match result {
                    Ok((times, plan)) => {
                        let ms_min = times.iter().copied().reduce(f64::min);
                        let ms = median(times.clone());
                        row.ms_runs = times;
                        row.ms = Some(ms);
                        row.ms_min = ms_min;
                        row.gbps = Some(problem.kv_bytes_read() as f64 / ms / 1e6);
                        row.splits = Some(plan.splits);
                        row.backend = plan.tiles.kernel.name().into();
                        row.tiles = Some(plan.tiles.to_string());
                        row.dispatch_windows = Some(plan.windows.len());
                        let got = pollster::block_on(read_back(&ctx, &out, out_bytes))?;
                        let got = from_dtype_bytes(&got, dtype);
                        let err = check(
                            args,
                            &problem,
                            table.as_deref(),
                            &q_host,
                            [&k_values, &v_values],
                            &got,
                        );
                        row.max_err = Some(err);
                        let tol = match dtype {
                            DType::F32 => 1e-5,
                            DType::F16 => 2e-3,
                            DType::BF16 => 1e-2,
                        };
                        if err > tol {
                            row.error = Some(format!("max error {err:.2e} above {tol:.0e}"));
                        }
                    }
                    Err(e) => {
                        row.error = Some(e.to_string());
                    }
                }
                if is_tuned {
                    row.peer = "wgpu-flash-attn, tuned";
                }
                println!(
                    "| {kv} | {layout}{} | {} | {} | {} | {} | {} | {} |",
                    if is_tuned { " (tuned)" } else { "" },
                    row.splits.map_or("-".into(), |s| s.to_string()),
                    row.tiles.clone().unwrap_or_default(),
                    row.ms.map_or("-".into(), |m| format!("{m:.4}")),
                    row.ms_min.map_or("-".into(), |m| format!("{m:.4}")),
                    row.gbps.map_or("-".into(), |g| format!("{g:.1}")),
                    match (&row.error, row.max_err) {
                        (Some(e), _) => e.clone(),
                        (None, Some(e)) => format!("{e:.1e}"),
                        _ => "-".into(),
                    }
                );
                std::io::stdout().flush().ok();
                Ok(row)
            };
            for &splits in &split_list {
                for &forced in &tile_list {
                    let row = measure(splits, forced, false)?;
                    all_ok &= row.error.is_none();
                    rows.push(row);
                }
            }
            // --tune: after the listed configurations (so the GPU is warm), the split tuner on
            // this step; its winner then runs as one more row, checked like the others.
            if args.tune {
                let options = autotune::TuneOptions {
                    runs: args.runs,
                    warmup: args.warmup,
                    ..Default::default()
                };
                match autotune::tune_kv_cache_blocking(&ctx, &problem, &options) {
                    Ok(t) => {
                        for trial in &t.trials {
                            println!(
                                "|   tuner: {} splits, {:?} kernel | {:.4} ms |",
                                trial.splits, trial.tiles.kernel, trial.ms
                            );
                        }
                        let winner = DecodeTilesSpec {
                            kernel: Some(t.tiles.kernel),
                            ..Default::default()
                        };
                        let row = measure(Some(t.splits), winner, true)?;
                        all_ok &= row.error.is_none();
                        rows.push(row);
                    }
                    Err(e) => {
                        println!("| {kv} | {layout} (tuned) | tuner failed: {e} |");
                        all_ok = false;
                    }
                }
            }
        }
    }
    if let Some(path) = &args.json {
        let report = Report {
            run: common::RunInfo::new(&ctx, timing),
            max_storage_buffer_binding_size: caps.max_storage_buffer_binding_size,
            args,
            rows: &rows,
        };
        std::fs::write(path, serde_json::to_string_pretty(&report)? + "\n")?;
        eprintln!("wrote {}", path.display());
    }
    Ok(all_ok)
}

/// Sequence b's pages are b * per_seq .. (b + 1) * per_seq, in a seeded shuffled order.
fn shuffled_pages(batch: u32, per_seq: u32, seed: u64) -> Vec<u32> {
    let mut s = seed.wrapping_mul(0xD1B5_4A32_D192_ED03) | 1;
    let mut table = Vec::with_capacity((batch * per_seq) as usize);
    for b in 0..batch {
        let mut pages: Vec<u32> = (b * per_seq..(b + 1) * per_seq).collect();
        for i in (1..pages.len()).rev() {
            s ^= s << 13;
            s ^= s >> 7;
            s ^= s << 17;
            pages.swap(i, (s % (i as u64 + 1)) as usize);
        }
        table.extend(pages);
    }
    table
}

type Planned = kvcache::KvCachePlan;

fn bench(
    ctx: &FlashContext,
    timer: &StepTimer,
    args: &Args,
    (forced, warmup_ms): (DecodeTilesSpec, u64),
    problem: &KvCacheAttention,
    [q, k, v, out]: [&wgpu::Buffer; 4],
) -> wgpu_flash_attn::Result<(Vec<f64>, Planned)> {
    let tiles = forced.resolve(problem, ctx.caps())?;
    let planned = ctx.plan_kv_cache_with(problem, tiles)?;
    let buffers = KvCacheBuffers::new(q, k, v, out);
    // Warm-up: batches of steps in one submission, so the GPU stays busy and its clocks ramp up.
    let start = Instant::now();
    let mut warm = 0;
    while warm < args.warmup || start.elapsed().as_millis() < warmup_ms as u128 {
        let mut encoder = ctx.device().create_command_encoder(&Default::default());
        for _ in 0..8 {
            planned.encode(&mut encoder, &buffers)?;
        }
        ctx.queue().submit([encoder.finish()]);
        ctx.device()
            .poll(wgpu::PollType::wait_indefinitely())
            .map_err(|e| FlashError::Readback(e.to_string()))?;
        warm += 8;
    }
    let times = match timer {
        StepTimer::Queued { timer, flush } => {
            pollster::block_on(time_queued(ctx, &planned, &buffers, timer, flush))?
        }
        StepTimer::Idle(timer) => {
            let mut times = Vec::new();
            for _ in 0..args.runs {
                times.push(pollster::block_on(time_pass(
                    ctx,
                    timer.as_ref(),
                    |encoder, timer| {
                        planned.encode_timed(encoder, &buffers, timer.map(GpuTimer::writes))
                    },
                ))?);
            }
            times
        }
    };
    Ok((times, planned.plan().clone()))
}

/// `--timing queued`: as many steps as `timer` times, recorded in one submission, each between
/// its own two timestamps and after a clear of `flush` (256 MiB: what triton's `do_bench` does
/// before each PyTorch run, to leave nothing of use in the L2 cache), so that the GPU never idles
/// between steps. A clear and the step after it touch no common buffer, so nothing would order
/// them: a transition of the cleared buffer to a shader state after each clear (and the next
/// clear's own transition back) puts a barrier on either side of every step on Vulkan, so that
/// no clear overlaps a step (as stream order keeps them apart in CUDA).
async fn time_queued(
    ctx: &FlashContext,
    planned: &wgpu_flash_attn::KvCachePlanned,
    buffers: &KvCacheBuffers<'_>,
    timer: &GpuTimer,
    flush: &wgpu::Buffer,
) -> wgpu_flash_attn::Result<Vec<f64>> {
    let mut encoder = ctx.device().create_command_encoder(&Default::default());
    for i in 0..timer.pairs() {
        // clear_buffer moves the buffer back to a copy destination itself.
        encoder.clear_buffer(flush, 0, None);
        encoder.transition_resources(
            std::iter::once(wgpu::BufferTransition {
                buffer: flush,
                state: wgpu::BufferUses::STORAGE_READ_ONLY,
            }),
            std::iter::empty(),
        );
        planned.encode_timed(&mut encoder, buffers, Some(timer.writes_at(i)))?;
    }
    timer.resolve(&mut encoder);
    ctx.queue().submit([encoder.finish()]);
    timer.read_all_ms(ctx).await
}

/// Max |O - oracle| over sampled rows; the oracle is the textbook softmax in f64 over the
/// sequence's keys, found through the block table for the paged layout.
fn check(
    args: &Args,
    p: &KvCacheAttention,
    table: Option<&[u32]>,
    q: &[u8],
    [k, v]: [&CacheValues; 2],
    got: &[f32],
) -> f64 {
    let (hq, hkv, d) = (p.heads_q as usize, p.heads_kv as usize, p.head_dim as usize);
    let group = hq / hkv;
    let total_rows = p.total_q() as usize * hq;
    let mut s = args.seed | 1;
    let mut err = 0.0f64;
    for n in 0..args.check_rows.max(1) {
        s = s
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        let row = if n == 0 {
            0
        } else {
            (s >> 33) as usize % total_rows
        };
        let (t, h) = (row / hq, row % hq);
        let b = (t / p.seq_q(0) as usize) as u32;
        let i = t % p.seq_q(0) as usize;
        let kv_len = p.kv_len(b) as usize;
        let visible = kv_len - p.seq_q(b) as usize + i + 1; // causal, bottom-right
        let key_at = |j: usize| -> usize {
            let slot = match (table, &p.layout) {
                (Some(tb), kvcache::CacheLayout::Paged { page_size, .. }) => {
                    let ps = *page_size as usize;
                    let per_seq = p.pages_per_seq() as usize;
                    tb[b as usize * per_seq + j / ps] as usize * ps + j % ps
                }
                (_, kvcache::CacheLayout::Contiguous { capacity }) => {
                    b as usize * *capacity as usize + j
                }
                _ => unreachable!("a paged step has a table"),
            };
            (slot * hkv + h / group) * d
        };
        let qrow: Vec<f64> = (0..d).map(|c| value(q, row * d + c, p.dtype)).collect();
        let scores: Vec<f64> = (0..visible)
            .map(|j| {
                let at = key_at(j);
                p.scale() as f64 * (0..d).map(|c| qrow[c] * k.at(at + c, p.dtype)).sum::<f64>()
            })
            .collect();
        let max = scores.iter().cloned().fold(f64::NEG_INFINITY, f64::max);
        let w: Vec<f64> = scores.iter().map(|x| (x - max).exp()).collect();
        let sum: f64 = w.iter().sum();
        for c in 0..d {
            let o: f64 = (0..visible)
                .map(|j| w[j] * v.at(key_at(j) + c, p.dtype))
                .sum::<f64>()
                / sum;
            err = max_err(err, (got[row * d + c] as f64 - o).abs());
        }
    }
    err
}
