//! Tile sizes for the forward kernels: a small table per device family, then a generic list.
//!
//! The plan walks [`candidates_for`] and takes the first entry that fits the device (workgroup
//! storage, invocations) and suits the head dimension; the subgroup tier is used where that entry's
//! rows (`threads_x` lanes) fit the device's smallest subgroup. Larger tiles reuse each K/V tile
//! for more query rows and give each thread more independent multiply-adds; smaller tiles fit
//! WebGPU's default limits. [`crate::autotune`] (native) measures candidates on the caller's
//! adapter instead and caches the winner.
//!
//! | family | recognised by | tiles (BMxBNxTXxTY), best first | source |
//! |---|---|---|---|
//! | NVIDIA | vendor 0x10de | 64x32x8x16, 64x16x8x16, 32x32x16x8, 32x32x16x16; first, with Q streamed ([`streamed_q_tiles`]): at d = 16-88 256x32x8x32; at d = 64 and 68-88 where that does not fit, and above d = 88, 128x32x8x32, then, where that one needs over 48 KiB (from d = 236; d = 204 on the portable tier), 64x32x16x16; up to d = 128 with a row's lanes fitted to the head dim ([`lanes_fitted`]: 256x32x4x64 at d = 48, 256x32x2x128 at d = 24, 256x32x1x256 at d = 20, 128x32x2x128 at d = 100); products unrolled ([`unrolls_products`]) | register blocks of 4 rows: 64x32 at d <= 64, 64x16 at d = 128 (48 KiB) holding Q; on an H200 at d = 128 streaming Q with 128x32 tiles is faster (24.6 TFLOP/s f32 against 15.4), and unrolling the products faster again (29.6); at d = 256, 64x32x16x16 streamed runs 22.9 / 25.6 (f32 / f16; 24.4 / 27.8 with P V unrolled too) against 12.3 / 12.1 for the held-Q fallback; at d = 64 256x32x8x32 streamed runs 33.7 / 32.4 against 22.9 / 23.7 holding Q; fitting the lanes to the head dim (and the range from d = 16) gained up to 3x below d = 32, 8-78% at 40-88 and up to 72% at odd numbers of vec4s above 88 ([`FITTED_LANES_MAX_HEAD_DIM`] lists them), the 256-row tile at d = 68-88 11-40% more, 128x32x8x32 on the portable tier at d = 64 25% / 16% more than holding Q ([`TWO_LANES_MIN_ODD_VEC4S`] and [`streamed_q_tiles`] list the rest) |
//! | AMD | vendor 0x1002 / 0x1022 | 32x32x16x16, 64x32x16x16 | starting point: 64 KiB LDS, waves of 32 or 64 |
//! | Apple | vendor 0x106b, or a name starting with "Apple" | 32x32x16x16, 16x32x16x8 | starting point: 32 KiB threadgroup memory, SIMD groups of 32 |
//! | Intel | vendor 0x8086 | 32x32x8x16, 32x32x16x16 | starting point: subgroups of 8 to 32, so rows of 8 lanes keep the subgroup tier |
//! | mobile | vendor 0x5143 (Qualcomm), 0x13b5 (Arm), 0x1010 (Imagination) | 16x32x16x8, 16x16x8x8 | starting point: small workgroup memory, shared with other work |
//! | software | device type Cpu, or lavapipe / llvmpipe / SwiftShader / WARP by name | 32x32x8x16, 16x16x8x8 | lavapipe's subgroups are 8 lanes. Tiles of 16 threads with 8-16 rows each (32x32x8x2 and smaller) ran 1.1-2.1x faster on lavapipe and 1.3-1.8x on llvmpipe at N = 1024, but took about 10x as long to compile (2.4 s against 0.21 s a pipeline at d = 64, 7.0 s against 0.52 s at d = 128), which more than doubled the test suite's time; not taken (BENCHMARKS.md, twenty-fifth round) |
//! | browser | backend BrowserWebGpu | 16x32x16x8, 16x16x16x8 | WebGPU's default 16 KiB of workgroup storage |
//! | other | anything else | the generic list | |
//!
//! Every family's entries are followed by the generic list ([`forward_candidates`]), so a device
//! whose limits reject the family's tiles still gets the largest tile that fits.

use crate::plan::{DeviceCaps, Tiles};

/// Device families with their own tile preferences (see the module table).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum DeviceFamily {
    /// NVIDIA GPUs.
    Nvidia,
    /// AMD GPUs.
    Amd,
    /// Apple GPUs.
    Apple,
    /// Intel GPUs.
    Intel,
    /// Mobile GPUs: Qualcomm Adreno, Arm Mali, Imagination PowerVR.
    Mobile,
    /// Rasterizers running on the CPU: lavapipe, llvmpipe, SwiftShader, WARP.
    Software,
    /// WebGPU in a browser (which hides the vendor).
    Browser,
    /// Anything not recognised.
    Other,
}

impl DeviceFamily {
    /// The family of a device, from its backend, device type, name and vendor id.
    pub fn of(caps: &DeviceCaps) -> DeviceFamily {
        let name = caps.name.to_ascii_lowercase();
        let software = [
            "llvmpipe",
            "lavapipe",
            "swiftshader",
            "basic render",
            "warp",
        ];
        if caps.backend == "BrowserWebGpu" {
            DeviceFamily::Browser
        } else if caps.device_type == "Cpu" || software.iter().any(|s| name.contains(s)) {
            DeviceFamily::Software
        } else {
            match caps.vendor {
                0x10de => DeviceFamily::Nvidia,
                0x1002 | 0x1022 => DeviceFamily::Amd,
                0x106b => DeviceFamily::Apple,
                0x8086 => DeviceFamily::Intel,
                0x5143 | 0x13b5 | 0x1010 => DeviceFamily::Mobile,
                _ if name.starts_with("apple") => DeviceFamily::Apple,
                _ => DeviceFamily::Other,
            }
        }
    }

    /// Short name used in reports.
    pub fn name(self) -> &'static str {
        match self {
            DeviceFamily::Nvidia => "nvidia",
            DeviceFamily::Amd => "amd",
            DeviceFamily::Apple => "apple",
            DeviceFamily::Intel => "intel",
            DeviceFamily::Mobile => "mobile",
            DeviceFamily::Software => "software",
            DeviceFamily::Browser => "browser",
            DeviceFamily::Other => "other",
        }
    }
}

/// (block_m, block_n, threads_x, threads_y).
type TileRow = (u32, u32, u32, u32);

/// Tiles per family, best first (the module table says why).
const FAMILY_TILES: &[(DeviceFamily, &[TileRow])] = &[
    // NVIDIA: each thread owns 4 query rows (128 threads), so each vec4 of K, V and P read from
    // workgroup memory feeds 4 rows' multiply-adds. 64x32x8x16 (4x4 score blocks) fits 48 KiB
    // with Q in workgroup memory up to d = 64, 64x16x8x16 up to d = 128; the older 32x32x16x16
    // (2x2 blocks; 10.3 TFLOP/s at d=128 on an H200 before register blocking) stays as fallback.
    (
        DeviceFamily::Nvidia,
        &[
            (64, 32, 8, 16),
            (64, 16, 8, 16),
            (32, 32, 16, 8),
            (32, 32, 16, 16),
        ],
    ),
    (DeviceFamily::Amd, &[(32, 32, 16, 16), (64, 32, 16, 16)]),
    (DeviceFamily::Apple, &[(32, 32, 16, 16), (16, 32, 16, 8)]),
    (DeviceFamily::Intel, &[(32, 32, 8, 16), (32, 32, 16, 16)]),
    (DeviceFamily::Mobile, &[(16, 32, 16, 8), (16, 16, 8, 8)]),
    (DeviceFamily::Software, &[(32, 32, 8, 16), (16, 16, 8, 8)]),
    (DeviceFamily::Browser, &[(16, 32, 16, 8), (16, 16, 16, 8)]),
];

/// Tiles that read Q from device memory (through the cache) instead of holding it in workgroup
/// memory, which frees room for bigger register blocks: per family, (smallest head dim, largest
/// head dim, tiles). The plan tries the tiles of the range holding the head dim first, in order,
/// and takes the first that fits. On the H200 (BENCHMARKS.md):
/// - d = 32 to 64: 256x32x8x32 (8 x 4 scores a thread), against the held-Q 64x32x8x16 the family
///   table gives: f32 / f16 29.5 / 26.4 TFLOP/s against 24.2 / 23.5-23.6 at d = 32, 18.7 / 18.8
///   against 11.1 / 11.6 at d = 48, 33.7-33.8 / 32.4 against 22.9 / 23.7 at d = 64; causal 20.5
///   / 19.5 against 20.5 / 18.3 at d = 32 and 24.3 / 23.2 against 18.7 / 16.7 at d = 64
///   (twenty-third round; four other tiles, 128x32x8x32 among them, ran slower than it at 32 and 64).
///   At d = 16-28 the range holds the same tile, with its lanes fitted to the head dim
///   ([`lanes_fitted`]): 256x32x4x64 at d = 16 ran 23.1 / 23.1 and 256x32x2x128 at d = 24 29.2 /
///   27.3, against 9.5-9.9 for 8x8x4x8, which the plan took before (the family table's tiles have
///   more lanes than d / 4 there; twenty-fourth round); 256x32x1x256 at d = 20 and 28 21.8 / 22.0
///   and 23.0 / 23.0, against 10.8 / 11.3 with 8 lanes (twenty-fifth round). With 8 lanes it
///   fits 48 KiB only on the subgroup tier (the portable tier's row-reduction buffer adds 8 KiB),
///   so NVIDIA devices without subgroups hold Q at d = 32, where the lanes stay at 8; the buffer
///   shrinks with the lanes, so elsewhere in the range the portable tier streams Q too (not
///   measured there).
/// - d = 64 where that tile does not fit (the portable tier with 48 KiB; both tiers with 32 KiB,
///   which wgpu reports on DX12): 128x32x8x32, Q streamed. On the portable tier with 48 KiB it
///   ran 28.2 / 26.1 against 22.6 / 22.5 for the held-Q 64x32x8x16 (twenty-sixth round's sweep,
///   its tile step; 28.2 / 26.2 against 22.4 / 22.5 when that step ran again); on the subgroup
///   tier it ran causal 23.8 / 22.4 against 18.7 / 16.7 (twenty-third round); with 32 KiB it is
///   not measured. At d = 32 the range lists no second tile: there 128x32x8x32 would hold Q (it
///   fits), and held it ran mixed non-causal (25.1 / 22.8 against 24.2 / 23.5) and slower causal
///   (19.9 / 16.4 against 20.5 / 18.3) on the subgroup tier (twenty-third round).
/// - d = 68 to 88: the same tile, its lanes fitted, fits 48 KiB on the subgroup tier up to d = 88.
///   Against the next range's 128x32 tile fitted alike (twenty-fifth round): d = 68 26.3 / 26.7
///   against 22.3 / 23.3, 72 28.0 / 30.6 against 20.7 / 23.3, 76 27.3 / 26.7 against 21.9 / 23.0,
///   80 31.4 / 33.9 against 23.8 / 24.2, 84 24.9 / 25.5 against 20.3 / 23.0, 88 29.8 / 29.2
///   against 23.5 / 23.3; causal at d = 68 21.0 / 20.8 against 18.3 / 19.8 (the plan in the
///   twenty-sixth round against the 128-row tile in the twenty-fifth, two calls). On the portable
///   tier it fits at d = 68 and 72 and 128x32x8x32, fitted, follows. The table's range holding
///   these two tiles starts at d = 64 (see above).
/// - Above d = 88: 128x32x8x32, at d = 128 24.6 TFLOP/s in f32 against 15.4 for the best tile
///   holding Q (`f32_tiles.json`, before the products were unrolled). From d = 236 it needs more
///   than 48 KiB (from d = 204 on the portable tier, whose row-reduction buffer takes room too);
///   there 64x32x16x16 (4 x 2 scores and 4 x 4 output vec4s a thread) was the fastest of eight
///   streamed tiles at d = 256 timed with P V as a loop: 22.9 / 25.6 against 12.3 / 12.1 for the
///   16x16x16x8 that the table's held-Q tiles came down to, and 24.4 / 27.8 with its P V unrolled
///   as the plan now does (twenty-third round).
const STREAMED_Q_TILES: &[(DeviceFamily, u32, u32, &[TileRow])] = &[
    (DeviceFamily::Nvidia, 16, 60, &[(256, 32, 8, 32)]),
    (
        DeviceFamily::Nvidia,
        64,
        88,
        &[(256, 32, 8, 32), (128, 32, 8, 32)],
    ),
    (
        DeviceFamily::Nvidia,
        92,
        u32::MAX,
        &[(128, 32, 8, 32), (64, 32, 16, 16)],
    ),
];

/// The streamed-Q tiles the plan tries first for this device and head dim (often none), their
/// rows' lanes fitted to the head dim up to [`FITTED_LANES_MAX_HEAD_DIM`] ([`lanes_fitted`]).
pub fn streamed_q_tiles(caps: &DeviceCaps, head_dim: u32) -> Vec<Tiles> {
    let family = DeviceFamily::of(caps);
    STREAMED_Q_TILES
        .iter()
        .find(|&&(f, lo, hi, _)| f == family && (lo..=hi).contains(&head_dim))
        .map_or(Vec::new(), |(_, _, _, t)| {
            let fit = head_dim <= FITTED_LANES_MAX_HEAD_DIM;
            t.iter()
                .map(|&row| {
                    if fit {
                        lanes_fitted(tiles(row), head_dim)
                    } else {
                        tiles(row)
                    }
                })
                .collect()
        })
}

/// Largest head dim at which [`streamed_q_tiles`] fits a row's lanes to the head dim. On the H200
/// (f32 / f16 TFLOP/s, N = 8k, non-causal; BENCHMARKS.md) the first tile of each range, fitted,
/// ran faster than unfitted at every multiple of 8 from 16 to 120 that is not a multiple of 32,
/// in both dtypes, except f16 at 104 (1% slower) and f32 at 112 (2% slower). Fitted, then
/// unfitted, with the ranges of the twenty-fourth round (128x32 tiles from d = 68; at 16 and 24
/// the held-Q 8x8x4x8 before; 256x32x8x32 unfitted ran 10.3 / 10.2 at 16 and 13.0 / 13.2 at 24):
/// d = 16 23.1 / 23.1 (9.5 / 9.5), 24 29.2 / 27.3 (9.6 / 9.9), 40 30.3 / 30.1 (17.0 / 17.0), 48
/// 28.8 / 30.9 (18.7 / 18.8), 56 26.9 / 30.1 (20.6 / 20.7), 72 20.7 / 23.3 (18.2 / 19.8), 80 23.8
/// / 24.2 (19.9 / 21.3), 88 23.5 / 23.3 (20.6 / 21.7), 104 22.4 / 23.1 (21.3 / 23.3), 112 22.0 /
/// 24.6 (22.4 / 24.4), 120 23.9 / 25.0 (22.7 / 24.6). Odd numbers of vec4s on 2 lanes against 8
/// with 128x32 tiles (twenty-fifth round): d = 92 17.3 / 18.1 (10.1 / 10.5), 100 21.6 / 23.5
/// (18.9 / 20.9), 108 22.1 / 23.4 (14.9 / 16.3), 116 23.1 / - (19.6 / 21.8), 124 16.2 / 16.5
/// (10.5 / 10.6). Above 128 fitting did not lead throughout (twenty-fifth round, 128x32 tiles):
/// d = 136 with 2 lanes 22.9 / 23.3 against 8 lanes' 23.4 / 25.0, 144 with 4 lanes 22.3 / 24.8
/// against 24.0 / 25.7, 176 with 4 lanes 23.6 / 25.4 against 23.1 / 25.8, 200 with 2 lanes 23.3
/// / 24.7 against 21.2 / 24.0; with no rule in that the limit stays. The second tile of a range,
/// fitted, is not measured.
pub const FITTED_LANES_MAX_HEAD_DIM: u32 = 128;

/// Fewest vec4s of the head dim at which an odd number of them is split over 2 lanes a row (one
/// lane owning one vec4 more than the other) rather than given whole to 1 lane. On the H200 (f32 /
/// f16 TFLOP/s, N = 8k, non-causal; BENCHMARKS.md, twenty-fifth round), 1 lane against 2 with
/// 256x32 tiles: d = 20 (5 vec4s) 21.8 / 22.0 against 18.4 / 17.8, d = 28 23.0 / 23.0 against
/// 19.7 / 19.3, d = 36 21.2 / 22.5 against 19.5 / 21.3; from 11 vec4s 2 lanes lead, or trail by
/// 2% (f16 at d = 44; a tie at 60), 2 lanes against 1: d = 44 24.0 / 23.5 against 23.3 / 23.9,
/// d = 52 25.6 / 25.5 against 21.9 / 24.0, d = 60 23.7 / 24.2 against 22.5 / 24.2, d = 76 27.3 /
/// 26.7 against 22.4 / 24.5. The table's 8 lanes ran 10.8-18.9 / 11.3-19.5 at d = 20-60.
pub const TWO_LANES_MIN_ODD_VEC4S: u32 = 11;

/// The tile with the most lanes along a row, at most its own, that split the head dim's vec4s
/// evenly: threads_x halves (and threads_y doubles, keeping the threads and the block) while it
/// does not divide head_dim / 4. A lane then owns as many output vec4s as every other, instead of
/// some lanes idling in P V. An odd number of vec4s goes to 1 lane below
/// [`TWO_LANES_MIN_ODD_VEC4S`] and to 2 lanes from there, one of them idle for one vec4 a row
/// (2 lanes also where 1 lane's shape is not well formed). The tile stays as it is where neither
/// the fitted shape nor 2 lanes is well formed, and where threads_x is not a power of two (no
/// table's tile).
///
/// ```
/// use wgpu_flash_attn::plan::Tiles;
/// use wgpu_flash_attn::tuning::lanes_fitted;
/// let t: Tiles = "256x32x8x32".parse().unwrap();
/// assert_eq!(lanes_fitted(t, 64), t); // 16 vec4s: 2 a lane
/// assert_eq!(lanes_fitted(t, 48).to_string(), "256x32x4x64"); // 12 vec4s: 3 a lane
/// assert_eq!(lanes_fitted(t, 24).to_string(), "256x32x2x128"); // 6 vec4s: 3 a lane
/// assert_eq!(lanes_fitted(t, 20).to_string(), "256x32x1x256"); // 5 vec4s: all on 1 lane
/// assert_eq!(lanes_fitted(t, 52).to_string(), "256x32x2x128"); // 13 vec4s: 7 and 6
/// let rows_128: Tiles = "128x32x8x32".parse().unwrap();
/// assert_eq!(lanes_fitted(rows_128, 20).to_string(), "128x32x2x128"); // 1 lane: 256 > 128 rows
/// ```
pub fn lanes_fitted(t: Tiles, head_dim: u32) -> Tiles {
    let vec4s = head_dim / 4;
    if !t.threads_x.is_power_of_two() || vec4s == 0 {
        return t;
    }
    let fewest = if vec4s % 2 == 1 && vec4s < TWO_LANES_MIN_ODD_VEC4S {
        1
    } else {
        2
    };
    let mut lanes = t.threads_x;
    while lanes > fewest && vec4s % lanes != 0 {
        lanes /= 2;
    }
    let reshaped = |lanes: u32| {
        let threads_y = t.threads_y.checked_mul(t.threads_x / lanes)?;
        Some(Tiles {
            threads_x: lanes,
            threads_y,
            ..t
        })
    };
    [lanes, lanes.max(2).min(t.threads_x)]
        .into_iter()
        .filter_map(reshaped)
        .find(Tiles::well_formed)
        .unwrap_or(t)
}

/// Families whose portable and subgroup kernels run with their products unrolled in the shader
/// text ([`crate::plan::Plan::unroll_qk`]). On the H200 the unrolled loops ran 12-39% faster at
/// head dims 32 to 192 and nearly 2x at 256 with the tiles the plan then chose (f32 and f16,
/// N = 8k; BENCHMARKS.md, twenty-second round, on Vulkan; NVIDIA through DX12 or GL takes the
/// same choice, unmeasured). Elsewhere they are not measured, and the text they make takes
/// longer to compile (on lavapipe a benchmark run of 12 small configurations, mostly compiling,
/// took about 2x as long unrolled; the command is in BENCHMARKS.md, twenty-second round), so the
/// loops stay.
const UNROLLED_PRODUCTS: &[DeviceFamily] = &[DeviceFamily::Nvidia];

/// Whether the portable and subgroup kernels unroll their products on this device (the plan's
/// choice when [`crate::plan::PlanOptions::unroll`] does not force one).
pub fn unrolls_products(caps: &DeviceCaps) -> bool {
    UNROLLED_PRODUCTS.contains(&DeviceFamily::of(caps))
}

/// The generic list, largest first: what follows every family's own entries.
const FORWARD_CANDIDATES: &[TileRow] = &[
    (32, 32, 16, 16),
    (64, 32, 16, 16),
    (48, 16, 16, 16),
    (32, 32, 8, 16),
    (16, 32, 16, 8),
    (16, 16, 16, 8),
    (16, 16, 8, 8),
    (16, 8, 8, 8),
    (8, 8, 8, 8),
    (8, 8, 4, 8),
    (8, 4, 4, 8),
    (4, 4, 4, 4),
];

fn tiles((block_m, block_n, threads_x, threads_y): TileRow) -> Tiles {
    Tiles {
        block_m,
        block_n,
        threads_x,
        threads_y,
    }
}

/// The generic candidate tiles for the forward kernels, best first.
pub fn forward_candidates() -> impl Iterator<Item = Tiles> {
    FORWARD_CANDIDATES.iter().copied().map(tiles)
}

/// A family's own entries, best first (empty for [`DeviceFamily::Other`]).
pub fn family_tiles(family: DeviceFamily) -> Vec<Tiles> {
    FAMILY_TILES
        .iter()
        .find(|(f, _)| *f == family)
        .map_or(Vec::new(), |(_, t)| t.iter().copied().map(tiles).collect())
}

/// The candidates for a device, best first: its family's entries, then the generic list (each
/// tile once). Whether one fits the device is the plan's business.
pub fn candidates_for(caps: &DeviceCaps) -> Vec<Tiles> {
    let mut out = family_tiles(DeviceFamily::of(caps));
    for t in forward_candidates() {
        if !out.contains(&t) {
            out.push(t);
        }
    }
    out
}

/// (rows per subgroup, block_n, subgroups) for the cooperative-matrix forward kernel, best first,
/// for head dims up to 64 and above. Each subgroup owns 16 or 32 query rows; K and V tiles of
/// block_n keys are shared by all of them. A subgroup with 32 rows reads each K and V fragment
/// once for two products, but holds twice the accumulators. The plan skips the candidates the
/// device cannot run. Measured on the H200 at N = 8k, f16: at d = 64, 16 rows x 8 subgroups with
/// 16-key tiles lead (121.0-121.3 TFLOP/s non-causal and 108.9-109.0 causal, against
/// 102.8-102.9 / 90.3 for 16 rows x 4 subgroups; bench-results/h200-2026-11-30-session9, call3):
/// at 120 registers two of its workgroups share an SM (16 subgroups; the 4-subgroup tiles get
/// 12, each workgroup staging its own K/V tiles), and they need not be in the same stage.
/// At d = 128, 16 rows x 8 subgroups with 32-key tiles (145.6 / 119.1-120.1, against 116.4-116.8
/// / 100.3 with 16-key tiles; 32 rows per subgroup spill there). From d = 160 32-key tiles for 8
/// subgroups do not fit 48 KiB of workgroup memory, and 16-key tiles for 8 subgroups come next:
/// at d = 256, 88.0 / 76.0 against 44.9 / 42.7 for 16 rows x 4 subgroups (session9, call5); at
/// d = 192 125.0 / 115.5 against 105.4 / 92.7, at d = 160 118.1 / 105.6 against 117.7 / 91.4
/// (call6). At
/// d = 32 the first choice of the small table leads non-causal and is level causal (75.2 /
/// 66.8-67.2, against 71.4 / 66.9 for 16 rows x 4 subgroups), and at d = 96 the first of the other table is level with the best
/// (121.4 / 114.1, against 122.6 / 111.4 for 32 rows x 4 subgroups with 16-key tiles).
const COOP_CANDIDATES_SMALL_D: &[(u32, u32, u32)] = &[
    (16, 16, 8),
    (16, 16, 4),
    (32, 16, 4),
    (16, 32, 8),
    (32, 32, 4),
    (16, 32, 4),
    (16, 16, 2),
    (16, 16, 1),
];
const COOP_CANDIDATES: &[(u32, u32, u32)] = &[
    (16, 32, 8),
    (16, 16, 8),
    (16, 16, 4),
    (32, 16, 4),
    (32, 32, 4),
    (16, 32, 4),
    (16, 16, 2),
    (16, 16, 1),
];

/// With scores in registers ([`crate::plan::Plan::coop_elements`]), the first candidate by head
/// dim: (largest head dim, (rows per subgroup, block_n, subgroups)), always 16 rows x 8
/// subgroups. Without the score and probability blocks, longer key tiles fit 48 KiB and win
/// (bench-results/h200-2026-11-30-session12, call 3, TFLOP/s non-causal / causal at N = 8k, f16,
/// against the next best): d = 32 32 keys 134.8 / 114.9 (128 keys 127.1 / 100.2); d = 64 128
/// keys 161.4 / 128.8 (16 keys 151.6 / 124.5); d = 96 64 keys 157.9 / 131.8 (32 keys 158.6 /
/// 128.3); d = 128 64 keys 177.4 / 152.6 (32 keys 172.2 / 133.6); d = 160 32 keys 176.6 / 136.6
/// (16 keys 130.9 / 104.5); d = 192 159.3 / 133.7 (151.7 / 135.7); d = 256 129.7 / 115.1 (122.2 /
/// 109.2).
const COOP_REGISTERS_FIRST: &[(u32, (u32, u32, u32))] = &[
    (32, (16, 32, 8)),
    (64, (16, 128, 8)),
    (128, (16, 64, 8)),
    (u32::MAX, (16, 32, 8)),
];

/// The cooperative-matrix kernel's candidate tiles at this head dimension for subgroups of
/// `subgroup_size` lanes, best first (`threads_x` = the subgroup size, `threads_y` = subgroups),
/// for scores in registers (`elements`) or through workgroup memory.
pub fn coop_tiles(
    head_dim: u32,
    subgroup_size: u32,
    elements: bool,
) -> impl Iterator<Item = Tiles> {
    coop_candidates(head_dim, elements).map(move |(rows, block_n, subgroups)| Tiles {
        block_m: rows * subgroups,
        block_n,
        threads_x: subgroup_size,
        threads_y: subgroups,
    })
}

/// The candidate (rows per subgroup, block_n, subgroups) triples for the cooperative-matrix
/// forward kernel at this head dimension, best first: with scores in registers (`elements`) the
/// first choice measured for that head dim on the H200, then the table for both ways.
pub fn coop_candidates(head_dim: u32, elements: bool) -> impl Iterator<Item = (u32, u32, u32)> {
    let first = COOP_REGISTERS_FIRST
        .iter()
        .find(|(max_dim, _)| head_dim <= *max_dim)
        .map(|&(_, tile)| tile)
        .filter(|_| elements);
    let table = if head_dim <= 64 {
        COOP_CANDIDATES_SMALL_D
    } else {
        COOP_CANDIDATES
    };
    first
        .into_iter()
        .chain(table.iter().copied().filter(move |&t| Some(t) != first))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn caps(name: &str, backend: &str, vendor: u32, device_type: &str) -> DeviceCaps {
        DeviceCaps {
            name: name.into(),
            backend: backend.into(),
            vendor,
            device_type: device_type.into(),
            ..DeviceCaps::from_limits(&wgpu::Limits::default())
        }
    }

    #[test]
    fn families_are_recognised() {
        let cases = [
            (
                caps("NVIDIA H200", "Vulkan", 0x10de, "DiscreteGpu"),
                DeviceFamily::Nvidia,
            ),
            (
                caps("AMD Radeon RX 7900", "Vulkan", 0x1002, "DiscreteGpu"),
                DeviceFamily::Amd,
            ),
            (
                caps("Apple M2", "Metal", 0, "IntegratedGpu"),
                DeviceFamily::Apple,
            ),
            (
                caps("Intel(R) Arc(tm)", "Vulkan", 0x8086, "DiscreteGpu"),
                DeviceFamily::Intel,
            ),
            (
                caps("Adreno (TM) 740", "Vulkan", 0x5143, "IntegratedGpu"),
                DeviceFamily::Mobile,
            ),
            (
                caps("llvmpipe (LLVM 19.1.7, 256 bits)", "Vulkan", 0x10005, "Cpu"),
                DeviceFamily::Software,
            ),
            (
                caps("SwiftShader Device", "Vulkan", 0x1ae0, "Cpu"),
                DeviceFamily::Software,
            ),
            (caps("", "BrowserWebGpu", 0, "Other"), DeviceFamily::Browser),
            (
                caps("Some GPU", "Dx12", 0x1234, "DiscreteGpu"),
                DeviceFamily::Other,
            ),
        ];
        for (c, want) in cases {
            assert_eq!(DeviceFamily::of(&c), want, "{}", c.name);
        }
    }

    #[test]
    fn candidates_start_with_the_family_and_hold_every_generic_tile_once() {
        let c = caps("llvmpipe", "Vulkan", 0x10005, "Cpu");
        let list = candidates_for(&c);
        let family = family_tiles(DeviceFamily::Software);
        assert_eq!(list[..family.len()], family[..]);
        for t in forward_candidates() {
            assert_eq!(list.iter().filter(|x| **x == t).count(), 1, "{t:?}");
        }
        let other = candidates_for(&caps("x", "Dx12", 0x1234, "DiscreteGpu"));
        assert!(other.iter().copied().eq(forward_candidates()));
    }

    #[test]
    fn every_family_entry_is_well_formed() {
        for (family, entries) in FAMILY_TILES {
            for &e in *entries {
                let t = tiles(e);
                assert!(
                    t.block_m % t.threads_y == 0 && t.block_n % t.threads_x == 0,
                    "{family:?} {t:?}"
                );
                assert!(
                    t.threads() <= 256,
                    "{family:?} {t:?} exceeds WebGPU's default"
                );
            }
        }
    }
}
