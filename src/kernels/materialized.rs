//! Standard attention with the score matrix in device memory (`shaders/materialized.wgsl`): the
//! baseline that FlashAttention is measured against.
//!
//! It computes the same function as the forward kernel in three dispatches per chunk of
//! (batch, query head) pairs: `scores` writes `S = scale * Q K^T` (f32) to a score buffer, `softmax`
//! normalizes each row in place, and `pv` writes `O = P V` in the storage type. The score buffer holds
//! as many pairs' `seq_q x seq_kv` matrices as the device lets one buffer binding hold, so its size
//! grows with N²: at long sequences it cannot even be allocated, which is the point of the comparison.
//!
//! ```no_run
//! # fn main() -> wgpu_flash_attn::Result<()> {
//! use wgpu_flash_attn::kernels::materialized::Materialized;
//! use wgpu_flash_attn::{Attention, FlashContext};
//! let ctx = FlashContext::default_blocking()?;
//! let problem = Attention::new(1, 8, 8, 1024, 1024, 64).causal(true);
//! let baseline = Materialized::new(&ctx, &problem)?;
//! println!("score buffer: {} bytes in {} chunk(s)", baseline.score_bytes(), baseline.chunks());
//! // baseline.encode(&mut encoder, &buffers, None)?;
//! # Ok(())
//! # }
//! ```

use bytemuck::{Pod, Zeroable};
use futures::FutureExt;
use wgpu::util::DeviceExt;

use crate::context::{AttentionBuffers, FlashContext};
use crate::error::{FlashError, Result};
use crate::plan::{DeviceCaps, Storage};
use crate::problem::{Attention, Tensor};

/// The shader file, with default constants.
pub const SOURCE: &str = include_str!("../../shaders/materialized.wgsl");
/// Entry point writing the scaled, masked scores.
pub const ENTRY_SCORES: &str = "scores";
/// Entry point normalizing score rows in place.
pub const ENTRY_SOFTMAX: &str = "softmax";
/// Entry point multiplying the probabilities by V.
pub const ENTRY_PV: &str = "pv";
/// Size of one params uniform (one per chunk of pairs).
pub const PARAMS_BYTES: u64 = std::mem::size_of::<Params>() as u64;

/// Invocations per workgroup of every entry point (`WG` in the shader).
const WORKGROUP_SIZE: u32 = 256;
/// Query rows (and, in `scores`, keys) per workgroup (`TILE` in the shader).
const TILE: u32 = 64;
/// Output vec4 columns per `pv` workgroup (`PV_COL4` in the shader).
const PV_COL4: u32 = 16;
/// Workgroup memory of the shader: two tiles of 64 x 5 vec4s and two arrays of 256 floats.
const WORKGROUP_BYTES: u32 = 2 * TILE * 5 * 16 + 2 * WORKGROUP_SIZE * 4;

/// Mirrors `Params` in the shader.
#[repr(C)]
#[derive(Debug, Clone, Copy, Pod, Zeroable)]
struct Params {
    seq_q: u32,
    seq_kv: u32,
    group: u32,
    causal_offset: i32,
    scale: f32,
    heads_q: u32,
    first_pair: u32,
    pairs: u32,
    q: [u32; 4],
    k: [u32; 4],
    v: [u32; 4],
    o: [u32; 4],
}

/// Choices a caller may force when building a [`Materialized`] baseline.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct MaterializedOptions {
    /// Read and write f16 through packed `u32` words even where `SHADER_F16` exists
    /// (as [`crate::PlanOptions::force_packed_f16`] does for the flash kernel).
    pub force_packed_f16: bool,
    /// Allocate at most this many bytes of scores (fewer pairs per chunk, more chunks); the device's
    /// limits still apply. Meant for tests of the chunking and of the "cannot allocate" path.
    pub max_score_bytes: Option<u64>,
}

/// The materialized ("standard") attention baseline for one problem on one device, with its
/// pipelines and its score buffer allocated.
///
/// The problem's `with_lse` is ignored: the baseline writes O only, never the log-sum-exp (and does
/// not look at [`AttentionBuffers::lse`]).
#[derive(Debug)]
pub struct Materialized {
    problem: Attention,
    storage: Storage,
    device: wgpu::Device,
    layout: wgpu::BindGroupLayout,
    scores: wgpu::ComputePipeline,
    softmax: wgpu::ComputePipeline,
    pv: wgpu::ComputePipeline,
    score_buffer: wgpu::Buffer,
    pairs_per_chunk: u32,
    max_workgroups: u32,
}

/// The shader source specialised for a problem and a storage type.
pub fn shader_source(problem: &Attention, storage: Storage) -> String {
    shader_text(problem, storage).render()
}

pub(crate) fn shader_text(problem: &Attention, storage: Storage) -> super::ShaderText {
    let header = format!(
        "const D4: u32 = {}u;\nconst CAUSAL: bool = {};\n{}",
        problem.head_dim / 4,
        problem.causal,
        super::storage_wgsl(storage),
    );
    // The per-thread register tiles are indexed by these loops' counters: unrolled, every index
    // is a constant and the tiles stay in registers (see forward::shader_source).
    super::ShaderText::new(SOURCE, header).unrolled(&[("16u", 16), ("4u", 4), ("KC4", 4)])
}

/// Bytes of f32 scores for one (batch, query head) pair: `seq_q * seq_kv * 4`.
pub fn pair_score_bytes(problem: &Attention) -> u64 {
    problem.seq_q as u64 * problem.seq_kv as u64 * 4
}

/// How many (batch, query head) pairs one chunk holds on a device: as many as fit in
/// `min(max_storage_buffer_binding_size, max_buffer_size)` (and `max_score_bytes`, when given), at
/// most `batch * heads_q` and at most `max_workgroups_per_dimension`. Fails with
/// [`FlashError::DeviceLimit`] when not even one pair's scores fit.
pub fn pairs_per_chunk(
    problem: &Attention,
    caps: &DeviceCaps,
    max_score_bytes: Option<u64>,
) -> Result<u32> {
    // Score indices are u32 in the shader: keep the buffer below 2^32 floats.
    let mut limit = caps
        .max_storage_buffer_binding_size
        .min(caps.max_buffer_size)
        .min(u32::MAX as u64 * 4);
    let mut what =
        "min(max_storage_buffer_binding_size, max_buffer_size) (bytes of one head's scores)";
    if let Some(m) = max_score_bytes {
        if m < limit {
            limit = m;
            what = "max_score_bytes (bytes of one head's scores)";
        }
    }
    let per_pair = pair_score_bytes(problem);
    let fit = limit / per_pair;
    if fit == 0 {
        return Err(FlashError::DeviceLimit {
            what,
            needed: per_pair,
            limit,
        });
    }
    let pairs = problem.batch as u64 * problem.heads_q as u64;
    Ok(fit.min(pairs).min(caps.max_workgroups_per_dimension as u64) as u32)
}

impl Materialized {
    /// Builds the baseline for `problem` on the context's device: checks the problem against the
    /// device, compiles (or fetches) the three pipelines and allocates the score buffer.
    ///
    /// Fails with [`FlashError::DeviceLimit`] when one (batch, head) pair's `seq_q * seq_kv` f32
    /// scores do not fit in one buffer binding (the "standard attention cannot even allocate" case).
    pub fn new(ctx: &FlashContext, problem: &Attention) -> Result<Self> {
        Self::new_with(ctx, problem, MaterializedOptions::default())
    }

    /// Like [`Materialized::new`], with some choices forced.
    pub fn new_with(
        ctx: &FlashContext,
        problem: &Attention,
        options: MaterializedOptions,
    ) -> Result<Self> {
        problem.validate()?;
        let unsupported = [
            ("window_size", problem.window_size != (-1, -1)),
            ("softcap", problem.softcap > 0.0),
            ("alibi", problem.alibi.is_some()),
            ("sinks", problem.sinks),
            ("attn_mask", problem.mask.is_some()),
            ("varlen", problem.cu_seqlens.is_some()),
            ("paged_kv", problem.paged_kv.is_some()),
        ];
        if let Some((what, _)) = unsupported.into_iter().find(|(_, on)| *on) {
            return Err(FlashError::BadOption {
                what,
                got: "on".into(),
                why: "the materialized baseline computes plain (optionally causal) attention only",
            });
        }
        let caps = ctx.caps();
        let storage = crate::plan::storage_for(problem.dtype, caps, options.force_packed_f16);
        check_device(problem, caps)?;
        if problem.batch as u64 * problem.heads_q as u64 > u32::MAX as u64 {
            return Err(FlashError::DeviceLimit {
                what: "batch * heads_q (pair indices are 32-bit in the shader)",
                needed: problem.batch as u64 * problem.heads_q as u64,
                limit: u32::MAX as u64,
            });
        }
        let pairs_per_chunk = pairs_per_chunk(problem, caps, options.max_score_bytes)?;

        let device = ctx.device().clone();
        let entry = |binding, ty| wgpu::BindGroupLayoutEntry {
            binding,
            visibility: wgpu::ShaderStages::COMPUTE,
            ty: wgpu::BindingType::Buffer {
                ty,
                has_dynamic_offset: false,
                min_binding_size: None,
            },
            count: None,
        };
        let read = wgpu::BufferBindingType::Storage { read_only: true };
        let write = wgpu::BufferBindingType::Storage { read_only: false };
        let layout = device.create_bind_group_layout(&wgpu::BindGroupLayoutDescriptor {
            label: Some("materialized attention"),
            entries: &[
                entry(0, wgpu::BufferBindingType::Uniform),
                entry(1, read),
                entry(2, read),
                entry(3, read),
                entry(4, write),
                entry(5, write),
            ],
        });
        let pipeline_layout = device.create_pipeline_layout(&wgpu::PipelineLayoutDescriptor {
            label: Some("materialized attention"),
            bind_group_layouts: &[Some(&layout)],
            immediate_size: 0,
        });
        let text = shader_text(problem, storage);
        let scores = ctx.pipeline(&text, ENTRY_SCORES, || pipeline_layout.clone())?;
        let softmax = ctx.pipeline(&text, ENTRY_SOFTMAX, || pipeline_layout.clone())?;
        let pv = ctx.pipeline(&text, ENTRY_PV, || pipeline_layout.clone())?;

        let score_bytes = pairs_per_chunk as u64 * pair_score_bytes(problem);
        let oom = device.push_error_scope(wgpu::ErrorFilter::OutOfMemory);
        let validation = device.push_error_scope(wgpu::ErrorFilter::Validation);
        let score_buffer = device.create_buffer(&wgpu::BufferDescriptor {
            label: Some("materialized scores"),
            size: score_bytes,
            usage: wgpu::BufferUsages::STORAGE,
            mapped_at_creation: false,
        });
        let validation_err = validation.pop().now_or_never().flatten();
        if let Some(err) = oom.pop().now_or_never().flatten().or(validation_err) {
            return Err(FlashError::Wgpu(format!(
                "allocating {score_bytes} bytes of scores: {err}"
            )));
        }
        Ok(Materialized {
            problem: problem.clone(),
            storage,
            device,
            layout,
            scores,
            softmax,
            pv,
            score_buffer,
            pairs_per_chunk,
            max_workgroups: caps.max_workgroups_per_dimension,
        })
    }

    /// The problem this baseline was built for.
    pub fn problem(&self) -> &Attention {
        &self.problem
    }

    /// How Q, K, V and O are read and written.
    pub fn storage(&self) -> Storage {
        self.storage
    }

    /// Bytes of the score buffer it allocated (`pairs_per_chunk * seq_q * seq_kv * 4`).
    pub fn score_bytes(&self) -> u64 {
        self.score_buffer.size()
    }

    /// Device memory it uses beyond the caller's tensors: the score buffer and, per encode, one
    /// params uniform per chunk.
    pub fn scratch_bytes(&self) -> u64 {
        self.score_bytes() + self.chunks() as u64 * PARAMS_BYTES
    }

    /// (batch, query head) pairs whose scores the buffer holds at once.
    pub fn pairs_per_chunk(&self) -> u32 {
        self.pairs_per_chunk
    }

    /// Number of chunks (each three dispatches) one encode records.
    pub fn chunks(&self) -> u32 {
        (self.problem.batch as u64 * self.problem.heads_q as u64)
            .div_ceil(self.pairs_per_chunk as u64) as u32
    }

    /// Records the baseline into the caller's encoder: one compute pass, three dispatches per chunk.
    ///
    /// `timestamps` = (query set, index of the beginning timestamp, index of the end timestamp) are
    /// written at the beginning and the end of the pass (the device needs `TIMESTAMP_QUERY`).
    /// The buffers are checked as [`crate::FlashPlan::encode_timed`] checks them; `buffers.lse` is
    /// ignored (the baseline writes no LSE).
    pub fn encode(
        &self,
        encoder: &mut wgpu::CommandEncoder,
        buffers: &AttentionBuffers,
        timestamps: Option<(&wgpu::QuerySet, u32, u32)>,
    ) -> Result<()> {
        let p = &self.problem;
        let align = self.device.limits().min_storage_buffer_offset_alignment as u64;
        let ranges = super::tensor_ranges(p, buffers, self.storage, align)?;
        let strides4 = |t: Tensor, first: u32| super::strides4(p, t, first);
        let total_pairs = p.batch * p.heads_q;
        let rows_per_chunk = self.pairs_per_chunk as u64 * p.seq_q as u64;
        let softmax_x = rows_per_chunk.min(self.max_workgroups as u64) as u32;
        let softmax_y = rows_per_chunk.div_ceil(softmax_x as u64);
        let grid_scores = [p.seq_kv.div_ceil(TILE), p.seq_q.div_ceil(TILE)];
        let grid_pv = [(p.head_dim / 4).div_ceil(PV_COL4), p.seq_q.div_ceil(TILE)];
        for (what, n) in [
            (
                "workgroups in x (seq_kv / 64, scores)",
                grid_scores[0] as u64,
            ),
            (
                "workgroups in y (seq_q / 64, scores and pv)",
                grid_scores[1] as u64,
            ),
            (
                "workgroups in y (rows per chunk / max in x, softmax)",
                softmax_y,
            ),
        ] {
            if n > self.max_workgroups as u64 {
                return Err(FlashError::DeviceLimit {
                    what,
                    needed: n,
                    limit: self.max_workgroups as u64,
                });
            }
        }

        let scope = self.device.push_error_scope(wgpu::ErrorFilter::Validation);
        let bind_groups: Vec<(wgpu::BindGroup, u32)> = (0..total_pairs)
            .step_by(self.pairs_per_chunk as usize)
            .map(|first_pair| {
                let pairs = self.pairs_per_chunk.min(total_pairs - first_pair);
                let params = Params {
                    seq_q: p.seq_q,
                    seq_kv: p.seq_kv,
                    group: p.heads_q / p.heads_kv,
                    causal_offset: p.seq_kv as i32 - p.seq_q as i32,
                    scale: p.scale(),
                    heads_q: p.heads_q,
                    first_pair,
                    pairs,
                    q: strides4(Tensor::Q, ranges[0].first4),
                    k: strides4(Tensor::K, ranges[1].first4),
                    v: strides4(Tensor::V, ranges[2].first4),
                    o: strides4(Tensor::O, ranges[3].first4),
                };
                let uniform = self
                    .device
                    .create_buffer_init(&wgpu::util::BufferInitDescriptor {
                        label: Some("materialized params"),
                        contents: bytemuck::bytes_of(&params),
                        usage: wgpu::BufferUsages::UNIFORM,
                    });
                let group = super::bind_group(
                    &self.device,
                    &self.layout,
                    &uniform,
                    buffers,
                    &ranges,
                    [self.score_buffer.as_entire_binding()],
                );
                (group, pairs)
            })
            .collect();
        {
            let timestamp_writes =
                timestamps.map(|(query_set, begin, end)| wgpu::ComputePassTimestampWrites {
                    query_set,
                    beginning_of_pass_write_index: Some(begin),
                    end_of_pass_write_index: Some(end),
                });
            let mut pass = encoder.begin_compute_pass(&wgpu::ComputePassDescriptor {
                label: Some("materialized attention"),
                timestamp_writes,
            });
            // wgpu puts a barrier between dispatches that write and read the same storage buffer.
            for (group, pairs) in &bind_groups {
                pass.set_bind_group(0, group, &[]);
                pass.set_pipeline(&self.scores);
                pass.dispatch_workgroups(grid_scores[0], grid_scores[1], *pairs);
                pass.set_pipeline(&self.softmax);
                pass.dispatch_workgroups(softmax_x, softmax_y as u32, 1);
                pass.set_pipeline(&self.pv);
                pass.dispatch_workgroups(grid_pv[0], grid_pv[1], *pairs);
            }
        }
        if let Some(Some(err)) = scope.pop().now_or_never() {
            return Err(FlashError::Wgpu(err.to_string()));
        }
        Ok(())
    }
}

/// Checks what the baseline needs from the device beyond the score buffer: workgroup size and
/// memory, and every tensor within one storage binding.
fn check_device(problem: &Attention, caps: &DeviceCaps) -> Result<()> {
    let invocations = caps
        .max_invocations_per_workgroup
        .min(caps.max_workgroup_size_x);
    if invocations < WORKGROUP_SIZE {
        return Err(FlashError::DeviceLimit {
            what: "invocations per workgroup (materialized baseline)",
            needed: WORKGROUP_SIZE as u64,
            limit: invocations as u64,
        });
    }
    if caps.max_workgroup_storage_bytes < WORKGROUP_BYTES {
        return Err(FlashError::DeviceLimit {
            what: "max_compute_workgroup_storage_size (bytes, materialized baseline)",
            needed: WORKGROUP_BYTES as u64,
            limit: caps.max_workgroup_storage_bytes as u64,
        });
    }
    crate::plan::check_bindings(problem, caps)
}
