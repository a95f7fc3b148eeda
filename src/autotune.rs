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
//! storage, head_dim, causal and a power-of-two bucket of the sequence length). On native targets
//! [`TuneOptions::cache_dir`] keeps them in `tiles.json` in that directory ([`default_cache_dir`]:
//! `$XDG_CACHE_HOME/wgpu-flash-attn` or `~/.cache/wgpu-flash-attn`); the browser has no disk
//! cache. A cache file that cannot be parsed is ignored: the tuner measures again, says so in
//! [`Tuned::cache_note`] and replaces the file with a valid one.
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

use crate::context::{FlashContext, HostInputs, ProblemBuffers};
use crate::error::{FlashError, Result};
use crate::plan::{self, DeviceCaps, Kernel, PlanOptions, Tiles};
use crate::problem::{Attention, Tensor};
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

/// The class of problems one cached winner stands for, on one adapter and driver.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct TuneKey {
    /// Adapter name.
    pub adapter: String,
    /// Backend.
    pub backend: String,
    /// Driver name and version.
    pub driver: String,
    /// Vendor id.
    pub vendor: u32,
    /// The kernels the tuner was allowed ("auto" for every tier, else names joined by '+').
    pub kernel: String,
    /// Storage as the plan reads it ("f32", "f16", "f16-packed", "bf16-packed").
    pub storage: String,
    /// Head dimension.
    pub head_dim: u32,
    /// Causal mask.
    pub causal: bool,
    /// max(seq_q, seq_kv) rounded up to a power of two.
    pub seq_bucket: u32,
    /// K and V in pages (read through a table, a cost of their own): such problems keep winners
    /// of their own.
    #[serde(default)]
    pub paged: bool,
}

impl TuneKey {
    /// The key of `problem` on a device, for the kernels in `kernels` (empty: every tier).
    pub fn new(caps: &DeviceCaps, problem: &Attention, kernels: &[Kernel]) -> TuneKey {
        TuneKey {
            adapter: caps.name.clone(),
            backend: caps.backend.clone(),
            driver: caps.driver.clone(),
            vendor: caps.vendor,
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
}

const FORMAT: &str = "wgpu-flash-attn tuning cache";
// 2: paged problems may take the tensor-core tier, which version-1 winners were never timed against.
const VERSION: u32 = 2;
/// The cache file's name inside the cache directory.
pub const CACHE_FILE: &str = "tiles.json";

impl TuneCache {
    /// An empty cache.
    pub fn new() -> TuneCache {
        TuneCache {
            format: FORMAT.into(),
            version: VERSION,
            entries: Vec::new(),
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

#[cfg(not(target_arch = "wasm32"))]
fn tiles_of(t: [u32; 4]) -> Tiles {
    Tiles {
        block_m: t[0],
        block_n: t[1],
        threads_x: t[2],
        threads_y: t[3],
    }
}

#[cfg(not(target_arch = "wasm32"))]
fn kernel_named(name: &str) -> Option<Kernel> {
    [
        Kernel::ForwardPortable,
        Kernel::ForwardSubgroup,
        Kernel::ForwardCoopMatrix,
    ]
    .into_iter()
    .find(|k| k.name() == name)
}

/// Tunes `problem` on the context's device (see the module docs).
pub async fn tune(ctx: &FlashContext, problem: &Attention, options: &TuneOptions) -> Result<Tuned> {
    problem.validate()?;
    if options.runs == 0 {
        return Err(FlashError::BadOption {
            what: "TuneOptions::runs",
            got: "0".into(),
            why: "at least one timed run is needed",
        });
    }
    let caps = ctx.caps();
    let key = TuneKey::new(caps, problem, &options.kernels);
    #[allow(unused_mut)]
    let mut cache_note = None;
    #[cfg(not(target_arch = "wasm32"))]
    let cache_path = options.cache_dir.as_ref().map(|d| d.join(CACHE_FILE));
    #[cfg(not(target_arch = "wasm32"))]
    let mut cache = match &cache_path {
        Some(path) => TuneCache::load(path).unwrap_or_else(|e| {
            cache_note = Some(format!("ignored the cache file: {e}"));
            TuneCache::new()
        }),
        None => TuneCache::new(),
    };
    #[cfg(not(target_arch = "wasm32"))]
    if let Some(entry) = cache.get(&key) {
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
                    cache_note,
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
                tuning::coop_tiles(problem.head_dim, sg).collect()
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
    let timer = GpuTimer::new(ctx);
    #[cfg(target_arch = "wasm32")]
    if timer.is_none() {
        return Err(FlashError::MissingFeature {
            what: "autotuning in the browser",
            feature: "TIMESTAMP_QUERY",
        });
    }
    let mut trials = Vec::new();
    for candidate in candidates {
        let flash = ctx.plan_with(problem, candidate)?;
        let mut times = Vec::with_capacity(options.runs);
        for r in 0..options.warmup + options.runs {
            let ms = time_pass(ctx, timer.as_ref(), |encoder, timer| {
                flash.encode_timed(encoder, &buffers.attention(), timer.map(GpuTimer::writes))
            })
            .await?;
            if r >= options.warmup {
                times.push(ms);
            }
        }
        times.sort_by(f64::total_cmp);
        trials.push(Trial {
            kernel: flash.plan().kernel,
            tiles: flash.plan().tiles,
            ms: times[times.len() / 2],
        });
    }
    let best = trials
        .iter()
        .min_by(|a, b| a.ms.total_cmp(&b.ms))
        .expect("at least one candidate")
        .clone();
    let timing = if timer.is_some() {
        "gpu-timestamps"
    } else {
        "wall-clock"
    };
    #[cfg(not(target_arch = "wasm32"))]
    if let Some(path) = &cache_path {
        let t = best.tiles;
        cache.insert(TuneEntry {
            key,
            kernel: best.kernel.name().into(),
            tiles: [t.block_m, t.block_n, t.threads_x, t.threads_y],
            ms: best.ms,
            timing: timing.into(),
        });
        if let Err(e) = cache.save(path) {
            cache_note = Some(format!("could not write the cache: {e}"));
        }
    }
    #[cfg(target_arch = "wasm32")]
    let _ = key;
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
        cache_note,
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

/// Seeded inputs for timing one problem on the device (extras filled with harmless values).
fn tune_buffers(ctx: &FlashContext, p: &Attention) -> ProblemBuffers {
    // A small linear congruential sequence in [-1, 1): timing needs no better randomness.
    let mut state = 0x2545_f491_u32;
    let mut values = |n: u64| -> Vec<f32> {
        (0..n)
            .map(|_| {
                state = state.wrapping_mul(1_664_525).wrapping_add(1_013_904_223);
                (state >> 8) as f32 / (1u32 << 23) as f32 - 1.0
            })
            .collect()
    };
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
