//! From a problem and a device's capabilities to a [`Plan`]: kernel variant, tiles, grid, bytes.
//!
//! Nothing here touches wgpu objects, so plans can be made and inspected (and tested) without a GPU.

use crate::error::{FlashError, Result};
use crate::problem::{Attention, DType, Tensor};
use crate::tuning;

/// What the plan needs to know about a device. Read from a live device by
/// [`crate::FlashContext`], or written by hand to plan for a device that is not present.
#[derive(Debug, Clone, PartialEq)]
pub struct DeviceCaps {
    /// Adapter name.
    pub name: String,
    /// Backend ("Vulkan", "Gl", "Metal", "Dx12", "BrowserWebGpu").
    pub backend: String,
    /// Driver name and version, as the adapter reports them.
    pub driver: String,
    /// `max_compute_workgroup_storage_size`, bytes.
    pub max_workgroup_storage_bytes: u32,
    /// `max_compute_invocations_per_workgroup`.
    pub max_invocations_per_workgroup: u32,
    /// `max_compute_workgroup_size_x`.
    pub max_workgroup_size_x: u32,
    /// `max_compute_workgroups_per_dimension`.
    pub max_workgroups_per_dimension: u32,
    /// `max_storage_buffer_binding_size`, bytes.
    pub max_storage_buffer_binding_size: u64,
    /// `max_buffer_size`, bytes.
    pub max_buffer_size: u64,
    /// `min_storage_buffer_offset_alignment`, bytes.
    pub min_storage_buffer_offset_alignment: u32,
    /// The device has `SHADER_F16` enabled.
    pub shader_f16: bool,
    /// The device has `TIMESTAMP_QUERY` enabled.
    pub timestamp_query: bool,
    /// Subgroup size range when `SUBGROUP` is enabled.
    pub subgroup_sizes: Option<(u32, u32)>,
    /// Vendor id as the backend reports it (a PCI vendor id on most backends: 0x10de NVIDIA,
    /// 0x1002 AMD, 0x8086 Intel, 0x106b Apple; 0 where unknown). Picks the tile table's family.
    pub vendor: u32,
    /// Device type as wgpu names it ("DiscreteGpu", "IntegratedGpu", "Cpu", ...; empty if unknown).
    pub device_type: String,
    /// The device has `EXPERIMENTAL_COOPERATIVE_MATRIX` enabled and its adapter lists a 16x16x16
    /// configuration with f16 A/B and f32 accumulators (what the tensor-core tier uses).
    pub coop_matrix_f16: bool,
    /// The device has `SUBGROUP_BARRIER` enabled (on NVIDIA, the tensor-core tier then orders each
    /// subgroup's own stages with subgroup barriers: [`Plan::subgroup_sync`]).
    pub subgroup_barrier: bool,
    /// Compute units (SMs, CUs), estimated from the adapter name; 0 when unknown. Sizes the
    /// KV-cache plan's split count and the tensor-core tier's [`Plan::banded_groups`].
    pub compute_units: u32,
    /// The tensor-core tier may keep scores in registers ([`Plan::coop_elements`]): the device
    /// passes SPIR-V through and a probe kernel found every fragment element where that kernel
    /// assumes it (checked when the context is created; Vulkan with 32-lane subgroups only;
    /// [`FlashContext::coop_elements_status`](crate::FlashContext::coop_elements_status) says why
    /// not).
    pub coop_elements: bool,
}

impl DeviceCaps {
    /// A device with exactly WebGPU's default limits and no optional features.
    pub fn webgpu_defaults() -> Self {
        DeviceCaps {
            name: "WebGPU defaults".into(),
            backend: "none".into(),
            ..Self::from_limits(&wgpu::Limits::default())
        }
    }

    /// A device with these limits and no optional features (name, backend and driver empty).
    pub fn from_limits(l: &wgpu::Limits) -> Self {
        DeviceCaps {
            name: String::new(),
            backend: String::new(),
            driver: String::new(),
            max_workgroup_storage_bytes: l.max_compute_workgroup_storage_size,
            max_invocations_per_workgroup: l.max_compute_invocations_per_workgroup,
            max_workgroup_size_x: l.max_compute_workgroup_size_x,
            max_workgroups_per_dimension: l.max_compute_workgroups_per_dimension,
            max_storage_buffer_binding_size: l.max_storage_buffer_binding_size,
            max_buffer_size: l.max_buffer_size,
            min_storage_buffer_offset_alignment: l.min_storage_buffer_offset_alignment,
            shader_f16: false,
            timestamp_query: false,
            subgroup_sizes: None,
            vendor: 0,
            device_type: String::new(),
            coop_matrix_f16: false,
            subgroup_barrier: false,
            compute_units: 0,
            coop_elements: false,
        }
    }

    /// Whether the subgroup tier can use rows of `threads_x` lanes on this device: the device has
    /// `SUBGROUP` and `threads_x` is a power of two no larger than the smallest subgroup size, so it
    /// divides every size the device may pick.
    pub fn subgroup_rows_fit(&self, threads_x: u32) -> bool {
        self.subgroup_sizes
            .is_some_and(|(min, _)| threads_x.is_power_of_two() && threads_x <= min)
    }
}

/// How Q, K, V and O are read and written by the shader.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Storage {
    /// `array<vec4<f32>>`.
    F32,
    /// `array<vec4<f16>>`, needs `SHADER_F16`.
    F16,
    /// f16 pairs packed in `u32` words, converted with `unpack2x16float`; works everywhere.
    F16Packed,
    /// bf16 pairs packed in `u32` words, converted with shifts (an f32's upper half).
    BF16Packed,
}

impl Storage {
    /// Short name used in reports and pipeline labels.
    pub fn name(self) -> &'static str {
        match self {
            Storage::F32 => "f32",
            Storage::F16 => "f16",
            Storage::F16Packed => "f16-packed",
            Storage::BF16Packed => "bf16-packed",
        }
    }
}

/// Tile shape of the portable forward kernel.
///
/// A workgroup of `threads_x * threads_y` invocations owns `block_m` query rows and streams keys in
/// tiles of `block_n`. Thread (x, y) holds rows y, y + threads_y, ... and key columns x, x + threads_x, ...
/// of each score tile, and the matching rows of the output accumulator.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct Tiles {
    /// Query rows per workgroup.
    pub block_m: u32,
    /// Keys per K/V tile.
    pub block_n: u32,
    /// Threads along a row (key columns / head-dim groups).
    pub threads_x: u32,
    /// Thread rows.
    pub threads_y: u32,
}

/// `BMxBNxTXxTY` (block_m, block_n, threads_x, threads_y), as the benchmarks and tools write
/// tiles.
impl std::fmt::Display for Tiles {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "{}x{}x{}x{}",
            self.block_m, self.block_n, self.threads_x, self.threads_y
        )
    }
}

/// Reads `BMxBNxTXxTY`, e.g. `"128x32x32x8"`.
///
/// ```
/// let t: wgpu_flash_attn::Tiles = "64x16x32x4".parse().unwrap();
/// assert_eq!((t.block_m, t.threads_y), (64, 4));
/// assert_eq!(t.to_string(), "64x16x32x4");
/// ```
impl std::str::FromStr for Tiles {
    type Err = FlashError;

    fn from_str(s: &str) -> Result<Tiles> {
        let bad = || FlashError::BadOption {
            what: "tiles",
            got: s.into(),
            why: "expected BMxBNxTXxTY, four integers, e.g. 128x32x32x8",
        };
        let n: Vec<u32> = s
            .split('x')
            .map(|x| x.trim().parse::<u32>().map_err(|_| bad()))
            .collect::<Result<_>>()?;
        match n[..] {
            [block_m, block_n, threads_x, threads_y] => Ok(Tiles {
                block_m,
                block_n,
                threads_x,
                threads_y,
            }),
            _ => Err(bad()),
        }
    }
}

impl Tiles {
    /// Invocations per workgroup.
    pub fn threads(&self) -> u32 {
        self.threads_x * self.threads_y
    }

    /// Bytes of workgroup memory the forward kernel uses with these tiles at this head dimension:
    /// Q tile and one K/V tile (f32; K/V rows padded by 4 elements against bank conflicts), the
    /// probability tile (rows of vec4s, padded by one), and one float per thread for row reductions.
    pub fn workgroup_bytes(&self, head_dim: u32) -> u32 {
        let d4 = head_dim / 4;
        16 * self.block_m * d4
            + 16 * self.block_n * (d4 + 1)
            + 16 * self.block_m * (self.block_n.div_ceil(4) + 1)
            + 4 * self.block_m * self.threads_x
    }

    pub(crate) fn well_formed(&self) -> bool {
        self.threads_x > 0
            && self.threads_y > 0
            && self.block_m % self.threads_y == 0
            && self.block_n % self.threads_x == 0
            && self.block_m >= self.threads_y
            && self.block_n >= self.threads_x
    }
}

/// Which kernel a plan runs (the tiers of the README, best last).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Kernel {
    /// The portable tiled forward kernel (plain WGSL, f32 accumulation).
    ForwardPortable,
    /// The portable kernel with row reductions through subgroup operations (needs `SUBGROUP`).
    ForwardSubgroup,
    /// Q K^T and P V on the matrix units through cooperative matrices (f16 in, f32 accumulate;
    /// needs `EXPERIMENTAL_COOPERATIVE_MATRIX` with a 16x16x16 f16/f32 configuration and one fixed
    /// subgroup size).
    ForwardCoopMatrix,
}

impl Kernel {
    /// Short name used in reports and pipeline labels.
    pub fn name(self) -> &'static str {
        match self {
            Kernel::ForwardPortable => "portable",
            Kernel::ForwardSubgroup => "subgroup",
            Kernel::ForwardCoopMatrix => "coop-matrix",
        }
    }
}

/// Choices a caller may force instead of letting the plan decide (tests, benchmarks, tuning).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct PlanOptions {
    /// Use these tiles instead of the table's choice (still checked against the device).
    pub tiles: Option<Tiles>,
    /// Read f16 through packed `u32` words even where `SHADER_F16` exists.
    pub force_packed_f16: bool,
    /// Run this kernel instead of the best one the device offers (an error if the device or the
    /// problem cannot use it).
    pub kernel: Option<Kernel>,
    /// The tensor-core tier's scores in registers ([`Plan::coop_elements`]): `None` where the
    /// device allows it, `Some(false)` never (scores through workgroup memory), `Some(true)`
    /// required: an error where the device or the problem does not allow it (through
    /// [`FlashContext::plan_with`](crate::FlashContext::plan_with), a
    /// [`FlashError::Unavailable`] with the probe's reason where the device's probe refused).
    pub coop_elements: Option<bool>,
    /// Unroll the portable and subgroup kernels' products in the shader text ([`Plan::unroll_qk`],
    /// [`Plan::unroll_pv`]): `None` where the device family's entry says so
    /// ([`crate::tuning::unrolls_products`]); `Some(true)` unrolls Q K^T, and P V where
    /// [`Plan::unroll_pv`]'s rule allows; `Some(false)` neither. The tensor-core kernel ignores
    /// it.
    pub unroll: Option<bool>,
}

/// A validated, device-specific way to run one problem. Pure data; inspect it freely. Made only by
/// the planner ([`plan`], [`plan_with`]), and it may gain fields: `#[non_exhaustive]`.
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub struct Plan {
    /// The problem this plan was made for.
    pub problem: Attention,
    /// The kernel variant.
    pub kernel: Kernel,
    /// How tensors are stored and read.
    pub storage: Storage,
    /// Tile sizes.
    pub tiles: Tiles,
    /// Workgroups dispatched in x (query blocks), y (query heads), z (batch).
    pub grid: [u32; 3],
    /// Workgroup memory per workgroup, bytes.
    pub workgroup_bytes: u32,
    /// Q is read from device memory in the score loop instead of kept in workgroup memory: for
    /// tiles that fit no other way, forced ones or the table's streamed-Q tiles
    /// ([`crate::tuning::streamed_q_tiles`]).
    pub stream_q: bool,
    /// Device memory the kernel itself allocates beyond the caller's tensors (the params uniform).
    pub scratch_bytes: u64,
    /// The tensor-core kernel orders each subgroup's own stages with subgroup barriers instead of
    /// workgroup barriers (7% faster on the H200). Chosen on NVIDIA with `SUBGROUP_BARRIER` only:
    /// it relies on a subgroup barrier ordering workgroup memory, which NVIDIA's driver does but
    /// Vulkan does not promise for the barrier naga writes.
    pub subgroup_sync: bool,
    /// The tensor-core kernel keeps scores and probabilities in registers, through element access
    /// to its fragments (SPIR-V passed through to the driver).
    pub coop_elements: bool,
    /// K/V tiles the tensor-core kernel keeps in workgroup memory: 2 (one barrier a key tile
    /// instead of two) where scores are in registers, head_dim <= 128 and two fit the device;
    /// else 1, as for the other kernels.
    pub coop_kv_tiles: u32,
    /// The portable and subgroup kernels' Q K^T loop over the head dimension is unrolled in the
    /// shader text, so that each read takes a constant offset from its row and no loop state
    /// moves between registers. Faster on NVIDIA (H200, N = 8k, subgroup tier, f32 / f16: d = 128
    /// 25.2 / 22.4 -> 29.6 / 31.1 TFLOP/s with `unroll_pv`; 12-37% at the other head dims from
    /// 32 to 192, nearly 2x at 256), slower to compile, so the other families keep the loop until
    /// it is measured there ([`crate::tuning::unrolls_products`]).
    pub unroll_qk: bool,
    /// The P V loop over the key tile is unrolled too: with `unroll_qk` where Q is streamed and
    /// each thread's output accumulators are at most [`UNROLL_PV_MAX_ACCUMULATORS`] floats
    /// (H200, d = 128: 28.0 -> 29.2 TFLOP/s f32; d = 256 with 64x32x16x16 tiles: 22.9 / 25.6 ->
    /// 24.3 / 27.8 f32 / f16). Slower where Q is held (d = 64: 22.8 -> 19.0) and with more
    /// accumulators (d = 192 with 128x32x8x32 tiles, 96 of them, f16: 30.5 -> 18.9, the register
    /// file full).
    pub unroll_pv: bool,
    /// Number of groups the tensor-core kernel's banded code runs the (batch, head) pairs in, one
    /// group after the other, each group's query blocks longest first ([`banded_groups`]): for
    /// causal or windowed problems, and where the plan takes that code for others too (d = 256
    /// with scores in registers, f16 or f32; there all blocks are equally long); 1 elsewhere
    /// (unused).
    pub banded_groups: u32,
}

impl Plan {
    /// The tiles as reports name them: `BMxBNxTXxTY`, then how Q is read and which product loops
    /// are unrolled, e.g. `128x32x8x32 (Q streamed; Q K^T, P V unrolled)`.
    pub fn tiles_label(&self) -> String {
        let mut notes = Vec::new();
        if self.stream_q {
            notes.push("Q streamed");
        }
        match (self.unroll_qk, self.unroll_pv) {
            (true, true) => notes.push("Q K^T, P V unrolled"),
            (true, false) => notes.push("Q K^T unrolled"),
            _ => {}
        }
        if notes.is_empty() {
            self.tiles.to_string()
        } else {
            format!("{} ({})", self.tiles, notes.join("; "))
        }
    }

    /// Bytes of the caller's tensors: Q, K, V, O and (when asked) LSE.
    pub fn tensor_bytes(&self) -> u64 {
        let p = &self.problem;
        let e = p.dtype.size();
        (p.len_of(Tensor::Q) + p.len_of(Tensor::K) + p.len_of(Tensor::V) + p.len_of(Tensor::O)) * e
            + if p.with_lse { p.lse_len() * 4 } else { 0 }
    }

    /// Number of key tiles the kernel visits, over all workgroups (masked-out tiles are skipped).
    pub fn key_tiles_visited(&self) -> u64 {
        let p = &self.problem;
        (0..if p.cu_seqlens.is_some() { p.batch } else { 1 })
            .map(|b| key_tiles(&p.sequence(b), self.tiles))
            .sum()
    }
}

/// Key tiles visited for a problem that is not variable-length, computed as the shader bounds them:
/// the first row's band start and the last row's band end of each query block.
fn key_tiles(p: &Attention, t: Tiles) -> u64 {
    let (bm, bn) = (t.block_m as i64, t.block_n as i64);
    let per_head: u64 = (0..p.seq_q.div_ceil(t.block_m) as i64)
        .map(|bx| {
            let first_row = bx * bm;
            let last_row = ((bx + 1) * bm).min(p.seq_q as i64) - 1;
            let start = p
                .band(first_row as u32)
                .0
                .unwrap_or(0)
                .clamp(0, p.seq_kv as i64)
                / bn
                * bn;
            let end = p
                .band(last_row as u32)
                .1
                .map_or(p.seq_kv as i64, |h| (h + 1).clamp(0, p.seq_kv as i64));
            ((end - start).max(0) as u64).div_ceil(bn as u64)
        })
        .sum();
    per_head * p.batch as u64 * p.heads_q as u64
}

/// The most output accumulators (floats per thread: rows per thread times the head dim's vec4s
/// per thread, times 4) with which the P V loop is unrolled ([`Plan::unroll_pv`]). On the H200
/// unrolling it as well as Q K^T was faster with 64 (d = 128 with 128x32x8x32 tiles, and d = 256
/// with 64x32x16x16) and with 88 (d = 84 and 88 with 256x32x2x128, 2-5%), and slower with 96
/// (d = 192, 128x32x8x32); with 48 and 80 (d = 96 and 160) both unrolled beat both loops, P V's
/// own share not measured (BENCHMARKS.md, twenty-second, twenty-third and twenty-seventh rounds).
pub const UNROLL_PV_MAX_ACCUMULATORS: u32 = 88;

/// Output accumulators per thread of the portable and subgroup kernels (see
/// [`UNROLL_PV_MAX_ACCUMULATORS`]).
fn output_accumulators(t: &Tiles, head_dim: u32) -> u32 {
    (t.block_m / t.threads_y) * (head_dim / 4).div_ceil(t.threads_x) * 4
}

/// Plans `problem` for a device, letting the tile table choose.
pub fn plan(problem: &Attention, caps: &DeviceCaps) -> Result<Plan> {
    plan_with(problem, caps, PlanOptions::default())
}

/// Plans `problem` for a device with some choices forced.
pub fn plan_with(problem: &Attention, caps: &DeviceCaps, options: PlanOptions) -> Result<Plan> {
    problem.validate()?;
    let storage = storage_for(problem.dtype, caps, options.force_packed_f16);
    let d = problem.head_dim;
    let (kernel, tiles, stream_q) = choose_kernel_and_tiles(problem, caps, options)?;
    check_bindings(problem, caps)?;
    let grid = [
        problem.seq_q.div_ceil(tiles.block_m),
        problem.heads_q,
        problem.batch,
    ];
    for (what, n) in [
        ("workgroups in x (seq_q / block_m)", grid[0]),
        ("workgroups in y (heads_q)", grid[1]),
        ("workgroups in z (batch)", grid[2]),
    ] {
        if n > caps.max_workgroups_per_dimension {
            return Err(FlashError::DeviceLimit {
                what,
                needed: n as u64,
                limit: caps.max_workgroups_per_dimension as u64,
            });
        }
    }
    // Scores in registers (the tiles were fitted that way).
    let coop_elements = kernel == Kernel::ForwardCoopMatrix && scores_in_registers(caps, options);
    if options.coop_elements == Some(true) && !coop_elements {
        return Err(FlashError::MissingFeature {
            what: SCORES_IN_REGISTERS,
            feature: "SPIR-V passthrough with the probed fragment layout, the tensor-core tier and 32-lane subgroups",
        });
    }
    let unroll_qk = kernel != Kernel::ForwardCoopMatrix
        && options
            .unroll
            .unwrap_or_else(|| crate::tuning::unrolls_products(caps));
    let coop_kv_tiles = if kernel == Kernel::ForwardCoopMatrix {
        coop_kv_tiles(&tiles, d, coop_elements, caps)
    } else {
        1
    };
    Ok(Plan {
        problem: problem.clone(),
        kernel,
        storage,
        tiles,
        grid,
        workgroup_bytes: if kernel == Kernel::ForwardCoopMatrix {
            coop_workgroup_bytes(&tiles, d, coop_elements, coop_kv_tiles)
        } else {
            workgroup_bytes(kernel, &tiles, d, stream_q)
        },
        stream_q,
        scratch_bytes: crate::kernels::forward::PARAMS_BYTES,
        subgroup_sync: kernel == Kernel::ForwardCoopMatrix
            && caps.subgroup_barrier
            && crate::tuning::DeviceFamily::of(caps) == crate::tuning::DeviceFamily::Nvidia,
        coop_elements,
        coop_kv_tiles,
        unroll_qk,
        unroll_pv: unroll_qk
            && stream_q
            && output_accumulators(&tiles, d) <= UNROLL_PV_MAX_ACCUMULATORS,
        banded_groups: if kernel == Kernel::ForwardCoopMatrix
            && coop_banded(problem, storage, coop_elements)
        {
            banded_groups(grid, caps.compute_units)
        } else {
            1
        },
    })
}

/// Workgroups of the tensor-core kernel a group of (batch, head) pairs holds on average, per
/// compute unit (smaller groups hold fewer by up to one pair's blocks): two waves of one
/// workgroup per SM, so that a group's last wave, made of its shortest blocks, is short.
const BANDED_GROUP_WORKGROUPS_PER_UNIT: u64 = 2;
/// The same in all, where the device's compute units are unknown: two waves of an H200.
const BANDED_GROUP_WORKGROUPS_UNKNOWN: u64 = 264;

/// How many groups the tensor-core kernel splits a banded problem's (batch, head) pairs into
/// (`grid`: query blocks, heads, batch). Banded query blocks differ in length (causal: the last
/// one sees the most keys; a window bounded on the left only: the first), and GPUs start
/// workgroups in about dispatch order, so the kernel runs each group's blocks longest first,
/// its pairs side by side: the last wave is made of the shortest blocks. Groups rather than all
/// pairs at once, so that the workgroups running together read the K/V of few heads, which the
/// cache then serves.
///
/// Measured on the H200 (f16, causal, N = 8k, 2 x 2048 / head_dim heads; bench-results/
/// h200-2026-12-01-session17, call 4), against each head's blocks longest first: 3.4-4.3%
/// faster at d = 128 (2.0-3.9% at N = 2k and 4k; 0.5-2.1% slower at N = 16k, 0.1-2.1% faster
/// in call 3), 3.2% at d = 160, 6-7% at d = 192, 9% at d = 256, 1.5-2.9% at d = 64, level at
/// d = 32 and 96. All pairs as one group (call 2) was as fast from d = 128 but 3-4% slower at
/// d = 64 and 5% at N = 2k, most likely because the heads of the workgroups running at once
/// then share little K/V in the cache.
pub fn banded_groups(grid: [u32; 3], compute_units: u32) -> u32 {
    let pairs = grid[1] as u64 * grid[2] as u64;
    let per_group = match compute_units {
        0 => BANDED_GROUP_WORKGROUPS_UNKNOWN,
        n => BANDED_GROUP_WORKGROUPS_PER_UNIT * n as u64,
    };
    (pairs * grid[0] as u64 / per_group).clamp(1, pairs.max(1)) as u32
}

/// The kernel and tiles to run, and whether Q is streamed. A forced kernel must work on the device
/// (and with forced tiles); otherwise tiles come first (the forced ones, or the tile table's
/// choice for this device) and the subgroup tier is used where the device has `SUBGROUP` and
/// those tiles' rows fit a subgroup. Forced tiles whose Q tile does not fit workgroup memory
/// stream Q instead; forced tiles (and the table's streamed-Q tiles) that fit only without the
/// portable tier's row-reduction buffer run on the subgroup tier, where it is offered. The
/// table's held-Q tiles must fit the portable tier.
fn choose_kernel_and_tiles(
    problem: &Attention,
    caps: &DeviceCaps,
    options: PlanOptions,
) -> Result<(Kernel, Tiles, bool)> {
    let head_dim = problem.head_dim;
    // The tensor-core tier first: forced (an error if it cannot run), or where it can.
    let coop = match options.kernel {
        Some(Kernel::ForwardCoopMatrix) => {
            coop_usable(problem, caps, options)?;
            true
        }
        None => coop_usable(problem, caps, options).is_ok(),
        Some(_) => false,
    };
    if coop {
        let tiles = match options.tiles {
            Some(t) => t, // checked by coop_usable
            None => choose_coop_tiles(head_dim, caps, scores_in_registers(caps, options))?,
        };
        return Ok((Kernel::ForwardCoopMatrix, tiles, false));
    }
    if options.tiles.is_none() {
        // Measured faster than the tiles the table would hold Q with, where it lists one
        // (tuning::streamed_q_tiles says where and by how much).
        for t in tuning::streamed_q_tiles(caps, head_dim) {
            let forced = PlanOptions {
                tiles: Some(t),
                ..options
            };
            if let Ok(found) = choose_kernel_and_tiles(problem, caps, forced) {
                return Ok(found);
            }
        }
    }
    let (kernel, tiles) = match (
        choose_kernel_and_tiles_in_memory(head_dim, caps, options),
        options.tiles,
    ) {
        (Err(e @ FlashError::DeviceLimit { .. }), Some(forced)) => {
            // Retry with the room the Q tile would take: Q is streamed then. If that fails too,
            // the first error has the device's real numbers.
            let roomier = DeviceCaps {
                max_workgroup_storage_bytes: caps
                    .max_workgroup_storage_bytes
                    .saturating_add(q_tile_bytes(&forced, head_dim)),
                ..caps.clone()
            };
            choose_kernel_and_tiles_in_memory(head_dim, &roomier, options).map_err(|_| e)?
        }
        (chosen, _) => chosen?,
    };
    let stream_q =
        workgroup_bytes(kernel, &tiles, head_dim, false) > caps.max_workgroup_storage_bytes;
    Ok((kernel, tiles, stream_q))
}

/// `DeviceCaps::backend` of WebGPU in a browser, where the subgroup tier is not offered: the
/// browser compiles the WGSL itself and wants `enable subgroups;`, which naga 30 rejects.
pub(crate) const BROWSER_BACKEND: &str = "BrowserWebGpu";

/// Bytes of the Q tile in workgroup memory (less the one element that stays declared).
fn q_tile_bytes(t: &Tiles, head_dim: u32) -> u32 {
    16 * (t.block_m * (head_dim / 4) - 1)
}

fn choose_kernel_and_tiles_in_memory(
    head_dim: u32,
    caps: &DeviceCaps,
    options: PlanOptions,
) -> Result<(Kernel, Tiles)> {
    match options.kernel {
        Some(Kernel::ForwardCoopMatrix) => {
            unreachable!("choose_kernel_and_tiles plans the cooperative-matrix kernel")
        }
        Some(Kernel::ForwardSubgroup) => {
            if caps.subgroup_sizes.is_none() {
                return Err(FlashError::MissingFeature {
                    what: Kernel::ForwardSubgroup.name(),
                    feature: "SUBGROUP",
                });
            }
            if caps.backend == BROWSER_BACKEND {
                return Err(FlashError::MissingFeature {
                    what: Kernel::ForwardSubgroup.name(),
                    feature: "SUBGROUP outside the browser (a browser's WGSL needs `enable subgroups;`, which naga 30 cannot parse yet)",
                });
            }
            let tiles = match options.tiles {
                Some(t) => {
                    check_tiles(Kernel::ForwardSubgroup, &t, head_dim, caps)?;
                    t
                }
                None => choose_tiles(Kernel::ForwardSubgroup, head_dim, caps)?,
            };
            Ok((Kernel::ForwardSubgroup, tiles))
        }
        forced @ (None | Some(Kernel::ForwardPortable)) => {
            let subgroup_fits = |t: &Tiles| {
                forced.is_none()
                    && caps.backend != BROWSER_BACKEND
                    && check_tiles(Kernel::ForwardSubgroup, t, head_dim, caps).is_ok()
            };
            let tiles = match options.tiles {
                // Tiles that fit only without the portable tier's row-reduction buffer still
                // run, on the subgroup tier.
                Some(t) if subgroup_fits(&t) => t,
                Some(t) => {
                    check_tiles(Kernel::ForwardPortable, &t, head_dim, caps)?;
                    t
                }
                None => choose_tiles(Kernel::ForwardPortable, head_dim, caps)?,
            };
            let subgroup = subgroup_fits(&tiles);
            Ok((
                if subgroup {
                    Kernel::ForwardSubgroup
                } else {
                    Kernel::ForwardPortable
                },
                tiles,
            ))
        }
    }
}

/// Bytes of workgroup memory the tensor-core kernel uses with these tiles: K and V tiles (f16,
/// padded rows), per query row a row of f32 scores and of f16 probabilities and a scale, and 8
/// words of flags and sequence info. With scores in registers (`elements`): rows of 16 f32
/// (padded) for O, no probabilities, and `kv_tiles` K/V tiles.
fn coop_workgroup_bytes(t: &Tiles, head_dim: u32, elements: bool, kv_tiles: u32) -> u32 {
    let (bn, bm) = (t.block_n, t.block_m);
    let kv = 2 * bn * (head_dim + 8) * 2;
    if elements {
        kv_tiles * kv + bm * 20 * 4 + 32 + bm * 4 + 32
    } else {
        kv + bm * (bn + 4) * 4 + bm * (bn + 8) * 2 + bm * 4 + 32
    }
}

/// Bytes of workgroup memory a portable or subgroup kernel uses with these tiles: the subgroup
/// tier needs no row reduction buffer (one float of it stays declared).
fn workgroup_bytes(kernel: Kernel, t: &Tiles, head_dim: u32, stream_q: bool) -> u32 {
    let reductions = match kernel {
        Kernel::ForwardSubgroup => 4 * (t.block_m * t.threads_x - 1),
        _ => 0,
    };
    let q = if stream_q {
        q_tile_bytes(t, head_dim)
    } else {
        0
    };
    t.workgroup_bytes(head_dim) - reductions - q
}

/// Why the tensor-core tier cannot run this problem here, if it cannot.
fn coop_usable(problem: &Attention, caps: &DeviceCaps, options: PlanOptions) -> Result<()> {
    let what = "the cooperative-matrix kernel";
    if !caps.coop_matrix_f16 {
        return Err(FlashError::MissingFeature {
            what,
            feature: "EXPERIMENTAL_COOPERATIVE_MATRIX (16x16x16, f16 A/B, f32 C)",
        });
    }
    if problem.dtype != DType::F16 && !problem.allow_f16_products {
        return Err(FlashError::BadOption {
            what: "dtype",
            got: format!("{:?}", problem.dtype),
            why: "the cooperative-matrix kernel multiplies f16: f32 and bf16 run on it only with \
                  Attention::allow_f16_products",
        });
    }
    if !caps.shader_f16 || options.force_packed_f16 {
        return Err(FlashError::MissingFeature {
            what,
            feature: "SHADER_F16 (and no forced packed f16)",
        });
    }
    if problem.head_dim % 16 != 0 {
        return Err(FlashError::BadOption {
            what: "head_dim",
            got: problem.head_dim.to_string(),
            why: "the cooperative-matrix kernel needs a multiple of 16",
        });
    }
    coop_subgroup_size(caps)?;
    match options.tiles {
        Some(t) => check_coop_tiles(
            &t,
            problem.head_dim,
            caps,
            scores_in_registers(caps, options),
        ),
        None => choose_coop_tiles(problem.head_dim, caps, scores_in_registers(caps, options))
            .map(|_| ()),
    }
}

/// The one subgroup size the cooperative-matrix kernel is specialised for.
fn coop_subgroup_size(caps: &DeviceCaps) -> Result<u32> {
    match caps.subgroup_sizes {
        Some((lo, hi)) if lo == hi && lo.is_power_of_two() && (16..=128).contains(&lo) => Ok(lo),
        _ => Err(FlashError::MissingFeature {
            what: "the cooperative-matrix kernel",
            feature: "SUBGROUP with one fixed size between 16 and 128",
        }),
    }
}

/// Tiles of the cooperative-matrix kernel: `threads_y` subgroups of `threads_x` lanes, each owning
/// 16 or 32 query rows (`block_m = 16 * threads_y` or `32 * threads_y`), keys in tiles of `block_n`.
fn check_coop_tiles(t: &Tiles, head_dim: u32, caps: &DeviceCaps, elements: bool) -> Result<()> {
    let sg = coop_subgroup_size(caps)?;
    let rows = t.block_m.checked_div(t.threads_y).unwrap_or(0);
    let shaped = t.threads_x == sg
        && t.threads_y > 0
        && (rows == 16 || rows == 32)
        && t.block_m == rows * t.threads_y
        && t.block_n > 0
        && t.block_n % 16 == 0
        // The softmax lanes of a row (sg / 16) take 4 adjacent score columns at a time.
        && (t.block_n / (sg / 16)) % 4 == 0;
    if !shaped {
        return Err(FlashError::BadOption {
            what: "tiles",
            got: format!("{t:?}"),
            why: "cooperative-matrix tiles need threads_x = the subgroup size, block_m = 16 or 32 \
                  rows per subgroup times threads_y, and block_n a multiple of 16 and of the \
                  subgroup size / 4",
        });
    }
    check_limits(t, coop_workgroup_bytes(t, head_dim, elements, 1), caps)
}

/// K/V tiles the tensor-core kernel keeps in workgroup memory: two (one barrier a key tile
/// instead of two) where scores are in registers, d <= 128 and two fit the device's workgroup
/// memory; else one. Measured on the H200 (bench-results/h200-2026-11-30-session11, call 6
/// against call 4, TFLOP/s non-causal): d = 32 110 against 82, d = 64 145 against 131, d = 96 142
/// against 135, d = 128 level; but d = 160 125 against 135 and d = 192 121 against 141, so not
/// above 128. A pipelined form of the two tiles (the next tile's scores made beside this tile's
/// softmax) was 6-14% faster non-causal than this one at 128x32x32x8 but stayed below the
/// plan's longer single tiles at d = 64-128, and gained about 1% at d = 32
/// (bench-results/h200-2026-12-02-session29).
pub(crate) fn coop_kv_tiles(t: &Tiles, head_dim: u32, elements: bool, caps: &DeviceCaps) -> u32 {
    let two_fit =
        coop_workgroup_bytes(t, head_dim, elements, 2) <= caps.max_workgroup_storage_bytes;
    if elements && head_dim <= 128 && two_fit {
        2
    } else {
        1
    }
}

/// What the error of forcing scores in registers where they cannot be says asked for them.
pub(crate) const SCORES_IN_REGISTERS: &str = "tensor-core scores in registers";

/// Whether a tensor-core plan keeps its scores in registers: the device's probe passed, its
/// subgroups have the 32 lanes the element layout is written for, and the options do not decline
/// it. Decided before the tiles, because it changes their workgroup memory.
fn scores_in_registers(caps: &DeviceCaps, options: PlanOptions) -> bool {
    caps.coop_elements
        && caps.subgroup_sizes == Some((32, 32))
        && options.coop_elements != Some(false)
}

// The two forms of the tensor-core key loop below were chosen by head dim from their SASS and
// their speed (bench-results/h200-2026-12-01-session14, call 3; TFLOP/s non-causal / causal at
// N = 8k, f16, on the H200). Where a form is off, the driver's compiler either spills (d = 256)
// or schedules the loop worse; which way a form goes is not predictable from the WGSL.

/// Whether the scores-in-registers kernel rescales O every key tile (`RESCALE_ALWAYS`) rather
/// than only when a row's max grew by 2^THRESH. The rare-rescale branch cost more than it saved:
/// on the path that skips it the compiler copied O into the registers the P V products write and
/// back again, about 120 moves a tile at d = 128 (call 1), where rescaling takes 64 multiplies.
/// Rescaling always: d = 128 257.3 / 235.3 against 220.3 / 190.7 (both with the unbranched
/// loads), d = 160 232.0 / 215.0 against 185.7 / 168.3. At d = 256, where every form spills,
/// touching all of O every tile costs more: rescaling only when needed runs 106.8 / 134.4
/// against 65.3 / 64.9 with the unbranched loads, 143.8 / 121.1 against 127.0 / 113.3 with the
/// branched ones; and with each tile loaded in its own pass ([`coop_load_in_loop`]) 164.7-166.3 /
/// 183.2-184.7 against 154.0-154.2 / 171.7-172.9 (bench-results/h200-2026-12-02-session30,
/// call 7).
pub(crate) fn coop_rescale_always(head_dim: u32, elements: bool) -> bool {
    elements && head_dim <= 192
}

/// Whether the tensor-core key loop loads the tile ahead in every pass (`LOAD_ALWAYS`), past
/// the key range too, instead of behind a branch. Without the branch the compiler keeps the
/// loaded registers in place: the loop's moves at d = 128 fall from 173 to 70. With scores in
/// registers, on at d = 64-192: d = 128 257.3 / 235.3 against 228.9 / 207.3; d = 64 trades
/// non-causal for causal (225.7 / 208.4 against 230.9 / 184.1); d = 32 loses (155.7 / 135.0
/// against 185.9 / 168.5); at d = 256, where every form spills and O is rescaled only when
/// needed, it gains causal but loses 26% non-causal (106.8 / 134.4 against 143.8 / 121.1).
/// Through workgroup memory, on at d = 96-192: d = 192 144.3 / 134.6 against 126.5 / 117.4,
/// d = 128 167.9 / 147.9 against 163.4 / 149.7; d = 64 loses (120.6 / 109.1 against 136.3 /
/// 127.7), d = 32 is level (84.5 / 79.2 against 84.3 / 78.2) and d = 256 loses 42% (51.8 / 51.1
/// against 89.0 / 79.6).
pub(crate) fn coop_load_always(head_dim: u32, elements: bool) -> bool {
    let from = if elements { 64 } else { 96 };
    (from..=192).contains(&head_dim)
}

/// How the tensor-core kernel's STAGE block stores a K/V tile from registers into workgroup
/// memory. All three texts make the same stores; what differs is what the driver's compiler does
/// around them (its register allocation), which no reading of the WGSL predicts, so each head dim
/// gets the exact text that ran fastest there (`coop::shader_text` puts it in).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum CoopStage {
    /// The shader file's own block: K and V of each loaded vector stored together, inline.
    Inline,
    /// `coop::STAGE_K_FIRST`: all K rows, then all V rows, through a function of their own.
    KFirst,
    /// `coop::stage_wrapped`: the shader's own stage(), renamed, behind a wrapper function.
    Wrapped,
}

/// Which staging text the tensor-core kernel takes (see [`CoopStage`]). Measured on the H200
/// with scores in registers, TFLOP/s non-causal / causal at N = 8k, f16, two rounds alternating
/// in one call:
/// - K rows first (bench-results/h200-2026-12-01-session15, call 5): d = 96 248.6-253.6 / 226.9
///   against 244.9-245.3 / 212.2-213.5 inline, d = 192 238.9-240.2 / 213.5-213.9 against
///   222.2-225.4 / 192.4. Elsewhere it does not pay: d = 64 mixed (231.5-231.6 / 205.5-210.3
///   against 226.9-227.1 / 208.9), d = 128 level, d = 160 causal 204.0 against 212.8-216.0,
///   d = 256 76.5 / 65.1 against 143.9-144.0 / 121.1-121.7 (606 spill loads and stores instead
///   of 215).
/// - Wrapped (bench-results/h200-2026-12-01-session16): d = 128 267.5-267.7 / 240.0-240.2
///   against 257.4-260.6 / 230.6-236.0 inline (call 2; 255 registers against 247), and with an
///   unused function more in the text 267.4-268.2 / 237.7-242.1 against 259.2-260.8 /
///   232.0-232.6 (call 1). Session 15's calls 6 and 7 ran a similar form (the wrapper in the
///   header, with an unused function left in) or a constant branch at every head dim: they
///   compiled with K-rows-first's register counts at d = 64-256 and lost at d = 32 (147.7 /
///   123.6-123.9 against 187.4 / 167.7-169.8), d = 160 causal and d = 256.
///
/// Through workgroup memory (no element access) only the inline form was measured.
pub(crate) fn coop_stage(head_dim: u32, elements: bool) -> CoopStage {
    match head_dim {
        96 | 192 if elements => CoopStage::KFirst,
        128 if elements => CoopStage::Wrapped,
        _ => CoopStage::Inline,
    }
}

/// Whether the tensor-core key loop loads the tile ahead through a function of its own
/// (`coop::load_function`) rather than inline; like [`coop_stage`], a form the driver's compiler
/// allocates registers around otherwise. With scores in registers, TFLOP/s non-causal / causal at
/// N = 8k, f16 on the H200 (bench-results/h200-2026-12-01-session16, call 3 screening one run
/// each, call 4 two rounds beside the inline form):
/// - on at d = 64, 160 and 192 (with K rows first at 192), call 4: d = 64 240.0 / 210.0-210.3
///   against 227.3 / 208.4-209.7, d = 192 256.6-259.6 / 212.0-214.5 against 241.8-242.7 /
///   214.2-215.5, d = 160 237.0-240.6 / 215.9-216.1 against 235.4-235.6 / 216.8-217.0 (0.6-2.2%
///   faster non-causal, level causal);
/// - off elsewhere: d = 96 226.9 / 226.9 against 255.1 / 226.5 (call 3), d = 32 level (187.1 /
///   168.3 against 187.2 / 168.6), d = 256 level (144.2 / 123.4 against 144.4 / 121.8), and at
///   d = 128 no clear gain with the wrapped staging (call 2: 266.2 / 237.6 and 263.5 / 241.5
///   against 266.4 / 236.4 and 265.3 / 235.7, -0.7% to +2.5% by round and mask).
pub(crate) fn coop_load_in_function(head_dim: u32, elements: bool) -> bool {
    elements && matches!(head_dim, 64 | 160 | 192)
}

/// Whether the tensor-core kernel (scores in registers) takes its tree form
/// (`coop::TREE_SCORES_MAX`, `coop::TREE_PROBS`, `coop::load_rows_stepped`): each row's tile
/// max and sum as trees of four elements a key block instead of one chain of dependent
/// operations, and the loads of the tile ahead stepped from one address per thread where its
/// vec4s lie whole rows apart (with the tables' tiles: at d = 256 from 2 subgroups, never at
/// d = 96 or 192). Measured together on the H200, TFLOP/s at N = 8k, f16, non-causal / causal,
/// against the file's own text in the same calls (bench-results/h200-2026-12-02-session28,
/// call 3 one round, call 5 two rounds alternating):
/// - d = 192: 257.2-262.1 / 241.3-243.7 against 245.0-246.9 / 240.6-244.9;
/// - d = 256: 146.4-148.3 / 140.8-141.9 against 146.1-147.3 / 134.6-135.4;
/// - d = 96: 255.1-257.3 / 242.0-243.8 against 250.6-260.2 / 231.6-240.6.
///
/// Elsewhere it is slower: d = 64 217.0-217.1 / 196.2 against 248.0-248.1 / 224.5-225.7, d = 128
/// 248.5-252.5 / 221.5 against 273.5-277.5 / 257.8-263.7 (call 5), d = 160 level to 4% behind
/// (247.7-249.8 / 227.5-234.6 against 248.8-254.4 / 232.4-236.4). The trees alone ran level at
/// d = 64, 4% slower causal at d = 128 in call 5 (248.0-252.7 against 257.8-263.7; level in
/// call 3), below the whole form at d = 256 (144.4-146.1 / 138.2-139.2), and at d = 192 three
/// of their six series were slow ones; the stepped loads alone lost 6-15% at d = 64 and 128
/// (call 3).
pub(crate) fn coop_tree_form(head_dim: u32, elements: bool) -> bool {
    elements && matches!(head_dim, 96 | 192 | 256)
}

/// Whether the scores-in-registers kernel loads each K/V tile in the key loop itself, after the
/// barrier that frees the tile in workgroup memory, instead of a tile ahead into registers that
/// then wait out a pass (src/kernels/coop.rs, load_here). The loads' latency is then exposed to
/// the workgroup, but the registers that held the tile ahead (at d = 256 with 32-key tiles, 16
/// vec4s of f16 a lane: 32 registers) are free while the scores and probabilities live. Above
/// d = 192, where the kernel with the tile ahead is at 255 registers, that is faster (TFLOP/s
/// non-causal / causal, N = 8k, f16; bench-results/h200-2026-12-02-session30): at d = 256 the
/// library's build ran 164.7-166.3 / 183.2-184.7 against 146.6-147.6 / 140.9-141.5 for the build
/// before (call 7); the same form as a variant against the build that had it at d = 256 only
/// (call 8) ran d = 208 179.5-179.7 / 180.8-181.0 against 176.7-176.9 / 175.8, d = 224
/// 193.2 / 185.5-186.3 against 168.6-168.8 / 160.2-161.5 and d = 240 186.8-187.1 / 190.5
/// against 154.7-155.9 / 146.5-147.5. At d = 192 and below the hidden latency is worth more
/// (call 6, non-causal): d = 128 258.9-260.8 against 272.0-278.5, d = 160 185.0-189.0 against
/// 232.9-250.7, d = 192 203.9-204.6 against 255.8-261.9. With 16-key tiles at d = 256 it runs
/// 143.3-143.5 / 142.9-144.0.
pub(crate) fn coop_load_in_loop(head_dim: u32, elements: bool) -> bool {
    elements && head_dim > 192
}

/// Whether the tensor-core kernel is compiled with its banded code (`BANDED`): for a causal
/// mask or a window, and at d = 256 (above 240) with scores in registers for f16 and f32
/// problems without a band too. Such a problem then runs that code with both sides unbounded,
/// which masks nothing; the driver's compiler allocates its registers better there (80 bytes a
/// thread spilled at d = 256 in f16 against 144). TFLOP/s at N = 8k, non-causal, two rounds
/// alternating (bench-results/h200-2026-12-02-session33): as a window wider than the sequence
/// (call 4), f16 at d = 256 177.0-177.5 against 164.1-165.1, while d = 224 (180.1-180.4 against
/// 193.2-193.5), 192, 160 and 128 lose; as this library's form against the build before it
/// (call 5), at d = 256 f16 178.4-179.7 against 165.2-166.1 and f32 with f16 products
/// 144.7-145.0 against 134.7-135.0, but bf16 with f16 products 89.7-90.2 against 95.3-95.8; at
/// d = 240 f16 186.4 against 189.0-189.2 (f32 level, bf16 +3%).
pub(crate) fn coop_banded(problem: &Attention, storage: Storage, elements: bool) -> bool {
    problem.banded() || (elements && problem.head_dim > 240 && storage != Storage::BF16Packed)
}

fn choose_coop_tiles(head_dim: u32, caps: &DeviceCaps, elements: bool) -> Result<Tiles> {
    let sg = coop_subgroup_size(caps)?;
    let candidates = || tuning::coop_tiles(head_dim, sg, elements);
    candidates()
        .find(|t| check_coop_tiles(t, head_dim, caps, elements).is_ok())
        .ok_or_else(|| {
            let smallest = candidates()
                .map(|t| coop_workgroup_bytes(&t, head_dim, elements, 1))
                .min()
                .expect("table is not empty");
            FlashError::DeviceLimit {
                what:
                    "max_compute_workgroup_storage_size (bytes, smallest cooperative-matrix tile)",
                needed: smallest as u64,
                limit: caps.max_workgroup_storage_bytes as u64,
            }
        })
}

/// How a dtype is stored and read on a device: f16 natively where `SHADER_F16` is enabled (unless
/// the packed path is forced), otherwise as packed `u32` pairs.
pub fn storage_for(dtype: DType, caps: &DeviceCaps, force_packed_f16: bool) -> Storage {
    match dtype {
        DType::F32 => Storage::F32,
        DType::F16 if caps.shader_f16 && !force_packed_f16 => Storage::F16,
        DType::F16 => Storage::F16Packed,
        DType::BF16 => Storage::BF16Packed,
    }
}

/// Checks that each tensor (and the LSE and mask) fits one storage binding of the device.
pub(crate) fn check_bindings(problem: &Attention, caps: &DeviceCaps) -> Result<()> {
    let slack = caps.min_storage_buffer_offset_alignment as u64;
    // The shaders index the mask's bytes with u32.
    let mask_limit = caps.max_storage_buffer_binding_size.min(u32::MAX as u64);
    if problem.mask_bytes() + slack > mask_limit {
        return Err(FlashError::DeviceLimit {
            what: "max_storage_buffer_binding_size (bytes of the mask, at most 4 GiB)",
            needed: problem.mask_bytes() + slack,
            limit: mask_limit,
        });
    }
    // Every tensor is bound from an aligned offset, so allow one alignment's slack on top of its span.
    let slack = caps.min_storage_buffer_offset_alignment as u64;
    for tensor in [Tensor::Q, Tensor::K, Tensor::V, Tensor::O] {
        let bytes = problem.span_of(tensor) * problem.dtype.size() + slack;
        if bytes > caps.max_storage_buffer_binding_size {
            return Err(FlashError::DeviceLimit {
                what: "max_storage_buffer_binding_size (bytes of one tensor)",
                needed: bytes,
                limit: caps.max_storage_buffer_binding_size,
            });
        }
    }
    if problem.with_lse && problem.lse_len() * 4 + slack > caps.max_storage_buffer_binding_size {
        return Err(FlashError::DeviceLimit {
            what: "max_storage_buffer_binding_size (bytes of lse)",
            needed: problem.lse_len() * 4 + slack,
            limit: caps.max_storage_buffer_binding_size,
        });
    }
    Ok(())
}

fn check_tiles(kernel: Kernel, t: &Tiles, head_dim: u32, caps: &DeviceCaps) -> Result<()> {
    if !t.well_formed() {
        return Err(FlashError::BadOption {
            what: "tiles",
            got: format!("{t:?}"),
            why: "block_m must be a positive multiple of threads_y and block_n of threads_x",
        });
    }
    if kernel == Kernel::ForwardSubgroup && !caps.subgroup_rows_fit(t.threads_x) {
        return Err(FlashError::BadOption {
            what: "tiles (subgroup kernel)",
            got: format!(
                "threads_x {} with subgroup sizes {:?}",
                t.threads_x, caps.subgroup_sizes
            ),
            why: "threads_x must be a power of two no larger than the smallest subgroup size",
        });
    }
    check_limits(t, workgroup_bytes(kernel, t, head_dim, false), caps)
}

/// Invocations and workgroup memory of a tile against the device's limits.
fn check_limits(t: &Tiles, bytes: u32, caps: &DeviceCaps) -> Result<()> {
    let limit = caps
        .max_invocations_per_workgroup
        .min(caps.max_workgroup_size_x);
    if t.threads() > limit {
        return Err(FlashError::DeviceLimit {
            what: "invocations per workgroup",
            needed: t.threads() as u64,
            limit: limit as u64,
        });
    }
    if bytes > caps.max_workgroup_storage_bytes {
        return Err(FlashError::DeviceLimit {
            what: "max_compute_workgroup_storage_size (bytes)",
            needed: bytes as u64,
            limit: caps.max_workgroup_storage_bytes as u64,
        });
    }
    Ok(())
}

/// First entry of this device's tile list (`tuning::candidates_for`) that fits, preferring entries
/// whose threads_x does not exceed head_dim / 4 (wider rows would leave threads idle in the output
/// update).
fn choose_tiles(kernel: Kernel, head_dim: u32, caps: &DeviceCaps) -> Result<Tiles> {
    let fits = |t: &Tiles| check_tiles(kernel, t, head_dim, caps).is_ok();
    let candidates = tuning::candidates_for(caps);
    candidates
        .iter()
        .copied()
        .find(|t| fits(t) && t.threads_x <= (head_dim / 4).max(4))
        .or_else(|| candidates.iter().copied().find(fits))
        .ok_or_else(|| {
            let smallest = tuning::forward_candidates()
                .last()
                .expect("table is not empty");
            FlashError::DeviceLimit {
                what: "max_compute_workgroup_storage_size (bytes, smallest tile)",
                needed: workgroup_bytes(kernel, &smallest, head_dim, false) as u64,
                limit: caps.max_workgroup_storage_bytes as u64,
            }
        })
}
