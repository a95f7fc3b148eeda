//! The main benchmark: FlashAttention forward against the materialized ("standard attention")
//! baseline, on the default adapter (honours `WGPU_BACKEND` / `WGPU_ADAPTER_NAME`).
//!
//! ```sh
//! cargo bench --bench attention                         # small defaults, fine on a software driver
//! cargo bench --bench attention -- --tokens 16384 --seqs 512,1024,2048,4096,8192,16384 \
//!     --dims 64,128 --dtypes f16,f32 --runs 20 --json results.json
//! cargo bench --bench attention -- --kernels portable,subgroup --tiles 32x32x16x16,48x16x16x16
//! ```
//!
//! Every kernel tier of `--kernels` runs every tile of `--tiles` (default: the plan's tiles for
//! that tier); tiers or tiles the adapter cannot run are skipped with a message, and listed under
//! `skipped` in the JSON (schema: BENCHMARKS.md). Progress goes to stderr, the table to stdout.
//!
//! Shapes follow the FlashAttention papers: a fixed number of total tokens (batch = tokens / N) and
//! a fixed hidden size (heads = hidden / head_dim). Time is measured on the GPU with timestamp
//! queries at the beginning and end of the pass where the device has `TIMESTAMP_QUERY`, otherwise as
//! the wall time of submit + wait; warm-up runs first (`--warmup` runs and at least `--warmup-ms`
//! of them, so that the clocks have ramped up), then the median of `--runs`. Inputs are
//! seeded random values (never zeros), rotated over three input sets when one set is small enough
//! (< 60 MB) that a cache could hold it. Every configuration is checked against the f64 oracle on a
//! sample of query rows; an error above tolerance makes the run exit nonzero.

mod common;

use common::{max_err, median, poison, read_back, utc_now};
use std::io::Write;
use std::path::PathBuf;
use std::time::Instant;

use clap::{Parser, ValueEnum};
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use serde::Serialize;
use wgpu::util::DeviceExt;
use wgpu_flash_attn::context::{from_dtype_bytes, to_dtype_bytes};
use wgpu_flash_attn::kernels::materialized::{Materialized, MaterializedOptions};
use wgpu_flash_attn::timing::{time_pass, GpuTimer};
use wgpu_flash_attn::{
    reference, Attention, AttentionBuffers, DType, FlashContext, FlashError, Kernel, PlanOptions,
    Tensor, Tiles,
};

/// Input sets are rotated when one set (Q, K, V) is smaller than this, so that a large L2 (50 MB on
/// an H100/H200) does not serve them from cache between runs.
const ROTATE_BELOW_BYTES: u64 = 60_000_000;
const INPUT_SETS_WHEN_SMALL: usize = 3;

#[derive(Parser, Debug, Clone, Serialize)]
#[command(about = "FlashAttention forward vs materialized attention on the default wgpu adapter")]
struct Args {
    /// Head dimensions to sweep.
    #[arg(long, value_delimiter = ',', default_value = "64,128")]
    dims: Vec<u32>,
    /// Total tokens per configuration: batch = max(1, tokens / seq).
    #[arg(long, default_value_t = 512)]
    tokens: u32,
    /// Hidden size: query heads = hidden / head_dim (unless --heads).
    #[arg(long, default_value_t = 2048)]
    hidden: u32,
    /// Query heads, overriding hidden / head_dim.
    #[arg(long)]
    heads: Option<u32>,
    /// Key/value heads (GQA); default: as many as query heads.
    #[arg(long)]
    heads_kv: Option<u32>,
    /// Sequence lengths (seq_q = seq_kv) to sweep.
    #[arg(long, value_delimiter = ',', default_value = "128,256")]
    seqs: Vec<u32>,
    /// Storage types to sweep (f32, f16).
    #[arg(long, value_delimiter = ',', default_value = "f32,f16", value_parser = str::parse::<DType>)]
    #[serde(skip)]
    dtypes: Vec<DType>,
    /// Causal mask: both, on or off.
    #[arg(long, value_enum, default_value_t = Causal::Both)]
    causal: Causal,
    /// Also run the materialized baseline on each shape (on or off).
    #[arg(long, value_enum, default_value_t = OnOff::On)]
    baseline: OnOff,
    /// Kernel tiers to sweep: portable, subgroup, coop-matrix, or auto (the plan's choice). A tier
    /// the adapter lacks is skipped with a message (and listed under "skipped" in the JSON).
    #[arg(long, value_delimiter = ',', default_value = "portable,subgroup,coop-matrix", value_parser = parse_kernel)]
    #[serde(skip)]
    kernels: Vec<Option<Kernel>>,
    /// Force the flash kernel's tiles, as a list of BMxBNxTXxTY (e.g. 32x32x16x16,48x16x16x16):
    /// each tier runs each tile. Default: the plan's choice per tier.
    #[arg(long, value_delimiter = ',', value_parser = |s: &str| s.parse::<Tiles>().map_err(|e| e.to_string()))]
    #[serde(skip)]
    tiles: Vec<Tiles>,
    /// The tensor-core tier's scores in registers (auto: where the device allows it; off:
    /// through workgroup memory; on: required). Rows that keep them in registers are named
    /// coop-matrix+regs.
    #[arg(long, value_enum, default_value_t = Switch::Auto)]
    coop_elements: Switch,
    /// Unroll the portable and subgroup kernels' products in the shader text (auto: as the device
    /// family's entry says; on: Q K^T, and P V where the plan's rule allows; off). The tiles
    /// column says which loops ran unrolled.
    #[arg(long, value_enum, default_value_t = Switch::Auto)]
    unroll: Switch,
    /// Read f16 through packed u32 words even where SHADER_F16 exists (flash and baseline).
    #[arg(long)]
    packed_f16: bool,
    /// Let f32 and bf16 problems run on the tensor-core tier, which rounds their inputs to f16
    /// (`Attention::allow_f16_products`); such rows' storage reads e.g. `f32 (f16 products)`.
    #[arg(long)]
    f16_products: bool,
    /// Make the flash kernel write the row log-sum-exp too (the baseline never does).
    #[arg(long)]
    lse: bool,
    /// Sliding window LEFT,RIGHT (FlashAttention's window_size; -1 = unbounded). The baseline does
    /// not support windows and is skipped for such rows.
    #[arg(long, value_parser = parse_window, allow_hyphen_values = true)]
    window: Option<(i32, i32)>,
    /// Timed runs per kernel and configuration (the median is reported).
    #[arg(long, default_value_t = 3)]
    runs: usize,
    /// Untimed warm-up runs before them (at least).
    #[arg(long, default_value_t = 1)]
    warmup: usize,
    /// Untimed warm-up time per kernel and configuration, milliseconds (at least). The GPU idles
    /// while the host computes the oracle between configurations; without this, a short run
    /// measures the clocks the GPU is still ramping up from.
    #[arg(long, default_value_t = 200)]
    warmup_ms: u64,
    /// Query rows checked against the f64 oracle per configuration (plus the first and last row).
    #[arg(long, default_value_t = 16)]
    check_rows: usize,
    /// Seed of the random inputs and of the checked rows.
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

#[derive(ValueEnum, Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
enum Switch {
    Auto,
    On,
    Off,
}

impl Switch {
    /// The plan option: `None` leaves the choice to the plan.
    fn forced(self) -> Option<bool> {
        match self {
            Switch::Auto => None,
            Switch::On => Some(true),
            Switch::Off => Some(false),
        }
    }
}

#[derive(ValueEnum, Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
enum Causal {
    Both,
    On,
    Off,
}

#[derive(ValueEnum, Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
enum OnOff {
    On,
    Off,
}

fn parse_kernel(s: &str) -> Result<Option<Kernel>, String> {
    match s {
        "auto" => Ok(None),
        _ => ALL_KERNELS
            .into_iter()
            .find(|k| k.name() == s)
            .map(Some)
            .ok_or_else(|| {
                format!("unknown kernel {s:?} (expected portable, subgroup, coop-matrix or auto)")
            }),
    }
}

const ALL_KERNELS: [Kernel; 3] = [
    Kernel::ForwardPortable,
    Kernel::ForwardSubgroup,
    Kernel::ForwardCoopMatrix,
];

fn kernel_name(k: Option<Kernel>) -> &'static str {
    k.map_or("auto", |k| k.name())
}

/// Tolerances on max |O - oracle| over the checked rows, as multiples of max |v|.
///
/// Every output row is a convex combination of rows of V, so |O| <= max|v| and errors scale with it.
/// The oracle reads exactly the stored inputs (f16 inputs are rounded before upload and before the
/// oracle sees them), so only the kernels' arithmetic and their output rounding count:
/// - f32: f32 dot products over d <= 256 and sums over N keys (up to 128k) give relative errors of
///   order sqrt(N) * 2^-24 (2e-5 at N = 128k), plus WGSL's exp / exp2 (a few ULP); measured errors
///   are ~1e-7. 1e-4 leaves room for long sequences and less accurate hardware exp, and still catches
///   gross indexing, masking or synchronization faults.
/// - f16: O is rounded to f16 on output, up to half an ULP: 2^-12 * max|v| = 2.4e-4 * max|v|.
///   Tensor-core variants may also round P (and S) to f16, adding errors of the same order.
///   4e-3 = 16 half-ULPs at 1.0 covers these with margin.
/// - bf16: the output rounding alone is up to 2^-9 = 2e-3; 3e-2 = 16 half-ULPs.
/// - f32 that allows f16 products: the inputs and P rounded to f16 as in an f16 problem, so f16's
///   tolerance (on every tier: the template is made before the tier is known).
fn tolerance(p: &Attention) -> f64 {
    match p.dtype {
        DType::F32 if p.allow_f16_products => 4e-3,
        DType::F32 => 1e-4,
        DType::F16 => 4e-3,
        DType::BF16 => 3e-2,
    }
}

/// One result row (one configuration).
#[derive(Debug, Clone, Serialize)]
struct Row {
    adapter: String,
    batch: u32,
    heads_q: u32,
    heads_kv: u32,
    seq: u32,
    head_dim: u32,
    dtype: &'static str,
    storage: String,
    causal: bool,
    /// The kernel tier that ran ("portable", "subgroup", "coop-matrix").
    kernel: String,
    tiles: String,
    /// The tiles column of the table: the tiles with how Q is read and which loops ran unrolled
    /// (`Plan::tiles_label`); the JSON has those as the fields around it.
    #[serde(skip)]
    tiles_label: String,
    /// Q read from device memory in the score loop (forced tiles too large otherwise).
    stream_q: bool,
    /// The Q K^T loop over the head dimension unrolled in the shader text.
    unroll_qk: bool,
    /// The P V loop over the key tile unrolled too.
    unroll_pv: bool,
    flops: u64,
    flash_ms: Option<f64>,
    flash_tflops: Option<f64>,
    flash_device_bytes: Option<u64>,
    flash_max_err: Option<f64>,
    baseline_ms: Option<f64>,
    baseline_tflops: Option<f64>,
    baseline_device_bytes: Option<u64>,
    baseline_max_err: Option<f64>,
    /// Bytes of one (batch, head) pair's scores, when the baseline could not allocate them.
    baseline_needed_bytes: Option<u64>,
    baseline_note: Option<String>,
    speedup: Option<f64>,
    tolerance: f64,
    max_abs_v: f64,
    ok: bool,
    error: Option<String>,
}

#[derive(Serialize)]
struct Report<'a> {
    adapter: AdapterInfo,
    date: String,
    /// The exact command line of this process.
    command: String,
    /// The same arguments as a `cargo bench` command.
    cargo_command: String,
    timing: &'static str,
    args: &'a Args,
    dtypes: Vec<&'static str>,
    /// The tiers asked for ("auto" is the plan's choice).
    kernels: Vec<&'static str>,
    /// The forced tiles (empty: the plan's choice).
    tiles: Vec<String>,
    /// Tiers or (tier, tiles) pairs that did not run, with the reason.
    skipped: &'a [Skipped],
    rows: &'a [Row],
}

/// Something of the sweep that did not run on this adapter.
#[derive(Debug, Clone, Serialize, PartialEq)]
struct Skipped {
    kernel: &'static str,
    tiles: Option<String>,
    /// Configuration ("d=128 N=8192 f16 causal") or null for the whole sweep.
    config: Option<String>,
    reason: String,
}

#[derive(Serialize)]
struct AdapterInfo {
    name: String,
    backend: String,
    driver: String,
    shader_f16: bool,
    timestamp_query: bool,
    subgroup_sizes: Option<(u32, u32)>,
    max_storage_buffer_binding_size: u64,
    max_buffer_size: u64,
}

fn main() {
    let args = Args::parse();
    match run(&args) {
        Ok(true) => {}
        Ok(false) => {
            eprintln!("FAILED: at least one configuration failed or exceeded its error tolerance");
            std::process::exit(1);
        }
        Err(e) => {
            eprintln!("error: {e}");
            std::process::exit(2);
        }
    }
}

/// The device buffers of one configuration.
struct Buffers {
    sets: Vec<[wgpu::Buffer; 3]>,
    out: wgpu::Buffer,
    lse: Option<wgpu::Buffer>,
    out_bytes: u64,
}

impl Buffers {
    fn attention(&self, set: usize) -> AttentionBuffers<'_> {
        let [q, k, v] = &self.sets[set % self.sets.len()];
        AttentionBuffers {
            q: q.into(),
            k: k.into(),
            v: v.into(),
            out: (&self.out).into(),
            lse: self.lse.as_ref().map(Into::into),
            alibi_slopes: None,
            sinks: None,
            mask: None,
        }
    }
}

type Encode<'a> = dyn FnMut(&mut wgpu::CommandEncoder, usize, Option<&wgpu::QuerySet>) -> wgpu_flash_attn::Result<()>
    + 'a;

/// Warm-up (`--warmup` runs and `--warmup-ms`), then `runs` timed runs, each in its own
/// submission; returns milliseconds per run.
fn time_runs(
    ctx: &FlashContext,
    timer: Option<&GpuTimer>,
    args: &Args,
    encode: &mut Encode,
) -> wgpu_flash_attn::Result<Vec<f64>> {
    let start = Instant::now();
    let mut r = 0;
    while r < args.warmup || start.elapsed().as_millis() < u128::from(args.warmup_ms) {
        pollster::block_on(time_pass(ctx, None, |encoder, _| encode(encoder, r, None)))?;
        r += 1;
    }
    let mut times = Vec::with_capacity(args.runs);
    for i in 0..args.runs {
        times.push(pollster::block_on(time_pass(
            ctx,
            timer,
            |encoder, timer| encode(encoder, r + i, timer.map(GpuTimer::query_set)),
        ))?);
    }
    Ok(times)
}

/// Poisons O with NaN, runs once on input set 0, reads O back and returns max |O - oracle| over the
/// checked rows.
fn verify(
    ctx: &FlashContext,
    p: &Attention,
    bufs: &Buffers,
    want: &[(u32, u32, u32)],
    oracle: &[reference::Row],
    encode: &mut Encode,
) -> wgpu_flash_attn::Result<f64> {
    poison(ctx, &bufs.out, bufs.out_bytes);
    let mut encoder = ctx.device().create_command_encoder(&Default::default());
    encode(&mut encoder, 0, None)?;
    ctx.queue().submit([encoder.finish()]);
    let got = from_dtype_bytes(
        &pollster::block_on(read_back(ctx, &bufs.out, bufs.out_bytes))?,
        p.dtype,
    );
    let so = p.strides_of(Tensor::O);
    let d = p.head_dim as usize;
    let mut err = 0.0f64;
    for (&(b, h, i), (row, _lse)) in want.iter().zip(oracle) {
        let at = so.offset(b as u64, i as u64, h as u64) as usize;
        for (g, w) in got[at..at + d].iter().zip(row) {
            err = max_err(err, (*g as f64 - w).abs());
        }
    }
    Ok(err)
}

/// Seeded values in [-1, 1), rounded to the storage type so that the oracle sees what the GPU sees.
/// (Zero itself has probability ~2^-24 per element; the inputs are never all-zero.)
fn random_inputs(n: u64, dtype: DType, rng: &mut ChaCha8Rng) -> Vec<f32> {
    (0..n)
        .map(|_| {
            let x = rng.random_range(-1.0f32..1.0);
            match dtype {
                DType::F32 => x,
                DType::F16 => half::f16::from_f32(x).to_f32(),
                DType::BF16 => half::bf16::from_f32(x).to_f32(),
            }
        })
        .collect()
}

fn fmt_opt(v: Option<f64>, prec: usize) -> String {
    v.map_or("-".into(), |x| format!("{x:.prec$}"))
}

fn mb(bytes: u64) -> String {
    format!("{:.1}", bytes as f64 / 1e6)
}

fn run(args: &Args) -> Result<bool, Box<dyn std::error::Error>> {
    if args.runs == 0 {
        return Err("--runs must be at least 1".into());
    }
    let ctx = FlashContext::default_blocking()?;
    let caps = ctx.caps().clone();
    let timer = GpuTimer::new(&ctx);
    let timing = if timer.is_some() {
        "gpu-timestamps"
    } else {
        "wall-clock (submit + wait)"
    };
    let adapter = format!("{} ({})", caps.name, caps.backend);
    println!("# wgpu-flash-attn forward benchmark");
    println!();
    println!(
        "adapter: {} | backend: {} | driver: {} | subgroups: {:?}",
        caps.name, caps.backend, caps.driver, caps.subgroup_sizes
    );
    match ctx.coop_elements_status() {
        Ok(()) => println!("tensor-core scores in registers: available"),
        Err(why) => println!("tensor-core scores in registers: unavailable ({why})"),
    }
    println!(
        "timing: {timing}, median of {} runs after at least {} warm-up runs and {} ms | tokens {} | hidden {} | f16 read {}",
        args.runs,
        args.warmup,
        args.warmup_ms,
        args.tokens,
        args.hidden,
        if args.packed_f16 { "packed (forced)" } else if caps.shader_f16 { "native" } else { "packed" }
    );

    // Tiers the adapter lacks are dropped here, loudly, once.
    let mut skipped = Vec::new();
    let mut kernels = Vec::new();
    for &k in &args.kernels {
        if kernels.contains(&k) {
            continue;
        }
        if let Some(kernel) = k {
            let probe = Attention::new(1, 1, 1, 16, 16, 64).dtype(DType::F16);
            let forced = PlanOptions {
                kernel: Some(kernel),
                ..Default::default()
            };
            if let Err(e) = ctx.plan_with(&probe, forced) {
                eprintln!(
                    "SKIPPED: the {} tier: this adapter cannot run it ({e})",
                    kernel.name()
                );
                println!("\nSKIPPED: the {} tier: {e}", kernel.name());
                skipped.push(Skipped {
                    kernel: kernel.name(),
                    tiles: None,
                    config: None,
                    reason: e.to_string(),
                });
                continue;
            }
        }
        kernels.push(k);
    }
    if kernels.is_empty() {
        return Err("none of the requested kernel tiers runs on this adapter".into());
    }
    let tiles: Vec<Option<Tiles>> = if args.tiles.is_empty() {
        vec![None]
    } else {
        args.tiles.iter().copied().map(Some).collect()
    };
    let variants: Vec<(Option<Kernel>, Option<Tiles>)> = kernels
        .iter()
        .flat_map(|&k| tiles.iter().map(move |&t| (k, t)))
        .collect();

    println!();
    println!(
        "| adapter | B | H | Hkv | N | d | dtype | causal | kernel | tiles | flash ms | flash TFLOP/s | flash MB | base ms | base TFLOP/s | base MB | speedup | err flash | err base |"
    );
    println!("|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|");

    let causals: &[bool] = match args.causal {
        Causal::Both => &[false, true],
        Causal::On => &[true],
        Causal::Off => &[false],
    };
    let mut configs = Vec::new();
    for &d in &args.dims {
        for &n in &args.seqs {
            for &dtype in &args.dtypes {
                for &causal in causals {
                    configs.push((d, n, dtype, causal));
                }
            }
        }
    }
    let mut rows = Vec::new();
    let mut all_ok = true;
    let started = Instant::now();
    for (idx, &(d, n, dtype, causal)) in configs.iter().enumerate() {
        let heads = match args.heads {
            Some(h) => h,
            None if args.hidden >= d => args.hidden / d,
            None => {
                return Err(format!("--hidden {} is smaller than head_dim {d}", args.hidden).into())
            }
        };
        let heads_kv = args.heads_kv.unwrap_or(heads);
        let batch = (args.tokens / n).max(1);
        let problem = Attention::new(batch, heads, heads_kv, n, n, d)
            .dtype(dtype)
            .allow_f16_products(args.f16_products)
            .causal(causal)
            .window_size(
                args.window.map_or(-1, |w| w.0),
                args.window.map_or(-1, |w| w.1),
            )
            .with_lse(args.lse);
        let label = format!(
            "B={batch} H={heads} N={n} d={d} {} causal={causal}",
            dtype.name()
        );
        eprintln!("[{}/{}] {label}", idx + 1, configs.len());
        let new_rows = bench_config(
            &ctx,
            timer.as_ref(),
            args,
            &adapter,
            &problem,
            &variants,
            &mut skipped,
        );
        for row in new_rows {
            all_ok &= row.ok;
            print_row(&row);
            rows.push(row);
        }
        eprintln!(
            "[{}/{}] done ({:.0} s elapsed)",
            idx + 1,
            configs.len(),
            started.elapsed().as_secs_f64()
        );
    }
    // One line per distinct (tier, tiles, reason), with how many configurations it concerned.
    let mut summary: Vec<(&Skipped, usize)> = Vec::new();
    for s in &skipped {
        match summary
            .iter_mut()
            .find(|(x, _)| (x.kernel, &x.tiles, &x.reason) == (s.kernel, &s.tiles, &s.reason))
        {
            Some((_, n)) => *n += 1,
            None => summary.push((s, 1)),
        }
    }
    if !summary.is_empty() {
        println!();
    }
    for (s, n) in summary {
        println!(
            "SKIPPED: {} {}{}: {}",
            s.kernel,
            s.tiles.as_deref().unwrap_or("(every tile)"),
            match (&s.config, n) {
                (None, _) => String::new(),
                (Some(c), 1) => format!(" on {c}"),
                (Some(_), n) => format!(" on {n} configurations"),
            },
            s.reason
        );
    }
    if let Some(path) = &args.json {
        let argv: Vec<String> = std::env::args().collect();
        let user_args: Vec<String> = argv
            .iter()
            .skip(1)
            .filter(|a| *a != "--bench")
            .map(|a| shell_quote(a))
            .collect();
        let report = Report {
            adapter: AdapterInfo {
                name: caps.name.clone(),
                backend: caps.backend.clone(),
                driver: caps.driver.clone(),
                shader_f16: caps.shader_f16,
                timestamp_query: caps.timestamp_query,
                subgroup_sizes: caps.subgroup_sizes,
                max_storage_buffer_binding_size: caps.max_storage_buffer_binding_size,
                max_buffer_size: caps.max_buffer_size,
            },
            date: utc_now(),
            command: argv
                .iter()
                .map(|a| shell_quote(a))
                .collect::<Vec<_>>()
                .join(" "),
            cargo_command: format!("cargo bench --bench attention -- {}", user_args.join(" "))
                .trim_end()
                .to_string(),
            timing,
            args,
            dtypes: args.dtypes.iter().map(|d| d.name()).collect(),
            kernels: args.kernels.iter().map(|&k| kernel_name(k)).collect(),
            tiles: args.tiles.iter().map(Tiles::to_string).collect(),
            skipped: &skipped,
            rows: &rows,
        };
        std::fs::write(path, serde_json::to_string_pretty(&report)? + "\n")?;
        eprintln!("wrote {}", path.display());
    }
    Ok(all_ok)
}

fn print_row(row: &Row) {
    let base_ms = match (
        row.baseline_ms,
        row.baseline_needed_bytes,
        &row.baseline_note,
    ) {
        (Some(t), _, _) => format!("{t:.3}"),
        (None, Some(needed), _) => {
            format!("cannot allocate ({} MB of scores per head)", mb(needed))
        }
        (None, None, Some(_)) => "not run (see the note below)".into(),
        (None, None, None) => "-".into(),
    };
    println!(
        "| {} | {} | {} | {} | {} | {} | {} | {} | {} | {} | {} | {} | {} | {} | {} | {} | {} | {} | {} |",
        row.adapter,
        row.batch,
        row.heads_q,
        row.heads_kv,
        row.seq,
        row.head_dim,
        row.storage,
        if row.causal { "yes" } else { "no" },
        row.kernel,
        row.tiles_label,
        fmt_opt(row.flash_ms, 3),
        fmt_opt(row.flash_tflops, 4),
        row.flash_device_bytes.map_or("-".into(), mb),
        base_ms,
        fmt_opt(row.baseline_tflops, 4),
        row.baseline_device_bytes.map_or("-".into(), mb),
        row.speedup.map_or("-".into(), |s| format!("{s:.2}x")),
        row.flash_max_err.map_or("-".into(), |e| format!("{e:.1e}")),
        row.baseline_max_err.map_or("-".into(), |e| format!("{e:.1e}")),
    );
    if let Some(e) = &row.error {
        println!("|   | error: {e} |");
    } else if let Some(note) = &row.baseline_note {
        if row.baseline_ms.is_none() {
            println!("|   | baseline: {note} |");
        }
    }
    std::io::stdout().flush().ok();
}

/// An empty row for one configuration.
fn empty_row(adapter: &str, p: &Attention) -> Row {
    Row {
        adapter: adapter.to_string(),
        batch: p.batch,
        heads_q: p.heads_q,
        heads_kv: p.heads_kv,
        seq: p.seq_q,
        head_dim: p.head_dim,
        dtype: p.dtype.name(),
        storage: p.dtype.name().to_string(),
        causal: p.causal,
        kernel: "-".into(),
        tiles: "-".into(),
        tiles_label: "-".into(),
        stream_q: false,
        unroll_qk: false,
        unroll_pv: false,
        flops: p.flops(),
        flash_ms: None,
        flash_tflops: None,
        flash_device_bytes: None,
        flash_max_err: None,
        baseline_ms: None,
        baseline_tflops: None,
        baseline_device_bytes: None,
        baseline_max_err: None,
        baseline_needed_bytes: None,
        baseline_note: None,
        speedup: None,
        tolerance: tolerance(p),
        max_abs_v: 0.0,
        ok: false,
        error: None,
    }
}

/// Benchmarks and checks one configuration on every (tier, tiles) variant, plus the baseline once;
/// one row per variant that runs. Every failure is recorded in a row; variants the adapter cannot
/// plan are recorded in `skipped`.
fn bench_config(
    ctx: &FlashContext,
    timer: Option<&GpuTimer>,
    args: &Args,
    adapter: &str,
    p: &Attention,
    variants: &[(Option<Kernel>, Option<Tiles>)],
    skipped: &mut Vec<Skipped>,
) -> Vec<Row> {
    let mut template = empty_row(adapter, p);
    let setup = match Setup::new(ctx, args, p) {
        Ok(s) => s,
        Err(e) => {
            template.error = Some(e.to_string());
            return vec![template];
        }
    };
    template.max_abs_v = setup.max_abs_v;
    template.flash_device_bytes = Some(
        setup.tensor_bytes
            + wgpu_flash_attn::plan::plan(p, ctx.caps()).map_or(0, |pl| pl.scratch_bytes),
    );
    if args.baseline == OnOff::On {
        eprintln!("  baseline ...");
        if let Err(e) = bench_baseline(ctx, timer, args, p, &setup, &mut template) {
            template.error = Some(format!("baseline: {e}"));
        }
    }
    let config = format!(
        "d={} N={} {}{}",
        p.head_dim,
        p.seq_q,
        p.dtype.name(),
        if p.causal { " causal" } else { "" }
    );
    let mut rows = Vec::new();
    for &(kernel, tiles) in variants {
        let options = PlanOptions {
            tiles,
            force_packed_f16: args.packed_f16,
            kernel,
            coop_elements: args.coop_elements.forced(),
            unroll: args.unroll.forced(),
        };
        let plan = match ctx.plan_with(p, options) {
            Ok(plan) => plan,
            Err(e) => {
                eprintln!(
                    "  SKIPPED: {} {}: {e}",
                    kernel_name(kernel),
                    tiles.map_or("(planned tiles)".into(), |t| t.to_string())
                );
                skipped.push(Skipped {
                    kernel: kernel_name(kernel),
                    tiles: tiles.map(|t| t.to_string()),
                    config: Some(config.clone()),
                    reason: e.to_string(),
                });
                continue;
            }
        };
        let mut row = template.clone();
        row.kernel = format!(
            "{}{}",
            plan.plan().kernel.name(),
            if plan.plan().coop_elements {
                "+regs"
            } else {
                ""
            }
        );
        row.tiles = plan.plan().tiles.to_string();
        row.tiles_label = plan.plan().tiles_label();
        row.stream_q = plan.plan().stream_q;
        row.unroll_qk = plan.plan().unroll_qk;
        row.unroll_pv = plan.plan().unroll_pv;
        row.storage = plan.plan().storage.name().to_string();
        if plan.plan().kernel == Kernel::ForwardCoopMatrix && p.dtype != DType::F16 {
            row.storage.push_str(" (f16 products)");
        }
        row.flash_device_bytes = Some(plan.plan().tensor_bytes() + plan.plan().scratch_bytes);
        eprint!("  {} {} ... ", row.kernel, row.tiles_label);
        match bench_flash(ctx, timer, args, p, &setup, &plan, &mut row) {
            Ok(()) => {}
            Err(e) => row.error = Some(e.to_string()),
        }
        row.ok = row.error.is_none();
        eprintln!(
            "{} ms{}",
            fmt_opt(row.flash_ms, 3),
            row.error
                .as_ref()
                .map_or(String::new(), |e| format!(" ERROR: {e}"))
        );
        rows.push(row);
    }
    if rows.is_empty() {
        template.error = Some(format!("no kernel tier could run {config} (see skipped)"));
        rows.push(template);
    }
    rows
}

/// Inputs, outputs and the oracle's rows of one configuration, shared by its variants.
struct Setup {
    bufs: Buffers,
    want: Vec<(u32, u32, u32)>,
    oracle: Vec<reference::Row>,
    max_abs_v: f64,
    tensor_bytes: u64,
}

impl Setup {
    fn new(ctx: &FlashContext, args: &Args, p: &Attention) -> wgpu_flash_attn::Result<Setup> {
        // Inputs: set 0 is kept on the host for the oracle; more sets only rotate through the cache.
        let device = ctx.device();
        let set_bytes: u64 = [Tensor::Q, Tensor::K, Tensor::V]
            .iter()
            .map(|&t| p.span_of(t) * p.dtype.size())
            .sum();
        let n_sets = if set_bytes < ROTATE_BELOW_BYTES {
            INPUT_SETS_WHEN_SMALL
        } else {
            1
        };
        let mut rng = ChaCha8Rng::seed_from_u64(
            args.seed ^ (p.seq_q as u64) << 20 ^ (p.head_dim as u64) << 40,
        );
        let mut host = Vec::new();
        let oom = device.push_error_scope(wgpu::ErrorFilter::OutOfMemory);
        let mut sets = Vec::with_capacity(n_sets);
        for s in 0..n_sets {
            let mut make = |t: Tensor| {
                let data = random_inputs(p.span_of(t), p.dtype, &mut rng);
                let buf = device.create_buffer_init(&wgpu::util::BufferInitDescriptor {
                    label: Some(t.name()),
                    contents: &to_dtype_bytes(&data, p.dtype),
                    usage: wgpu::BufferUsages::STORAGE,
                });
                if s == 0 {
                    host.push(data);
                }
                buf
            };
            sets.push([make(Tensor::Q), make(Tensor::K), make(Tensor::V)]);
        }
        let out_bytes = (p.span_of(Tensor::O) * p.dtype.size()).next_multiple_of(4);
        let usage = wgpu::BufferUsages::STORAGE
            | wgpu::BufferUsages::COPY_SRC
            | wgpu::BufferUsages::COPY_DST;
        let out = device.create_buffer(&wgpu::BufferDescriptor {
            label: Some("out"),
            size: out_bytes,
            usage,
            mapped_at_creation: false,
        });
        let lse = p.with_lse.then(|| {
            device.create_buffer(&wgpu::BufferDescriptor {
                label: Some("lse"),
                size: p.lse_len() * 4,
                usage,
                mapped_at_creation: false,
            })
        });
        if let Some(err) = pollster::block_on(oom.pop()) {
            return Err(FlashError::Wgpu(format!("allocating the tensors: {err}")));
        }
        // The rows to check: first, last, and a seeded sample.
        let mut want = vec![(0, 0, 0), (p.batch - 1, p.heads_q - 1, p.seq_q - 1)];
        want.extend((0..args.check_rows).map(|_| {
            (
                rng.random_range(0..p.batch),
                rng.random_range(0..p.heads_q),
                rng.random_range(0..p.seq_q),
            )
        }));
        let oracle = reference::rows(p, &host[0], &host[1], &host[2], &want);
        let max_abs_v = host[2].iter().fold(0.0f64, |m, &x| m.max(x.abs() as f64));
        let tensor_bytes =
            (p.len_of(Tensor::Q) + p.len_of(Tensor::K) + p.len_of(Tensor::V) + p.len_of(Tensor::O))
                * p.dtype.size()
                + if p.with_lse { p.lse_len() * 4 } else { 0 };
        Ok(Setup {
            bufs: Buffers {
                sets,
                out,
                lse,
                out_bytes,
            },
            want,
            oracle,
            max_abs_v,
            tensor_bytes,
        })
    }
}

/// Times and checks one flash plan into `row`.
fn bench_flash(
    ctx: &FlashContext,
    timer: Option<&GpuTimer>,
    args: &Args,
    p: &Attention,
    setup: &Setup,
    plan: &wgpu_flash_attn::FlashPlan,
    row: &mut Row,
) -> wgpu_flash_attn::Result<()> {
    let bufs = &setup.bufs;
    let mut flash = |enc: &mut wgpu::CommandEncoder, set: usize, qs: Option<&wgpu::QuerySet>| {
        let writes = qs.map(|query_set| wgpu::ComputePassTimestampWrites {
            query_set,
            beginning_of_pass_write_index: Some(0),
            end_of_pass_write_index: Some(1),
        });
        plan.encode_timed(enc, &bufs.attention(set), writes)
    };
    let ms = median(time_runs(ctx, timer, args, &mut flash)?);
    row.flash_ms = Some(ms);
    row.flash_tflops = Some(p.flops() as f64 / (ms * 1e-3) / 1e12);
    row.speedup = row.baseline_ms.map(|b| b / ms);
    let err = verify(ctx, p, bufs, &setup.want, &setup.oracle, &mut flash)?;
    row.flash_max_err = Some(err);
    let tol = row.tolerance * row.max_abs_v;
    if err > tol {
        row.error = Some(format!(
            "flash error {err:.3e} exceeds the tolerance {tol:.3e}"
        ));
    }
    Ok(())
}

/// Times and checks the materialized baseline into the row template shared by the variants.
fn bench_baseline(
    ctx: &FlashContext,
    timer: Option<&GpuTimer>,
    args: &Args,
    p: &Attention,
    setup: &Setup,
    row: &mut Row,
) -> wgpu_flash_attn::Result<()> {
    let bufs = &setup.bufs;
    let opts = MaterializedOptions {
        force_packed_f16: args.packed_f16,
        ..Default::default()
    };
    match Materialized::new_with(ctx, p, opts) {
        Ok(base) => {
            row.baseline_device_bytes = Some(
                setup.tensor_bytes - if p.with_lse { p.lse_len() * 4 } else { 0 }
                    + base.scratch_bytes(),
            );
            let mut encode =
                |enc: &mut wgpu::CommandEncoder, set: usize, qs: Option<&wgpu::QuerySet>| {
                    base.encode(enc, &bufs.attention(set), qs.map(|q| (q, 0, 1)))
                };
            let bms = median(time_runs(ctx, timer, args, &mut encode)?);
            row.baseline_ms = Some(bms);
            row.baseline_tflops = Some(p.flops() as f64 / (bms * 1e-3) / 1e12);
            let berr = verify(ctx, p, bufs, &setup.want, &setup.oracle, &mut encode)?;
            row.baseline_max_err = Some(berr);
            let tol = row.tolerance * row.max_abs_v;
            if berr > tol {
                row.error = Some(format!(
                    "baseline error {berr:.3e} exceeds the tolerance {tol:.3e}"
                ));
            }
        }
        Err(FlashError::DeviceLimit {
            what,
            needed,
            limit,
        }) => {
            row.baseline_needed_bytes = Some(needed);
            row.baseline_note = Some(format!(
                "cannot allocate ({needed} B needed, limit {limit} B: {what})"
            ));
        }
        Err(e @ FlashError::BadOption { .. }) => {
            row.baseline_note = Some(format!("not supported ({e})"));
        }
        Err(e) => {
            row.baseline_note = Some(format!("cannot allocate ({e})"));
        }
    }
    Ok(())
}

/// Parses `LEFT,RIGHT` (each -1 or more).
fn parse_window(s: &str) -> Result<(i32, i32), String> {
    let parts: Vec<&str> = s.split(',').collect();
    match parts.as_slice() {
        [l, r] => Ok((
            l.trim().parse().map_err(|e| format!("{e}"))?,
            r.trim().parse().map_err(|e| format!("{e}"))?,
        )),
        _ => Err(format!("expected LEFT,RIGHT, got {s:?}")),
    }
}

fn shell_quote(s: &str) -> String {
    if !s.is_empty()
        && s.chars()
            .all(|c| c.is_ascii_alphanumeric() || "-_=.,/:+@%".contains(c))
    {
        s.to_string()
    } else {
        format!("'{}'", s.replace('\'', r"'\''"))
    }
}
