//! Opt-in autotuning: time candidate plans on the caller's adapter and remember the winner.
//!
//! The tile table ([`crate::tuning`]) is a good guess per device family; [`tune`] measures instead.
//! It runs every kernel tier the device offers with the candidate tiles of that tier that fit
//! (the tensor-core table for the tensor-core tier; the streamed-Q, family and generic tiles for
//! the others), plus the plan's own choice, on the caller's problem (seeded inputs), timed with
//! GPU timestamps where the device has
//! `TIMESTAMP_QUERY` (otherwise the wall time of submit and wait, native only), and returns the
//! fastest as [`PlanOptions`] for [`FlashContext::plan_with`].
//!
//! Winners are cached per adapter, driver and problem class ([`TuneKey`]: kernel request,
//! storage and whether f16 products are allowed, head_dim, causal and a power-of-two bucket of
//! the sequence length). On native targets
//! [`TuneOptions::cache_dir`] keeps them in `tiles.json` in that directory ([`default_cache_dir`]:
//! `$XDG_CACHE_HOME/wgpu-flash-attn` or `~/.cache/wgpu-flash-attn`); the browser has no disk
//! cache. A cache file that cannot be parsed is ignored: the tuner measures again, says so in
//! [`Tuned::cache_note`] and replaces the file with a valid one.
//!
//! [`tune_kv_cache`] does the same for a KV-cache step's split count and kernel (the plan's rule
//! for splits is tuned on an H200), with winners in the same file.
//!
//! ```no_run
//! # fn main() -> wgpu_flash_attn::Result<()> {
//! use wgpu_flash_attn::{autotune, Attention, DType, FlashContext};
//! let ctx = FlashContext::default_blocking()?;
//! let problem = Attention::new(2, 16, 16, 4096, 4096, 128).dtype(DType::F16);
//! let options = autotune::TuneOptions {
//!     cache_dir: autotune::default_cache_dir(),
//!     ..Default::default()
//! };
//! let tuned = autotune::tune_blocking(&ctx, &problem, &options)?;
//! println!("{} {:?}: {:.3} ms", tuned.kernel.name(), tuned.tiles, tuned.ms);
//! let plan = ctx.plan_with(&problem, tuned.options)?;
//! # let _ = plan; Ok(()) }
//! ```

use serde::{Deserialize, Serialize};

use crate::context::{to_dtype_bytes, FlashContext, HostInputs, ProblemBuffers};
use crate::error::{FlashError, Result};
use crate::kernels::decode::KvCacheBuffers;
use crate::kvcache::{
    self, CacheLayout, DecodeKernel, DecodeTiles, KvCacheAttention, RotaryAngles, RotaryEmbedding,
};
use crate::plan::{self, DeviceCaps, Kernel, PlanOptions, Tiles};
use crate::problem::{Attention, DType, Tensor};
use crate::timing::{time_pass, GpuTimer};
use crate::tuning;

/// How to tune.
#[derive(Debug, Clone)]
pub struct TuneOptions {
    /// Kernels to try; empty: every tier the device offers.
    pub kernels: Vec<Kernel>,
    /// Timed runs per candidate (the median counts); at least 1.
    pub runs: usize,
    /// Untimed runs before them.
    pub warmup: usize,
    /// At most this many tile candidates per kernel, in table order (the plan's own choice is
    /// timed besides them).
    pub max_candidates: usize,
    /// Directory of the cache file (`tiles.json`); `None`: no disk cache.
    #[cfg(not(target_arch = "wasm32"))]
    pub cache_dir: Option<std::path::PathBuf>,
}

impl Default for TuneOptions {
    fn default() -> Self {
        TuneOptions {
            kernels: Vec::new(),
            runs: 5,
            warmup: 1,
            max_candidates: 8,
            #[cfg(not(target_arch = "wasm32"))]
            cache_dir: None,
        }
    }
}

/// One candidate's measurement.
#[derive(Debug, Clone, PartialEq)]
pub struct Trial {
    /// The kernel.
    pub kernel: Kernel,
    /// The tiles.
    pub tiles: Tiles,
    /// Median milliseconds.
    pub ms: f64,
}

/// What the tuner chose.
#[derive(Debug, Clone, PartialEq)]
pub struct Tuned {
    /// Options that reproduce the winner: pass them to [`FlashContext::plan_with`].
    pub options: PlanOptions,
    /// The winning kernel.
    pub kernel: Kernel,
    /// The winning tiles.
    pub tiles: Tiles,
    /// Its median time in milliseconds (as measured when it was cached, for a cache hit).
    pub ms: f64,
    /// The winner came from the cache; nothing was measured.
    pub from_cache: bool,
    /// "gpu-timestamps" or "wall-clock".
    pub timing: String,
    /// Every candidate measured, in the order tried (empty for a cache hit).
    pub trials: Vec<Trial>,
    /// Set when a cache file existed but was ignored (unreadable or not a cache), or could not be
    /// written.
    pub cache_note: Option<String>,
}

/// The adapter and driver a cached winner was measured on (part of both tuners' keys; stored
/// flat, as fields of the key).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct DeviceKey {
    /// Adapter name.
    pub adapter: String,
    /// Backend.
    pub backend: String,
    /// Driver name and version.
    pub driver: String,
    /// Vendor id.
    pub vendor: u32,
}

impl DeviceKey {
    /// The key of a device.
    pub fn new(caps: &DeviceCaps) -> DeviceKey {
        DeviceKey {
            adapter: caps.name.clone(),
            backend: caps.backend.clone(),
            driver: caps.driver.clone(),
            vendor: caps.vendor,
        }
    }
}

/// The class of problems one cached winner stands for, on one adapter and driver.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct TuneKey {
    /// Adapter and driver.
    #[serde(flatten)]
    pub device: DeviceKey,
    /// The kernels the tuner was allowed ("auto" for every tier, else names joined by '+').
    pub kernel: String,
    /// Storage as the plan reads it ("f32", "f16", "f16-packed", "bf16-packed").
    pub storage: String,
    /// An f32 or bf16 problem that allows f16 products
    /// ([`Attention::allow_f16_products`]): the tensor-core tier is open to it, so its winner
    /// is not one for the same storage without the permission.
    pub f16_products: bool,
    /// Head dimension.
    pub head_dim: u32,
    /// Causal mask.
    pub causal: bool,
    /// max(seq_q, seq_kv) rounded up to a power of two.
    pub seq_bucket: u32,
    /// K and V in pages (read through a table, a cost of their own): such problems keep winners
    /// of their own.
    pub paged: bool,
}

/// The keys' `f16_products`: the permission only changes what runs for f32 and bf16 (f16 problems
/// multiply f16 either way), so it only parts those.
fn f16_products_key(allowed: bool, dtype: DType) -> bool {
    allowed && dtype != DType::F16
}

impl TuneKey {
    /// The key of `problem` on a device, for the kernels in `kernels` (empty: every tier).
    pub fn new(caps: &DeviceCaps, problem: &Attention, kernels: &[Kernel]) -> TuneKey {
        TuneKey {
            device: DeviceKey::new(caps),
            kernel: if kernels.is_empty() {
                "auto".into()
            } else {
                kernels
                    .iter()
                    .map(|k| k.name())
                    .collect::<Vec<_>>()
                    .join("+")
            },
            storage: plan::storage_for(problem.dtype, caps, false).name().into(),
            f16_products: f16_products_key(problem.allow_f16_products, problem.dtype),
            head_dim: problem.head_dim,
            causal: problem.causal,
            seq_bucket: problem.seq_q.max(problem.seq_kv).next_power_of_two(),
            paged: problem.paged_kv.is_some(),
        }
    }
}

/// One cached winner.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct TuneEntry {
    /// What it was measured for.
    pub key: TuneKey,
    /// The winning kernel's name ([`Kernel::name`]).
    pub kernel: String,
    /// Its tiles as [block_m, block_n, threads_x, threads_y].
    pub tiles: [u32; 4],
    /// Its median time in milliseconds on the problem it was measured on.
    pub ms: f64,
    /// "gpu-timestamps" or "wall-clock".
    pub timing: String,
}

/// The cached winners, as stored in `tiles.json`.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct TuneCache {
    /// Identifies the file.
    pub format: String,
    /// Layout version of the file; other versions are not read.
    pub version: u32,
    /// One entry per key.
    pub entries: Vec<TuneEntry>,
    /// KV-cache steps' winners ([`tune_kv_cache`]), one per key.
    pub kv_entries: Vec<KvTuneEntry>,
}

const FORMAT: &str = "wgpu-flash-attn tuning cache";
// 2: paged problems may take the tensor-core tier, which version-1 winners were never timed against.
// 3: the subgroup KV-cache kernel holds one K/V register set and takes more keys per lane, and the
// split rule aims at 8 of its workgroups per compute unit: version-2 KV-cache winners (tiles and
// split counts) were timed against the old kernel.
// 4: the subgroup KV-cache kernel takes at least 8 lanes per key where head_dim allows (one row per
// KV head at d = 128 had 4; steps of 1-4 rows at d <= 64 had fewer too), and the tensor-core
// tables have a new candidate, the plan at head dims up to 64 and from 160: version-3 winners
// were timed without them.
// 5: the subgroup KV-cache kernel merges its own splits in a step of one dispatch whose splits
// cover at least 1024 keys (no combine pass), which changes what a split costs there: version-4
// split counts were timed with the pass.
// 6: the tensor-core kernel keeps its scores in registers where the device's probe allows it
// (11-43% faster on the H200 by head dim and mask), so version-5 tile winners were timed against another
// kernel.
// 7: the element probe works again (version 6 ran it with a binding that the Vulkan backend
// renumbered, so it never passed), and with scores in registers the tensor-core tables lead with
// longer key tiles: version-6 winners were timed without either.
// 8: with scores in registers, the tensor-core kernel stages K/V tiles another way at d = 96 and
// 192 (up to 11% faster on the H200), so version-7 tile winners there were timed against
// another kernel.
// 9: the same at d = 128 (its stores behind a wrapper function, 2-4% faster on the H200), and
// the loads ahead through a function at d = 64, 160 and 192 (up to 7% faster).
// 10: banded problems run their query blocks longest first within groups of heads on the
// tensor-core tier (up to 10% faster causal on the H200).
// 11: on NVIDIA the portable and subgroup kernels unroll their products (Plan::unroll_qk,
// unroll_pv; 12-39% faster on the H200, by tile), so version-10 winners there were timed with
// the loops.
// 12: on NVIDIA a second streamed-Q tile is a candidate where the first does not fit
// (64x32x16x16, d = 256: about 2x the fallback), and P V unrolls by the accumulators a thread
// holds, so version-11 winners at those head dims were timed without either.
// 13: on NVIDIA streamed-Q tiles are candidates at d = 32-64 too (256x32x8x32, up to 47% faster
// than holding Q), which version-12 winners there were not timed against.
// 14: on NVIDIA the streamed-Q tiles have their lanes fitted to the head dim up to d = 128 and
// start at d = 16 (up to 3x faster there), which version-13 winners were not timed against.
// 15: on NVIDIA odd numbers of vec4s take 1 or 2 lanes a row (up to 2.1x faster), and d = 68-88
// takes the 256-row streamed tile (up to 40% faster), which version-14 winners were not timed
// against.
// 16: on NVIDIA d = 64 streams Q with 128x32x8x32 where the 256-row tile does not fit (without
// subgroups 25% / 16% faster f32 / f16 than the held tile), and the tile is a candidate there on
// every NVIDIA device, which version-15 winners were not timed against.
// 17: on NVIDIA P V is unrolled with up to 88 output accumulators a thread (d = 84 and 88 with
// the 256-row tile, 2-5% faster), and the tensor-core kernel loads Q and writes O faster (up to
// 25% at N = 1k), which version-16 winners were not timed with.
// 18: the tensor-core kernel with scores in registers takes its tree form at d = 96, 192 and 256
// (up to 6% faster), which version-17 winners there were not timed with.
// 19: keys tell f32 and bf16 problems that allow f16 products (the tensor-core tier) from those
// that do not; version-18 keys could not.
// 20: KV-cache keys tell the prefill routes apart, and steps that allow f16 products from those
// that do not: both change which sequences the KV-cache kernel runs.
const VERSION: u32 = 20;
/// The cache file's name inside the cache directory.
pub const CACHE_FILE: &str = "tiles.json";

impl TuneCache {
    /// An empty cache.
    pub fn new() -> TuneCache {
        TuneCache {
            format: FORMAT.into(),
            version: VERSION,
            entries: Vec::new(),
            kv_entries: Vec::new(),
        }
    }

    /// The entry for `key`, if any.
    pub fn get(&self, key: &TuneKey) -> Option<&TuneEntry> {
        self.entries.iter().find(|e| &e.key == key)
    }

    /// Adds an entry, replacing the one with the same key.
    pub fn insert(&mut self, entry: TuneEntry) {
        self.entries.retain(|e| e.key != entry.key);
        self.entries.push(entry);
    }

    /// The KV-cache entry for `key`, if any.
    pub fn get_kv(&self, key: &KvTuneKey) -> Option<&KvTuneEntry> {
        self.kv_entries.iter().find(|e| &e.key == key)
    }

    /// Adds a KV-cache entry, replacing the one with the same key.
    pub fn insert_kv(&mut self, entry: KvTuneEntry) {
        self.kv_entries.retain(|e| e.key != entry.key);
        self.kv_entries.push(entry);
    }

    /// The cache as JSON text.
    pub fn to_json(&self) -> String {
        serde_json::to_string_pretty(self).expect("the cache serialises") + "\n"
    }

    /// Parses JSON text; an error if it is not a cache of this format and version.
    pub fn from_json(text: &str) -> Result<TuneCache> {
        let cache: TuneCache =
            serde_json::from_str(text).map_err(|e| FlashError::Cache(e.to_string()))?;
        if cache.format != FORMAT || cache.version != VERSION {
            return Err(FlashError::Cache(format!(
                "format {:?} version {}, expected {FORMAT:?} version {VERSION}",
                cache.format, cache.version
            )));
        }
        Ok(cache)
    }

    /// Reads a cache file: empty if there is none, an error if it cannot be read or parsed.
    #[cfg(not(target_arch = "wasm32"))]
    pub fn load(path: &std::path::Path) -> Result<TuneCache> {
        match std::fs::read_to_string(path) {
            Ok(text) => Self::from_json(&text)
                .map_err(|e| FlashError::Cache(format!("{}: {e}", path.display()))),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(TuneCache::new()),
            Err(e) => Err(FlashError::Cache(format!("{}: {e}", path.display()))),
        }
    }

    /// Writes the cache file (through a temporary file and a rename, so a reader never sees half
    /// a file), creating its directory.
    #[cfg(not(target_arch = "wasm32"))]
    pub fn save(&self, path: &std::path::Path) -> Result<()> {
        let io = |e: std::io::Error| FlashError::Cache(format!("{}: {e}", path.display()));
        if let Some(dir) = path.parent() {
            std::fs::create_dir_all(dir).map_err(io)?;
        }
        let tmp = path.with_extension(format!("json.{}.tmp", std::process::id()));
        std::fs::write(&tmp, self.to_json()).map_err(io)?;
        std::fs::rename(&tmp, path).map_err(io)
    }
}

/// `$XDG_CACHE_HOME/wgpu-flash-attn`, else `$HOME/.cache/wgpu-flash-attn` (native only).
#[cfg(not(target_arch = "wasm32"))]
pub fn default_cache_dir() -> Option<std::path::PathBuf> {
    let base = std::env::var_os("XDG_CACHE_HOME")
        .filter(|v| !v.is_empty())
        .map(std::path::PathBuf::from)
        .or_else(|| std::env::var_os("HOME").map(|h| std::path::PathBuf::from(h).join(".cache")))?;
    Some(base.join("wgpu-flash-attn"))
}

fn tiles_of(t: [u32; 4]) -> Tiles {
    Tiles {
        block_m: t[0],
        block_n: t[1],
        threads_x: t[2],
        threads_y: t[3],
    }
}

fn kernel_named(name: &str) -> Option<Kernel> {
    [
        Kernel::ForwardPortable,
        Kernel::ForwardSubgroup,
        Kernel::ForwardCoopMatrix,
    ]
    .into_iter()
    .find(|k| k.name() == name)
}

/// At least one timed run.
fn check_runs(options: &TuneOptions) -> Result<()> {
    if options.runs == 0 {
        return Err(FlashError::BadOption {
            what: "TuneOptions::runs",
            got: "0".into(),
            why: "at least one timed run is needed",
        });
    }
    Ok(())
}

/// The tuning cache as a run sees it: the file's winners (none without a cache directory, or in
/// the browser), and a note when the file was ignored or could not be written.
struct CacheFile {
    #[cfg(not(target_arch = "wasm32"))]
    path: Option<std::path::PathBuf>,
    cache: TuneCache,
    note: Option<String>,
}

impl CacheFile {
    #[cfg(not(target_arch = "wasm32"))]
    fn open(options: &TuneOptions) -> CacheFile {
        let path = options.cache_dir.as_ref().map(|d| d.join(CACHE_FILE));
        let mut note = None;
        let cache = match &path {
            Some(path) => TuneCache::load(path).unwrap_or_else(|e| {
                note = Some(format!("ignored the cache file: {e}"));
                TuneCache::new()
            }),
            None => TuneCache::new(),
        };
        CacheFile { path, cache, note }
    }

    #[cfg(target_arch = "wasm32")]
    fn open(_: &TuneOptions) -> CacheFile {
        CacheFile {
            cache: TuneCache::new(),
            note: None,
        }
    }

    /// Writes the cache back where it came from (nothing without a cache directory).
    fn save(&mut self) {
        #[cfg(not(target_arch = "wasm32"))]
        if let Some(path) = &self.path {
            if let Err(e) = self.cache.save(path) {
                self.note = Some(format!("could not write the cache: {e}"));
            }
        }
    }
}

/// The timer tuning runs with and its name: GPU timestamps where the device has them, else the
/// wall time of submit and wait (native only: the browser cannot wait).
fn tuning_timer(ctx: &FlashContext) -> Result<(Option<GpuTimer>, &'static str)> {
    let timer = GpuTimer::new(ctx);
    #[cfg(target_arch = "wasm32")]
    if timer.is_none() {
        return Err(FlashError::MissingFeature {
            what: "autotuning in the browser",
            feature: "TIMESTAMP_QUERY",
        });
    }
    let name = if timer.is_some() {
        "gpu-timestamps"
    } else {
        "wall-clock"
    };
    Ok((timer, name))
}

/// The median milliseconds of `options.runs` passes recorded by `encode`, after
/// `options.warmup` untimed ones.
async fn median_ms(
    ctx: &FlashContext,
    timer: Option<&GpuTimer>,
    options: &TuneOptions,
    mut encode: impl FnMut(&mut wgpu::CommandEncoder, Option<&GpuTimer>) -> Result<()>,
) -> Result<f64> {
    let mut times = Vec::with_capacity(options.runs);
    for r in 0..options.warmup + options.runs {
        let ms = time_pass(ctx, timer, |encoder, timer| encode(encoder, timer)).await?;
        if r >= options.warmup {
            times.push(ms);
        }
    }
    times.sort_by(f64::total_cmp);
    Ok(times[times.len() / 2])
}

/// The fastest of the (non-empty) trials.
fn fastest<T: Clone>(trials: &[T], ms: impl Fn(&T) -> f64) -> T {
    trials
        .iter()
        .min_by(|a, b| ms(a).total_cmp(&ms(b)))
        .expect("at least one candidate")
        .clone()
}

/// Tunes `problem` on the context's device (see the module docs).
pub async fn tune(ctx: &FlashContext, problem: &Attention, options: &TuneOptions) -> Result<Tuned> {
    problem.validate()?;
    check_runs(options)?;
    let caps = ctx.caps();
    let key = TuneKey::new(caps, problem, &options.kernels);
    let mut file = CacheFile::open(options);
    if let Some(entry) = file.cache.get(&key) {
        if let Some(kernel) = kernel_named(&entry.kernel) {
            let chosen = PlanOptions {
                tiles: Some(tiles_of(entry.tiles)),
                kernel: Some(kernel),
                ..Default::default()
            };
            // A stale entry (tiles this version no longer accepts) is measured again.
            if plan::plan_with(problem, caps, chosen).is_ok() {
                return Ok(Tuned {
                    options: chosen,
                    kernel,
                    tiles: tiles_of(entry.tiles),
                    ms: entry.ms,
                    from_cache: true,
                    timing: entry.timing.clone(),
                    trials: Vec::new(),
                    cache_note: file.note,
                });
            }
        }
    }

    let kernels = if options.kernels.is_empty() {
        vec![
            Kernel::ForwardPortable,
            Kernel::ForwardSubgroup,
            Kernel::ForwardCoopMatrix,
        ]
    } else {
        options.kernels.clone()
    };
    let mut candidates = Vec::new();
    for &kernel in &kernels {
        // Each tier's own table: the tensor-core tiles, or the streamed-Q tiles the plan tries
        // first and then the family's and the generic ones.
        let tables: Vec<Tiles> = match (kernel, caps.subgroup_sizes) {
            (Kernel::ForwardCoopMatrix, Some((sg, _))) => {
                tuning::coop_tiles(problem.head_dim, sg, caps.coop_elements).collect()
            }
            (Kernel::ForwardCoopMatrix, None) => Vec::new(),
            _ => {
                let mut tiles = tuning::streamed_q_tiles(caps, problem.head_dim);
                tiles.extend(tuning::candidates_for(caps));
                tiles
            }
        };
        let fitting = tables
            .into_iter()
            .map(|tiles| PlanOptions {
                tiles: Some(tiles),
                kernel: Some(kernel),
                ..Default::default()
            })
            .filter(|o| plan::plan_with(problem, caps, *o).is_ok())
            .take(options.max_candidates);
        candidates.extend(fitting);
    }
    // The plan's own choice is always timed too, so tuning never picks something slower than
    // the default it measured.
    if let Ok(default) = plan::plan_with(problem, caps, PlanOptions::default()) {
        let own = PlanOptions {
            tiles: Some(default.tiles),
            kernel: Some(default.kernel),
            ..Default::default()
        };
        if kernels.contains(&default.kernel) && !candidates.contains(&own) {
            candidates.push(own);
        }
    }
    if candidates.is_empty() {
        // The plan's own error says why nothing fits.
        plan::plan_with(problem, caps, PlanOptions::default())?;
        return Err(FlashError::BadOption {
            what: "TuneOptions::kernels",
            got: format!("{:?}", options.kernels),
            why: "none of these kernels can run this problem on this device",
        });
    }

    let buffers = tune_buffers(ctx, problem);
    let (timer, timing) = tuning_timer(ctx)?;
    let mut trials = Vec::new();
    for candidate in candidates {
        let flash = ctx.plan_with(problem, candidate)?;
        let ms = median_ms(ctx, timer.as_ref(), options, |encoder, timer| {
            flash.encode_timed(encoder, &buffers.attention(), timer.map(GpuTimer::writes))
        })
        .await?;
        trials.push(Trial {
            kernel: flash.plan().kernel,
            tiles: flash.plan().tiles,
            ms,
        });
    }
    let best = fastest(&trials, |t| t.ms);
    let t = best.tiles;
    file.cache.insert(TuneEntry {
        key,
        kernel: best.kernel.name().into(),
        tiles: [t.block_m, t.block_n, t.threads_x, t.threads_y],
        ms: best.ms,
        timing: timing.into(),
    });
    file.save();
    Ok(Tuned {
        options: PlanOptions {
            tiles: Some(best.tiles),
            kernel: Some(best.kernel),
            ..Default::default()
        },
        kernel: best.kernel,
        tiles: best.tiles,
        ms: best.ms,
        from_cache: false,
        timing: timing.into(),
        trials,
        cache_note: file.note,
    })
}

/// Blocking [`tune`] (not on wasm).
#[cfg(not(target_arch = "wasm32"))]
pub fn tune_blocking(
    ctx: &FlashContext,
    problem: &Attention,
    options: &TuneOptions,
) -> Result<Tuned> {
    pollster::block_on(tune(ctx, problem, options))
}

/// A small linear congruential sequence in [-1, 1): timing needs no better randomness.
fn seeded_values() -> impl FnMut(u64) -> Vec<f32> {
    let mut state = 0x2545_f491_u32;
    move |n: u64| -> Vec<f32> {
        (0..n)
            .map(|_| {
                state = state.wrapping_mul(1_664_525).wrapping_add(1_013_904_223);
                (state >> 8) as f32 / (1u32 << 23) as f32 - 1.0
            })
            .collect()
    }
}

/// Seeded inputs for timing one problem on the device (extras filled with harmless values).
fn tune_buffers(ctx: &FlashContext, p: &Attention) -> ProblemBuffers {
    let mut values = seeded_values();
    let (q, k, v) = (
        values(p.span_of(Tensor::Q)),
        values(p.span_of(Tensor::K)),
        values(p.span_of(Tensor::V)),
    );
    let alibi = vec![0.1; p.alibi_len() as usize];
    let sinks = vec![0.0; if p.sinks { p.heads_q as usize } else { 0 }];
    let mask = vec![1.0; p.mask_len() as usize];
    ctx.upload(
        p,
        HostInputs {
            q: &q,
            k: &k,
            v: &v,
            alibi_slopes: p.alibi.map(|_| alibi.as_slice()),
            sinks: p.sinks.then_some(sinks.as_slice()),
            mask: p.mask.map(|_| mask.as_slice()),
        },
    )
}

/// The class of KV-cache steps one cached winner of [`tune_kv_cache`] stands for, on one adapter
/// and driver: the same heads, head_dim, storage, layout kind, mask and batch, with the longest
/// query chunk and the longest KV length in the same power-of-two buckets.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct KvTuneKey {
    /// Adapter and driver.
    #[serde(flatten)]
    pub device: DeviceKey,
    /// Storage as the plan reads it.
    pub storage: String,
    /// Query heads.
    pub heads_q: u32,
    /// KV heads.
    pub heads_kv: u32,
    /// Head dimension.
    pub head_dim: u32,
    /// Sequences in the step.
    pub batch: u32,
    /// The longest query chunk of a sequence, rounded up to a power of two.
    pub seq_q_bucket: u32,
    /// The longest KV length of a sequence (with the step's own tokens), rounded up to a power of
    /// two.
    pub kv_bucket: u32,
    /// Paged caches.
    pub paged: bool,
    /// Causal mask.
    pub causal: bool,
    /// Where the step's prefill chunks run ([`crate::PrefillRoute::name`]): the chunks the forward
    /// kernels take leave the KV-cache kernel, so the winner of one route is not one of another.
    pub prefill_route: String,
    /// An f32 or bf16 step that allows f16 products ([`KvCacheAttention::allow_f16_products`]):
    /// with the forward route open to the tensor cores, other chunks leave the KV-cache kernel.
    pub f16_products: bool,
}

impl KvTuneKey {
    /// The key of `step` on a device.
    pub fn new(caps: &DeviceCaps, step: &KvCacheAttention) -> KvTuneKey {
        KvTuneKey {
            device: DeviceKey::new(caps),
            storage: plan::storage_for(step.dtype, caps, false).name().into(),
            heads_q: step.heads_q,
            heads_kv: step.heads_kv,
            head_dim: step.head_dim,
            batch: step.batch(),
            seq_q_bucket: (0..step.batch())
                .map(|b| step.seq_q(b))
                .max()
                .unwrap_or(1)
                .max(1)
                .next_power_of_two(),
            kv_bucket: step.longest_kv().max(1).next_power_of_two(),
            paged: matches!(step.layout, CacheLayout::Paged { .. }),
            causal: step.causal,
            prefill_route: step.prefill_route.name().into(),
            f16_products: f16_products_key(step.allow_f16_products, step.dtype),
        }
    }
}

/// One cached KV-cache winner.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct KvTuneEntry {
    /// What it was measured for.
    pub key: KvTuneKey,
    /// The winning tiles.
    pub tiles: DecodeTiles,
    /// The winning split count.
    pub splits: u32,
    /// Its median time in milliseconds on the step it was measured on.
    pub ms: f64,
    /// "gpu-timestamps" or "wall-clock".
    pub timing: String,
}

/// One KV-cache candidate's measurement.
#[derive(Debug, Clone, PartialEq)]
pub struct KvTrial {
    /// The tiles.
    pub tiles: DecodeTiles,
    /// KV splits.
    pub splits: u32,
    /// Median milliseconds of the whole step (append, attention, combine, routed chunks).
    pub ms: f64,
}

/// What [`tune_kv_cache`] chose: run the step as
/// `ctx.plan_kv_cache_with(&step.clone().num_splits(t.splits), Some(t.tiles))`.
#[derive(Debug, Clone, PartialEq)]
pub struct TunedKvCache {
    /// The winning tiles.
    pub tiles: DecodeTiles,
    /// The winning split count.
    pub splits: u32,
    /// Its median time in milliseconds (as measured when it was cached, for a cache hit).
    pub ms: f64,
    /// The winner came from the cache; nothing was measured.
    pub from_cache: bool,
    /// "gpu-timestamps" or "wall-clock".
    pub timing: String,
    /// Every candidate measured, in the order tried (empty for a cache hit).
    pub trials: Vec<KvTrial>,
    /// Set when a cache file existed but was ignored, or could not be written.
    pub cache_note: Option<String>,
}

/// The split counts [`tune_kv_cache`] tries around the plan's own `splits`: 1, a quarter, a half,
/// the plan's, twice and four times it, within 1..=[`kvcache::MAX_SPLITS`], without repeats.
pub fn kv_split_candidates(splits: u32) -> Vec<u32> {
    let mut out: Vec<u32> = [1, splits / 4, splits / 2, splits, splits * 2, splits * 4]
        .into_iter()
        .map(|s| s.clamp(1, kvcache::MAX_SPLITS))
        .collect();
    out.sort_unstable();
    out.dedup();
    out
}

/// Tunes a KV-cache step's split count and kernel on the context's device: the plan's tiles of
/// each KV-cache kernel the device offers ([`kvcache::default_tiles`]), each with the split
/// counts of [`kv_split_candidates`] (starting from what the plan picks for that kernel), timed as
/// whole steps on seeded inputs. The plan's split rule is tuned on an H200 (one whole wave of
/// resident workgroups; this tuner, run there, keeps the plan's counts); on other GPUs their
/// resident count differs, which is what this measures. Winners are cached like [`tune`]'s, in
/// the same file (`kv_entries`), per [`KvTuneKey`]. `options.kernels` and
/// `options.max_candidates` do not apply.
///
/// ```no_run
/// # fn main() -> wgpu_flash_attn::Result<()> {
/// use wgpu_flash_attn::{autotune, DType, FlashContext, KvCacheAttention};
/// let ctx = FlashContext::default_blocking()?;
/// let step = KvCacheAttention::decode(32, 8, 128, 1, &[32768; 8], 32768).dtype(DType::F16);
/// let options = autotune::TuneOptions { cache_dir: autotune::default_cache_dir(), ..Default::default() };
/// let tuned = autotune::tune_kv_cache_blocking(&ctx, &step, &options)?;
/// let plan = ctx.plan_kv_cache_with(&step.clone().num_splits(tuned.splits), Some(tuned.tiles))?;
/// println!("{} splits: {:.3} ms", tuned.splits, tuned.ms);
/// # let _ = plan; Ok(()) }
/// ```
pub async fn tune_kv_cache(
    ctx: &FlashContext,
    step: &KvCacheAttention,
    options: &TuneOptions,
) -> Result<TunedKvCache> {
    step.validate()?;
    check_runs(options)?;
    let caps = ctx.caps();
    let key = KvTuneKey::new(caps, step);
    let mut file = CacheFile::open(options);
    if let Some(entry) = file.cache.get_kv(&key) {
        // A stale entry (tiles this version no longer accepts) is measured again.
        let forced = step.clone().num_splits(entry.splits);
        if kvcache::plan_with(&forced, caps, Some(entry.tiles)).is_ok() {
            return Ok(TunedKvCache {
                tiles: entry.tiles,
                splits: entry.splits,
                ms: entry.ms,
                from_cache: true,
                timing: entry.timing.clone(),
                trials: Vec::new(),
                cache_note: file.note,
            });
        }
    }

    let mut candidates = Vec::new();
    for kernel in [DecodeKernel::Subgroup, DecodeKernel::Portable] {
        let Ok(tiles) = kvcache::default_tiles(step, kernel, caps) else {
            continue;
        };
        // The split count the plan picks with these tiles, unless the step forces one.
        let Ok(own) = kvcache::plan_with(step, caps, Some(tiles)) else {
            continue;
        };
        for splits in kv_split_candidates(own.splits) {
            let forced = step.clone().num_splits(splits);
            if kvcache::plan_with(&forced, caps, Some(tiles)).is_ok() {
                candidates.push((tiles, splits));
            }
        }
    }
    if candidates.is_empty() {
        // The plan's own error says why nothing fits.
        kvcache::plan(step, caps)?;
        return Err(FlashError::BadOption {
            what: "KvCacheAttention",
            got: "this step".into(),
            why: "no KV-cache kernel can run this step on this device",
        });
    }

    let buffers = KvTuneBuffers::new(ctx, step);
    let (timer, timing) = tuning_timer(ctx)?;
    let mut trials = Vec::new();
    for (tiles, splits) in candidates {
        let planned = ctx.plan_kv_cache_with(&step.clone().num_splits(splits), Some(tiles))?;
        let ms = median_ms(ctx, timer.as_ref(), options, |encoder, timer| {
            planned.encode_timed(encoder, &buffers.bind(), timer.map(GpuTimer::writes))
        })
        .await?;
        trials.push(KvTrial { tiles, splits, ms });
    }
    let best = fastest(&trials, |t| t.ms);
    file.cache.insert_kv(KvTuneEntry {
        key,
        tiles: best.tiles,
        splits: best.splits,
        ms: best.ms,
        timing: timing.into(),
    });
    file.save();
    Ok(TunedKvCache {
        tiles: best.tiles,
        splits: best.splits,
        ms: best.ms,
        from_cache: false,
        timing: timing.into(),
        trials,
        cache_note: file.note,
    })
}

/// Blocking [`tune_kv_cache`] (not on wasm).
#[cfg(not(target_arch = "wasm32"))]
pub fn tune_kv_cache_blocking(
    ctx: &FlashContext,
    step: &KvCacheAttention,
    options: &TuneOptions,
) -> Result<TunedKvCache> {
    pollster::block_on(tune_kv_cache(ctx, step, options))
}

/// Seeded buffers for timing one KV-cache step.
struct KvTuneBuffers {
    q: wgpu::Buffer,
    k_cache: wgpu::Buffer,
    v_cache: wgpu::Buffer,
    out: wgpu::Buffer,
    lse: Option<wgpu::Buffer>,
    new_kv: Option<(wgpu::Buffer, wgpu::Buffer)>,
    rotary_table: Option<wgpu::Buffer>,
}

impl KvTuneBuffers {
    fn new(ctx: &FlashContext, step: &KvCacheAttention) -> KvTuneBuffers {
        use wgpu::util::DeviceExt;
        let mut values = seeded_values();
        let mut upload = |label: &str, n: u64, dtype: DType| {
            ctx.device()
                .create_buffer_init(&wgpu::util::BufferInitDescriptor {
                    label: Some(label),
                    contents: &to_dtype_bytes(&values(n), dtype),
                    usage: wgpu::BufferUsages::STORAGE,
                })
        };
        let d = step.dtype;
        // The caches may be larger than host memory wants to copy (8 x 128k tokens of 8 heads is
        // 2 GiB each in f16): they stay as wgpu creates them, zeroed, as do the outputs. The
        // kernels do the same work per key whatever the values.
        let zeroed = |label: &str, elems: u64, elem_bytes: u64| {
            ctx.storage_buffer(label, (elems * elem_bytes).next_multiple_of(4))
        };
        KvTuneBuffers {
            q: upload("tune q", step.q_len(), d),
            k_cache: zeroed("tune k_cache", step.cache_len(), d.size()),
            v_cache: zeroed("tune v_cache", step.cache_len(), d.size()),
            out: zeroed("tune out", step.q_len(), d.size()),
            lse: step.with_lse.then(|| zeroed("tune lse", step.lse_len(), 4)),
            new_kv: step.append_new_kv.then(|| {
                (
                    upload("tune k_new", step.new_kv_len(), d),
                    upload("tune v_new", step.new_kv_len(), d),
                )
            }),
            rotary_table: match step.rotary {
                Some(
                    r @ RotaryEmbedding {
                        angles: RotaryAngles::Table { .. },
                        ..
                    },
                ) => Some(upload("tune rotary table", r.table_len(), DType::F32)),
                _ => None,
            },
        }
    }

    fn bind(&self) -> KvCacheBuffers<'_> {
        let mut b = KvCacheBuffers::new(&self.q, &self.k_cache, &self.v_cache, &self.out);
        if let Some(lse) = &self.lse {
            b = b.lse(lse);
        }
        if let Some((k, v)) = &self.new_kv {
            b = b.new_kv(k, v);
        }
        if let Some(t) = &self.rotary_table {
            b = b.rotary_table(t);
        }
        b
    }
}
