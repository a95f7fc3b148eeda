//! KV-cache attention (`shaders/flash_decode.wgsl`, portable; `shaders/flash_decode_subgroup.wgsl`,
//! subgroup tier), the split-KV combine / state merge
//! (`shaders/decode_combine.wgsl`) and the append + rotary pre-pass (`shaders/kv_append.wgsl`):
//! shader sources for a plan, params, pipelines and encoding.

use bytemuck::{Pod, Zeroable};
use futures::FutureExt;
use wgpu::util::DeviceExt;

use crate::context::{check_usage, FlashContext, TensorBuffer};
use crate::error::{FlashError, Result};
use crate::kvcache::{
    self, CacheLayout, CacheWindow, DecodeKernel, KvCacheAttention, KvCachePlan, RotaryAngles,
    RotaryStyle,
};
use crate::plan::{storage_for, Storage};
use crate::problem::DType;

/// The attention shader file (portable tier), with default constants.
pub const ATTENTION_SOURCE: &str = include_str!("../../shaders/flash_decode.wgsl");
/// WGSL of the KV-cache attention kernel, subgroup tier (`shaders/flash_decode_subgroup.wgsl`).
pub const ATTENTION_SUBGROUP_SOURCE: &str =
    include_str!("../../shaders/flash_decode_subgroup.wgsl");
/// The combine shader file.
pub const COMBINE_SOURCE: &str = include_str!("../../shaders/decode_combine.wgsl");
/// The append + rotary shader file.
pub const APPEND_SOURCE: &str = include_str!("../../shaders/kv_append.wgsl");

/// The combine runs one workgroup per row; head_dim / 4 (at most 64) must not exceed it.
const COMBINE_THREADS: u32 = 128;
const APPEND_THREADS: u32 = 64;

/// Mirrors `Params` in flash_decode.wgsl and flash_decode_subgroup.wgsl.
#[repr(C)]
#[derive(Debug, Clone, Copy, Pod, Zeroable)]
struct AttentionParams {
    heads_q: u32,
    group: u32,
    splits: u32,
    part_tokens: u32,
    scale_log2: f32,
    part_cu_offset: u32,
    pages_per_seq: u32,
    append: u32,
    cu_offset: u32,
    lens_offset: u32,
    work_offset: u32,
    table_offset: u32,
    lse_offset: u32,
    part_lse_offset: u32,
    page_base: u32,
    heads_kv: u32,
    q: [u32; 4],
    k: [u32; 4],
    v: [u32; 4],
    o: [u32; 4],
}

/// Mirrors `Params` in decode_combine.wgsl.
#[repr(C)]
#[derive(Debug, Clone, Copy, Pod, Zeroable)]
struct CombineParams {
    parts: u32,
    rows: u32,
    heads: u32,
    groups_x: u32,
    o_part_offset: u32,
    lse_part_offset: u32,
    lse_offset: u32,
    map_offset: u32,
    o: [u32; 4],
}

/// Mirrors `Params` in kv_append.wgsl.
#[repr(C)]
#[derive(Debug, Clone, Copy, Pod, Zeroable)]
struct AppendParams {
    total_q: u32,
    heads_q: u32,
    heads_kv: u32,
    batch: u32,
    rot4: u32,
    rot_log2_theta: f32,
    table_half: u32,
    sin_offset: u32,
    cu_offset: u32,
    lens_offset: u32,
    table_offset: u32,
    page_size: u32,
    pages_per_seq: u32,
    groups_x: u32,
    cos_offset: u32,
    token_base: u32,
    token_end: u32,
    page_base: u32,
    _pad: [u32; 2],
    q: [u32; 4],
    k_new: [u32; 4],
    v_new: [u32; 4],
    q_out: [u32; 4],
    k_cache: [u32; 4],
    v_cache: [u32; 4],
}

fn elem_bytes(storage: Storage) -> u64 {
    super::forward::element_bytes(storage)
}

/// The attention shader specialised for a plan.
pub fn attention_source(plan: &KvCachePlan) -> String {
    attention_text(plan).render()
}

pub(crate) fn attention_text(plan: &KvCachePlan) -> super::ShaderText {
    let p = &plan.problem;
    let t = plan.tiles;
    let d4 = p.head_dim / 4;
    let page = match p.layout {
        CacheLayout::Paged { page_size, .. } => page_size,
        CacheLayout::Contiguous { .. } => 1,
    };
    if t.kernel == DecodeKernel::Subgroup {
        let rkd = chunks_per_lane(plan);
        let kv_per = if wide_kv_loads(plan) { 2 } else { 1 };
        // MERGE: each thread's head_dim chunks of its row, and the splits whose words it reads
        // at once (about 72 words in flight: two rounds for 16 splits at d = 128).
        let merge_chunks = d4.div_ceil(t.threads / t.block_m);
        let merge_splits = (72 / (4 * merge_chunks + 1)).clamp(1, 16);
        let header = format!(
            "const D4: u32 = {d4}u;\nconst BM: u32 = {}u;\nconst WG: u32 = {}u;\nconst TXK: u32 = {}u;\n\
             const KK: u32 = {}u;\nconst PAGED: bool = {};\nconst PAGE: u32 = {page}u;\nconst CAUSAL: bool = {};\n\
             const SPLIT: bool = {};\nconst MERGE: bool = {};\nconst MS: u32 = {merge_splits}u;\n{}\
             const WRITE_LSE: bool = {};\n{}{}{}",
            t.block_m,
            t.threads,
            t.threads_per_key,
            t.keys_per_thread,
            matches!(p.layout, CacheLayout::Paged { .. }),
            p.causal,
            plan.splits > 1,
            plan.merge_in_kernel,
            part_words_wgsl(plan.merge_in_kernel),
            p.with_lse,
            super::storage_wgsl(plan.storage),
            kv_loads_wgsl(plan.storage, kv_per == 2),
            row_sums_wgsl(t.block_m, t.threads_per_key),
        );
        return super::ShaderText::new(ATTENTION_SUBGROUP_SOURCE, header).unrolled(&[
            ("BM * RKD", t.block_m * rkd),
            ("BM", t.block_m),
            ("RKD", rkd),
            ("KVR", rkd / kv_per),
            ("KK", t.keys_per_thread),
            ("MS", merge_splits),
            ("CPR", merge_chunks),
        ]);
    }
    let header = format!(
        "const D4: u32 = {d4}u;\nconst BM: u32 = {}u;\nconst BN: u32 = {}u;\nconst WG: u32 = {}u;\n\
         const TXK: u32 = {}u;\nconst KK: u32 = {}u;\nconst TXV: u32 = {}u;\nconst PAGED: bool = {};\nconst PAGE: u32 = {}u;\n\
         const CAUSAL: bool = {};\nconst SPLIT: bool = {};\nconst WRITE_LSE: bool = {};\n{}",
        t.block_m,
        t.block_n,
        t.threads,
        t.threads_per_key,
        t.keys_per_thread,
        t.threads_v,
        matches!(p.layout, CacheLayout::Paged { .. }),
        // The page size is a constant of the shader: dividing by it costs a shift or a multiply.
        page,
        p.causal,
        plan.splits > 1,
        p.with_lse,
        super::storage_wgsl(plan.storage),
    );
    let ky = t.threads / t.threads_v;
    let rvd = d4.div_ceil(t.threads_v);
    super::ShaderText::new(ATTENTION_SOURCE, header).unrolled(&[
        ("QL", (t.block_m * d4).div_ceil(t.threads)),
        ("BM", t.block_m),
        ("BM * RVD", t.block_m * rvd),
        ("RKD", d4.div_ceil(t.threads_per_key)),
        ("RVD", rvd),
        ("KPT", t.block_n / ky),
        ("SR", (t.block_m * ky).div_ceil(t.threads)),
        ("TXK", t.threads_per_key),
        ("KK", t.keys_per_thread),
    ])
}

/// Whether the subgroup kernel reads K and V 16 bytes at a time (two head_dim chunks of a 2-byte
/// type per load): f16 or bf16, head_dim a multiple of 8 (every cache row starts on 16 bytes),
/// and an even number of head_dim chunks (of 4 elements) per lane, so that a lane's chunks pair
/// up (d = 128 with 16 lanes per key: yes; d = 40 or 88: no). The caches' byte offsets must then
/// be multiples of 16 (checked at encode). On the H200, 3-4% faster than 8-byte loads at 12 and 24
/// splits (bench-results/h200-2026-11-30-session5).
pub fn wide_kv_loads(plan: &KvCachePlan) -> bool {
    plan.tiles.kernel == DecodeKernel::Subgroup
        && elem_bytes(plan.storage) == 2
        && plan.problem.head_dim % 8 == 0
        && chunks_per_lane(plan) % 2 == 0
}

/// WGSL for the subgroup kernel's partial-state words: atomic where the kernel merges its own
/// splits (the merging workgroup reads what others wrote), plain stores for a combine pass.
fn part_words_wgsl(merge: bool) -> &'static str {
    if merge {
        "alias PartWord = atomic<u32>;\n\
         fn part_load(at: u32) -> u32 { return atomicLoad(&part_buf[at]); }\n\
         fn part_store(at: u32, x: u32) { atomicStore(&part_buf[at], x); }\n\
         fn part_count_in(at: u32) -> u32 { return atomicAdd(&part_buf[at], 1u); }\n"
    } else {
        "alias PartWord = u32;\n\
         fn part_load(at: u32) -> u32 { return part_buf[at]; }\n\
         fn part_store(at: u32, x: u32) { part_buf[at] = x; }\n\
         fn part_count_in(at: u32) -> u32 { let n = part_buf[at]; part_buf[at] = n + 1u; return n; }\n"
    }
}

/// Head_dim chunks (of 4 elements) each lane of a key holds in the subgroup kernel.
fn chunks_per_lane(plan: &KvCachePlan) -> u32 {
    (plan.problem.head_dim / 4).div_ceil(plan.tiles.threads_per_key)
}

/// WGSL for the subgroup kernel's K/V loads: `KvVec` (what one load reads), `KV_PER` (head_dim
/// chunks per load) and `kv_chunk` (chunk i of a load as f32).
fn kv_loads_wgsl(storage: Storage, wide: bool) -> String {
    if !wide {
        return "alias KvVec = Packed4;\nconst KV_PER: u32 = 1u;\n\
                fn kv_chunk(x: KvVec, i: u32) -> vec4<f32> { return unpack4(x); }\n"
            .into();
    }
    let pair = match storage {
        Storage::BF16Packed => "bf16_pair",
        _ => "unpack2x16float",
    };
    format!(
        "alias KvVec = vec4<u32>;\nconst KV_PER: u32 = 2u;\n\
         fn kv_chunk(x: KvVec, i: u32) -> vec4<f32> {{\n    \
         let w = select(x.xy, x.zw, i == 1u);\n    \
         return vec4<f32>({pair}(w.x), {pair}(w.y));\n}}\n"
    )
}

/// WGSL of `row_sums` in `flash_decode_subgroup.wgsl` for `rows` rows (a power of two) over
/// `lanes` lanes per key: a reduce-scatter (each step, with offset o from lanes / 2 down, halves
/// the rows a lane carries: the lane with bit o set keeps the upper half), then butterfly steps
/// on the one row left, so lane kx ends with row kx / (lanes / rows).
fn row_sums_wgsl(rows: u32, lanes: u32) -> String {
    let mut carried: Vec<String> = (0..rows).map(|r| format!("x[{r}]")).collect();
    let mut body = String::new();
    let mut offset = lanes / 2;
    let mut step = 0;
    while carried.len() > 1 {
        let half = carried.len() / 2;
        body += &format!(" let h{step} = (kx & {offset}u) != 0u;");
        let mut kept = Vec::new();
        for i in 0..half {
            let (lo, hi) = (&carried[i], &carried[i + half]);
            body += &format!(
                " let a{step}_{i} = select({lo}, {hi}, h{step}) + subgroupShuffleXor(select({hi}, {lo}, h{step}), {offset}u);"
            );
            kept.push(format!("a{step}_{i}"));
        }
        carried = kept;
        offset /= 2;
        step += 1;
    }
    body += &format!(" var r = {};", carried[0]);
    while offset > 0 {
        body += &format!(" r += subgroupShuffleXor(r, {offset}u);");
        offset /= 2;
    }
    format!(
        "fn row_sums(x: array<f32, BM>, kx: u32) -> f32 {{{body} return r; }}
"
    )
}

/// The combine shader for a head dimension and output storage.
/// `token_map`: partial-state rows are packed over the sequences a KV-cache step runs, and a
/// table in the step's meta buffer gives each one's query token.
pub fn combine_source(head_dim: u32, storage: Storage, with_lse: bool, token_map: bool) -> String {
    combine_text(head_dim, storage, with_lse, token_map).render()
}

fn combine_text(
    head_dim: u32,
    storage: Storage,
    with_lse: bool,
    token_map: bool,
) -> super::ShaderText {
    let header = format!(
        "const D4: u32 = {}u;\nconst WG: u32 = {COMBINE_THREADS}u;\nconst WRITE_LSE: bool = {with_lse};\n\
         const TOKEN_MAP: bool = {token_map};\n{}",
        head_dim / 4,
        super::storage_wgsl(storage)
    );
    super::ShaderText::new(COMBINE_SOURCE, header)
}

/// The append + rotary shader for a plan.
pub fn append_source(plan: &KvCachePlan) -> String {
    append_text(plan).render()
}

fn append_text(plan: &KvCachePlan) -> super::ShaderText {
    let p = &plan.problem;
    let (rotary, table) = match p.rotary {
        None => (0, false),
        Some(r) => (
            match r.style {
                RotaryStyle::Interleaved => 1,
                RotaryStyle::HalfSplit => 2,
            },
            matches!(r.angles, RotaryAngles::Table { .. }),
        ),
    };
    let header = format!(
        "const D4: u32 = {}u;\nconst WG: u32 = {APPEND_THREADS}u;\nconst PAGED: bool = {};\nconst ROTARY: u32 = {rotary}u;\n\
         const ROT_TABLE: bool = {table};\n{}",
        p.head_dim / 4,
        matches!(p.layout, CacheLayout::Paged { .. }),
        super::storage_wgsl(plan.storage)
    );
    super::ShaderText::new(APPEND_SOURCE, header)
}

/// Where meta sections start, in u32 words: cu_seqlens_q, cached lengths, work items, block table,
/// and where partial states go when some sequences run through the forward kernels.
#[derive(Debug)]
struct MetaLayout {
    cu: u32,
    lens: u32,
    work: u32,
    table: u32,
    /// Each sequence's first partial-state token (cu_seqlens_q without the routed sequences'
    /// tokens; `cu` itself when none is routed).
    part_cu: u32,
    /// The query token of each partial-state token, for the combine (only when some are routed).
    token_map: Option<u32>,
    /// Query tokens with partial states ([`KvCachePlan::partial_tokens`]).
    part_tokens: u32,
}

fn meta(plan: &KvCachePlan) -> (Vec<u32>, MetaLayout) {
    let p = &plan.problem;
    let mut words = p.cu_seqlens_q.clone();
    let lens = words.len() as u32;
    words.extend(&p.cached);
    let work = words.len() as u32;
    for &(b, block) in &plan.work {
        words.extend([b, block]);
    }
    let table = words.len() as u32;
    if let CacheLayout::Paged { block_table, .. } = &p.layout {
        words.extend(block_table);
    }
    let cu = 0;
    let (part_cu, token_map) = if plan.forward.is_empty() {
        (cu, None)
    } else {
        // Partial states for the sequences run here only, packed in their order.
        let part_cu = words.len() as u32;
        let mut next = 0;
        for b in 0..p.batch() {
            words.push(next);
            if !plan.is_forward(b) {
                next += p.seq_q(b);
            }
        }
        let token_map = words.len() as u32;
        for b in (0..p.batch()).filter(|&b| !plan.is_forward(b)) {
            let first = p.cu_seqlens_q[b as usize];
            words.extend(first..first + p.seq_q(b));
        }
        (part_cu, Some(token_map))
    };
    (
        words,
        MetaLayout {
            cu,
            lens,
            work,
            table,
            part_cu,
            token_map,
            part_tokens: plan.partial_tokens(),
        },
    )
}

/// (batch-or-page stride, token stride, head stride) of the caches, in vec4 units.
fn cache_strides(p: &KvCacheAttention) -> [u32; 3] {
    let row = p.heads_kv as u64 * p.head_dim as u64 / 4;
    let tokens = match &p.layout {
        CacheLayout::Contiguous { capacity } => *capacity as u64,
        CacheLayout::Paged { page_size, .. } => *page_size as u64,
    };
    [(tokens * row) as u32, row as u32, p.head_dim / 4]
}

fn page_size(p: &KvCacheAttention) -> u32 {
    match &p.layout {
        CacheLayout::Contiguous { capacity } => *capacity,
        CacheLayout::Paged { page_size, .. } => *page_size,
    }
}

/// The caller's buffers for one KV-cache step. Byte offsets must be multiples of 4 elements
/// (tensors) or 4 bytes (f32 vectors); the caches' offsets must be multiples of 16 bytes where the
/// plan reads them 16 bytes at a time ([`wide_kv_loads`]: the subgroup kernel with f16 or bf16, as
/// at d = 128 on 32-lane subgroups).
#[derive(Debug, Clone, Copy)]
pub struct KvCacheBuffers<'a> {
    /// Queries, (total_q, heads_q, head_dim).
    pub q: TensorBuffer<'a>,
    /// The key cache (see [`CacheLayout`]); written by the append pass.
    pub k_cache: TensorBuffer<'a>,
    /// The value cache, laid out like the key cache.
    pub v_cache: TensorBuffer<'a>,
    /// Output, (total_q, heads_q, head_dim), in the problem's dtype.
    pub out: TensorBuffer<'a>,
    /// Row LSE, f32 (total_q, heads_q); required when the problem asks for it.
    pub lse: Option<TensorBuffer<'a>>,
    /// New keys, (total_q, heads_kv, head_dim); required when appending.
    pub k_new: Option<TensorBuffer<'a>>,
    /// New values, (total_q, heads_kv, head_dim); required when appending.
    pub v_new: Option<TensorBuffer<'a>>,
    /// Rotary cos table then sin table, f32 (see [`RotaryAngles::Table`]); required with tables.
    pub rotary_table: Option<TensorBuffer<'a>>,
}

impl<'a> KvCacheBuffers<'a> {
    /// Q, the two caches and O, with no optional buffers.
    pub fn new(
        q: impl Into<TensorBuffer<'a>>,
        k_cache: impl Into<TensorBuffer<'a>>,
        v_cache: impl Into<TensorBuffer<'a>>,
        out: impl Into<TensorBuffer<'a>>,
    ) -> Self {
        KvCacheBuffers {
            q: q.into(),
            k_cache: k_cache.into(),
            v_cache: v_cache.into(),
            out: out.into(),
            lse: None,
            k_new: None,
            v_new: None,
            rotary_table: None,
        }
    }

    /// Adds the LSE output.
    pub fn lse(mut self, lse: impl Into<TensorBuffer<'a>>) -> Self {
        self.lse = Some(lse.into());
        self
    }

    /// Adds the new keys and values to append.
    pub fn new_kv(
        mut self,
        k: impl Into<TensorBuffer<'a>>,
        v: impl Into<TensorBuffer<'a>>,
    ) -> Self {
        self.k_new = Some(k.into());
        self.v_new = Some(v.into());
        self
    }

    /// Adds the rotary cos/sin tables.
    pub fn rotary_table(mut self, table: impl Into<TensorBuffer<'a>>) -> Self {
        self.rotary_table = Some(table.into());
        self
    }
}

/// Where a binding starts in its buffer and where its data starts inside it (in `unit` bytes).
struct Range<'a> {
    buffer: &'a wgpu::Buffer,
    start: u64,
    size: u64,
    first: u32,
}

impl<'a> Range<'a> {
    fn binding(&self) -> wgpu::BindingResource<'a> {
        wgpu::BindingResource::Buffer(wgpu::BufferBinding {
            buffer: self.buffer,
            offset: self.start,
            size: std::num::NonZeroU64::new(self.size),
        })
    }
}

/// Checks one caller buffer: usage, offset a multiple of `unit` bytes, `bytes` fit.
fn range<'a>(
    tensor: &'static str,
    tb: TensorBuffer<'a>,
    bytes: u64,
    unit: u64,
    align: u64,
) -> Result<Range<'a>> {
    check_usage(tensor, tb.buffer)?;
    if tb.offset % unit != 0 {
        return Err(FlashError::BadLayout {
            tensor,
            what: "byte offset",
            got: tb.offset,
            why: "offsets must be multiples of 4 elements (tensors) or 4 bytes (f32 vectors)",
        });
    }
    let needed = tb.offset + bytes;
    if needed > tb.buffer.size() {
        return Err(FlashError::BufferTooSmall {
            tensor,
            needed,
            got: tb.buffer.size(),
        });
    }
    let start = tb.offset - tb.offset % align;
    Ok(Range {
        buffer: tb.buffer,
        start,
        size: (needed - start)
            .next_multiple_of(4)
            .min(tb.buffer.size() - start)
            .max(4),
        first: ((tb.offset - start) / unit) as u32,
    })
}

fn required<'a>(
    what: &'static str,
    given: Option<TensorBuffer<'a>>,
    why: &'static str,
) -> Result<TensorBuffer<'a>> {
    given.ok_or(FlashError::BadOption {
        what,
        got: "None".into(),
        why,
    })
}

#[derive(Clone, Copy)]
enum Slot {
    Uniform,
    Read,
    Write,
}

fn layout(device: &wgpu::Device, label: &str, slots: &[Slot]) -> wgpu::PipelineLayout {
    let entries: Vec<_> = slots
        .iter()
        .enumerate()
        .map(|(k, slot)| wgpu::BindGroupLayoutEntry {
            binding: k as u32,
            visibility: wgpu::ShaderStages::COMPUTE,
            ty: wgpu::BindingType::Buffer {
                ty: match slot {
                    Slot::Uniform => wgpu::BufferBindingType::Uniform,
                    Slot::Read => wgpu::BufferBindingType::Storage { read_only: true },
                    Slot::Write => wgpu::BufferBindingType::Storage { read_only: false },
                },
                has_dynamic_offset: false,
                min_binding_size: None,
            },
            count: None,
        })
        .collect();
    let bgl = device.create_bind_group_layout(&wgpu::BindGroupLayoutDescriptor {
        label: Some(label),
        entries: &entries,
    });
    device.create_pipeline_layout(&wgpu::PipelineLayoutDescriptor {
        label: Some(label),
        bind_group_layouts: &[Some(&bgl)],
        immediate_size: 0,
    })
}

use Slot::{Read, Uniform, Write};
const ATTENTION_SLOTS: &[Slot] = &[Uniform, Read, Read, Read, Write, Write, Read, Write];
const COMBINE_SLOTS: &[Slot] = &[Uniform, Read, Read, Write, Write, Read];
const APPEND_SLOTS: &[Slot] = &[Uniform, Read, Read, Read, Write, Write, Write, Read, Read];

fn bind_group(
    device: &wgpu::Device,
    pipeline: &wgpu::ComputePipeline,
    resources: Vec<wgpu::BindingResource>,
) -> wgpu::BindGroup {
    let entries: Vec<_> = resources
        .into_iter()
        .enumerate()
        .map(|(k, resource)| wgpu::BindGroupEntry {
            binding: k as u32,
            resource,
        })
        .collect();
    device.create_bind_group(&wgpu::BindGroupDescriptor {
        label: Some("kv-cache attention"),
        layout: &pipeline.get_bind_group_layout(0),
        entries: &entries,
    })
}

/// A 2-D grid of at least `n` workgroups: (x, y) with x within the device's per-dimension limit.
fn grid_2d(n: u32, max: u32) -> [u32; 2] {
    let x = n.clamp(1, max);
    [x, n.div_ceil(x).max(1)]
}

fn uniform<T: Pod>(device: &wgpu::Device, params: &T) -> wgpu::Buffer {
    device.create_buffer_init(&wgpu::util::BufferInitDescriptor {
        label: Some("kv-cache params"),
        contents: bytemuck::bytes_of(params),
        usage: wgpu::BufferUsages::UNIFORM,
    })
}

impl FlashContext {
    /// Plans a KV-cache step ([`KvCacheAttention`]) for this device, compiles (or fetches) its
    /// pipelines and allocates its scratch (split-KV partial states, rotated queries).
    ///
    /// ```no_run
    /// use wgpu_flash_attn::kvcache::KvCacheAttention;
    /// use wgpu_flash_attn::{DType, FlashContext};
    /// let ctx = FlashContext::default_blocking()?;
    /// // 8 sequences decoding one token each over 4096 cached tokens; 32 query heads, 8 KV heads.
    /// let step = KvCacheAttention::decode(32, 8, 128, 1, &[4096; 8], 4096).dtype(DType::F16);
    /// let plan = ctx.plan_kv_cache(&step)?;
    /// println!("{} splits, tiles {:?}", plan.plan().splits, plan.plan().tiles);
    /// # Ok::<(), wgpu_flash_attn::FlashError>(())
    /// ```
    pub fn plan_kv_cache(&self, problem: &KvCacheAttention) -> Result<KvCachePlanned> {
        self.plan_kv_cache_with(problem, None)
    }

    /// Like [`FlashContext::plan_kv_cache`], with the tiles forced (benchmarks, tuning).
    pub fn plan_kv_cache_with(
        &self,
        problem: &KvCacheAttention,
        tiles: Option<kvcache::DecodeTiles>,
    ) -> Result<KvCachePlanned> {
        let plan = kvcache::plan_with(problem, self.caps(), tiles)?;
        let device = self.device();
        let attention = self.pipeline(&attention_text(&plan), "decode", || {
            layout(device, "kv-cache attention", ATTENTION_SLOTS)
        })?;
        let combine = if plan.splits > 1 && !plan.merge_in_kernel {
            Some(self.pipeline(
                &combine_text(
                    problem.head_dim,
                    plan.storage,
                    problem.with_lse,
                    !plan.forward.is_empty(),
                ),
                "combine",
                || layout(device, "attention state merge", COMBINE_SLOTS),
            )?)
        } else {
            None
        };
        let append = if problem.append_new_kv {
            Some(self.pipeline(&append_text(&plan), "append", || {
                layout(device, "kv-cache append", APPEND_SLOTS)
            })?)
        } else {
            None
        };
        let scratch = |label, bytes: u64| {
            (bytes > 0).then(|| {
                device.create_buffer(&wgpu::BufferDescriptor {
                    label: Some(label),
                    size: bytes,
                    usage: wgpu::BufferUsages::STORAGE,
                    mapped_at_creation: false,
                })
            })
        };
        let partials = scratch("split-KV partial states", plan.partial_bytes());
        let rotated_q = scratch("rotated queries", plan.rotated_q_bytes());
        let (words, meta_layout) = meta(&plan);
        let meta = device.create_buffer_init(&wgpu::util::BufferInitDescriptor {
            label: Some("kv-cache meta"),
            contents: bytemuck::cast_slice(&words),
            usage: wgpu::BufferUsages::STORAGE,
        });
        // The context's: read-only, writable, second writable.
        let p = &self.placeholders;
        let placeholders = [p[1].clone(), p[0].clone(), p[2].clone()];
        // A routed sequence's block table row is already in the meta buffer.
        let per_seq = problem.pages_per_seq();
        let forward = plan
            .forward
            .iter()
            .map(|(b, p)| match p.problem.paged_kv {
                Some(_) => {
                    self.flash_plan_with_table(p.clone(), &meta, meta_layout.table + b * per_seq)
                }
                None => self.flash_plan(p.clone()),
            })
            .collect::<Result<Vec<_>>>()?;
        Ok(KvCachePlanned {
            plan,
            device: device.clone(),
            attention,
            combine,
            append,
            partials,
            rotated_q,
            meta,
            meta_layout,
            placeholders,
            forward,
        })
    }

    /// Plans a GPU merge of attention states ([`MergeStates`]) and compiles its pipeline.
    pub fn plan_merge(&self, merge: &MergeStates) -> Result<MergePlan> {
        merge.validate()?;
        let storage = storage_for(merge.dtype, self.caps(), false);
        let pipeline = self.pipeline(
            &combine_text(merge.head_dim, storage, merge.with_lse, false),
            "combine",
            || layout(self.device(), "attention state merge", COMBINE_SLOTS),
        )?;
        let lse_placeholder = self.placeholders[0].clone();
        let map_placeholder = self.placeholders[1].clone();
        Ok(MergePlan {
            merge: *merge,
            storage,
            pipeline,
            device: self.device().clone(),
            lse_placeholder,
            map_placeholder,
        })
    }
}

/// A KV-cache plan with its pipelines, scratch and metadata, ready to record.
#[derive(Debug)]
pub struct KvCachePlanned {
    plan: KvCachePlan,
    device: wgpu::Device,
    attention: wgpu::ComputePipeline,
    combine: Option<wgpu::ComputePipeline>,
    append: Option<wgpu::ComputePipeline>,
    partials: Option<wgpu::Buffer>,
    rotated_q: Option<wgpu::Buffer>,
    meta: wgpu::Buffer,
    meta_layout: MetaLayout,
    /// Read-only, then two writable 16-byte buffers, bound where a pass uses no such input.
    placeholders: [wgpu::Buffer; 3],
    /// The forward plans of the sequences that run through the forward kernels
    /// ([`KvCachePlan::forward`]), in its order.
    forward: Vec<crate::context::FlashPlan>,
}

impl KvCachePlanned {
    /// The plan: tiles, splits, work items, bytes.
    pub fn plan(&self) -> &KvCachePlan {
        &self.plan
    }

    /// Records the step (append + rotary pre-pass, attention, combine, as the plan needs, then the
    /// forward passes of the sequences in [`KvCachePlan::forward`]) into the caller's encoder.
    pub fn encode(
        &self,
        encoder: &mut wgpu::CommandEncoder,
        buffers: &KvCacheBuffers,
    ) -> Result<()> {
        self.encode_timed(encoder, buffers, None)
    }

    /// Like [`KvCachePlanned::encode`], with GPU timestamps at the start and end of the step: the
    /// start of its first pass and the end of its last (one pass, unless sequences run through
    /// the forward kernels).
    pub fn encode_timed<'a>(
        &self,
        encoder: &mut wgpu::CommandEncoder,
        buffers: &KvCacheBuffers<'a>,
        timestamp_writes: Option<wgpu::ComputePassTimestampWrites>,
    ) -> Result<()> {
        let p = &self.plan.problem;
        let device = &self.device;
        let align = device.limits().min_storage_buffer_offset_alignment as u64;
        let e = elem_bytes(self.plan.storage);
        let unit = 4 * e;
        let q = range("q", buffers.q, p.q_len() * e, unit, align)?;
        // Whole caches: usage and size (they are bound by window below).
        range("k_cache", buffers.k_cache, p.cache_len() * e, unit, align)?;
        range("v_cache", buffers.v_cache, p.cache_len() * e, unit, align)?;
        if wide_kv_loads(&self.plan) {
            for (tensor, tb) in [("k_cache", buffers.k_cache), ("v_cache", buffers.v_cache)] {
                if tb.offset % 16 != 0 {
                    return Err(FlashError::BadLayout {
                        tensor,
                        what: "byte offset",
                        got: tb.offset,
                        why: "this plan reads the caches 16 bytes at a time (kernels::decode::wide_kv_loads): their offsets must be multiples of 16 bytes",
                    });
                }
            }
        }
        let out = range("out", buffers.out, p.q_len() * e, unit, align)?;
        let lse = match (p.with_lse, buffers.lse) {
            (false, _) => None,
            (true, tb) => Some(range(
                "lse",
                required(
                    "lse",
                    tb,
                    "the problem asks for LSE (with_lse): give an lse buffer",
                )?,
                p.lse_len() * 4,
                4,
                align,
            )?),
        };
        let written = [Some(buffers.out.buffer), lse.as_ref().map(|r| r.buffer)];
        let read = [
            buffers.q.buffer,
            buffers.k_cache.buffer,
            buffers.v_cache.buffer,
        ];
        for (name, w) in ["out", "lse"].into_iter().zip(written) {
            if let Some(w) = w {
                if read.contains(&w) || (name == "lse" && w == buffers.out.buffer) {
                    return Err(FlashError::BadLayout {
                        tensor: name,
                        what: "buffer",
                        got: 1,
                        why: "an output buffer must not also hold another tensor of the step",
                    });
                }
            }
        }
        if buffers.k_cache.buffer == buffers.v_cache.buffer && p.append_new_kv {
            return Err(FlashError::BadLayout {
                tensor: "v_cache",
                what: "buffer",
                got: 1,
                why: "when appending, the key and value caches must be separate buffers",
            });
        }
        let [page_stride, tok_stride, head_stride] = cache_strides(p);
        let q_rows = [0, 0, p.heads_q * p.head_dim / 4, p.head_dim / 4];
        let kv_rows = [0, 0, p.heads_kv * p.head_dim / 4, p.head_dim / 4];
        let with = |mut s: [u32; 4], first: u32| {
            s[0] = first;
            s
        };
        let ml = &self.meta_layout;
        let scope = device.push_error_scope(wgpu::ErrorFilter::Validation);
        let mut pass_bind_groups = Vec::new();

        // Each window of the caches is bound on its own (one window unless a cache is larger
        // than one binding).
        let page_bytes = page_stride as u64 * unit;
        let window_range = |name, tb: TensorBuffer<'a>, w: &CacheWindow| {
            range(
                name,
                TensorBuffer {
                    buffer: tb.buffer,
                    offset: tb.offset + w.first_page as u64 * page_bytes,
                },
                w.pages as u64 * page_bytes,
                unit,
                align,
            )
        };
        let splits = self.plan.splits;
        // Partial-state rows: the query rows of the sequences run here.
        let part_tokens = ml.part_tokens;
        let rows = part_tokens * p.heads_q;
        let lse_binding = || {
            lse.as_ref()
                .map_or(self.placeholders[1].as_entire_binding(), |r| r.binding())
        };
        // 1. Append (and rotate): new K/V into the cache, rotated Q into scratch.
        let mut appends = Vec::new();
        if let Some(append) = &self.append {
            let k_new = range(
                "k_new",
                required(
                    "k_new",
                    buffers.k_new,
                    "the problem appends new keys: give k_new",
                )?,
                p.new_kv_len() * e,
                unit,
                align,
            )?;
            let v_new = range(
                "v_new",
                required(
                    "v_new",
                    buffers.v_new,
                    "the problem appends new values: give v_new",
                )?,
                p.new_kv_len() * e,
                unit,
                align,
            )?;
            let table_len = p.rotary.map_or(0, |r| r.table_len());
            let table = if table_len > 0 {
                Some(range(
                    "rotary_table",
                    required(
                        "rotary_table",
                        buffers.rotary_table,
                        "the rotary embedding reads cos/sin tables: give rotary_table",
                    )?,
                    table_len * 4,
                    4,
                    align,
                )?)
            } else {
                None
            };
            for (name, b) in [("k_new", k_new.buffer), ("v_new", v_new.buffer)] {
                if b == buffers.k_cache.buffer || b == buffers.v_cache.buffer {
                    return Err(FlashError::BadLayout {
                        tensor: name,
                        what: "buffer",
                        got: 1,
                        why: "new keys and values must not live in the cache buffers they are appended to",
                    });
                }
            }
            let (rot4, log2_theta, half) = match p.rotary {
                None => (0, 0.0, 0),
                Some(r) => (
                    r.dim / 4,
                    match r.angles {
                        RotaryAngles::Theta(t) => t.log2(),
                        RotaryAngles::Table { .. } => 0.0,
                    },
                    r.dim / 2,
                ),
            };
            let positions = match p.rotary.map(|r| r.angles) {
                Some(RotaryAngles::Table { positions }) => positions,
                _ => 0,
            };
            let q_heads = if p.rotary.is_some() { p.heads_q } else { 0 };
            let table_first = table.as_ref().map_or(0, |t| t.first);
            for w in &self.plan.windows {
                let (t0, t1) = (
                    p.cu_seqlens_q[w.sequences.0 as usize],
                    p.cu_seqlens_q[w.sequences.1 as usize],
                );
                let threads =
                    (t1 - t0) as u64 * (q_heads + p.heads_kv) as u64 * (p.head_dim / 4) as u64;
                if threads == 0 {
                    continue;
                }
                let groups = threads.div_ceil(APPEND_THREADS as u64);
                let max = device.limits().max_compute_workgroups_per_dimension;
                if groups > max as u64 * max as u64 {
                    return Err(FlashError::DeviceLimit {
                        what: "workgroups of the append pass",
                        needed: groups,
                        limit: max as u64 * max as u64,
                    });
                }
                let [gx, gy] = grid_2d(groups as u32, max);
                let k_win = window_range("k_cache", buffers.k_cache, w)?;
                let v_win = window_range("v_cache", buffers.v_cache, w)?;
                let params = AppendParams {
                    total_q: p.total_q(),
                    heads_q: q_heads,
                    heads_kv: p.heads_kv,
                    batch: p.batch(),
                    rot4,
                    rot_log2_theta: log2_theta,
                    table_half: half,
                    sin_offset: table_first + positions * half,
                    cu_offset: ml.cu,
                    lens_offset: ml.lens,
                    table_offset: ml.table,
                    page_size: page_size(p),
                    pages_per_seq: p.pages_per_seq(),
                    groups_x: gx,
                    cos_offset: table_first,
                    token_base: t0,
                    token_end: t1,
                    page_base: w.first_page,
                    _pad: [0; 2],
                    q: with(q_rows, q.first),
                    k_new: with(kv_rows, k_new.first),
                    v_new: with(kv_rows, v_new.first),
                    q_out: q_rows,
                    k_cache: [k_win.first, page_stride, tok_stride, head_stride],
                    v_cache: [v_win.first, page_stride, tok_stride, head_stride],
                };
                let u = uniform(device, &params);
                let rotated = match &self.rotated_q {
                    Some(b) => b.as_entire_binding(),
                    None => self.placeholders[2].as_entire_binding(),
                };
                let bg = bind_group(
                    device,
                    append,
                    vec![
                        u.as_entire_binding(),
                        q.binding(),
                        k_new.binding(),
                        v_new.binding(),
                        k_win.binding(),
                        v_win.binding(),
                        rotated,
                        self.meta.as_entire_binding(),
                        table
                            .as_ref()
                            .map_or(self.placeholders[0].as_entire_binding(), |t| t.binding()),
                    ],
                );
                appends.push((append, bg, [gx, gy, 1]));
            }
        }
        pass_bind_groups.extend(appends);

        // 2. Attention (one split: O and LSE; several: partial states), per window.
        let (q_binding, q_first) = match &self.rotated_q {
            Some(b) => (b.as_entire_binding(), 0),
            None => (q.binding(), q.first),
        };
        for w in &self.plan.windows {
            let items = w.work.1 - w.work.0;
            if items == 0 {
                continue;
            }
            let k_win = window_range("k_cache", buffers.k_cache, w)?;
            let v_win = window_range("v_cache", buffers.v_cache, w)?;
            let params = AttentionParams {
                heads_q: p.heads_q,
                group: p.heads_q / p.heads_kv,
                splits,
                part_tokens,
                scale_log2: p.scale() * std::f32::consts::LOG2_E,
                part_cu_offset: ml.part_cu,
                pages_per_seq: p.pages_per_seq(),
                append: p.append_new_kv as u32,
                cu_offset: ml.cu,
                lens_offset: ml.lens,
                work_offset: ml.work + 2 * w.work.0,
                table_offset: ml.table,
                lse_offset: lse.as_ref().map_or(0, |r| r.first),
                part_lse_offset: splits * rows * p.head_dim,
                page_base: w.first_page,
                heads_kv: p.heads_kv,
                q: with(q_rows, q_first),
                k: [k_win.first, page_stride, tok_stride, head_stride],
                v: [v_win.first, page_stride, tok_stride, head_stride],
                o: with(q_rows, out.first),
            };
            let u = uniform(device, &params);
            let bg = bind_group(
                device,
                &self.attention,
                vec![
                    u.as_entire_binding(),
                    q_binding.clone(),
                    k_win.binding(),
                    v_win.binding(),
                    out.binding(),
                    lse_binding(),
                    self.meta.as_entire_binding(),
                    self.partials
                        .as_ref()
                        .map_or(self.placeholders[2].as_entire_binding(), |b| {
                            b.as_entire_binding()
                        }),
                ],
            );
            // KV heads fastest, then splits (see flash_decode.wgsl).
            pass_bind_groups.push((&self.attention, bg, [splits * p.heads_kv, items, 1]));
        }

        // 3. Combine the splits by LSE.
        if let (Some(combine), Some(partials)) = (&self.combine, &self.partials) {
            let max = device.limits().max_compute_workgroups_per_dimension;
            let [gx, gy] = grid_2d(rows, max);
            let params = CombineParams {
                parts: splits,
                rows,
                heads: p.heads_q,
                groups_x: gx,
                o_part_offset: 0,
                lse_part_offset: splits * rows * p.head_dim,
                lse_offset: lse.as_ref().map_or(0, |r| r.first),
                map_offset: ml.token_map.unwrap_or(0),
                o: with(q_rows, out.first),
            };
            let u = uniform(device, &params);
            let bg = bind_group(
                device,
                combine,
                vec![
                    u.as_entire_binding(),
                    partials.as_entire_binding(),
                    partials.as_entire_binding(),
                    out.binding(),
                    lse_binding(),
                    self.meta.as_entire_binding(),
                ],
            );
            pass_bind_groups.push((combine, bg, [gx, gy, 1]));
        }
        // With forward passes after this one, the timestamps span all of them: the start here,
        // the end after the last; a pass given no index gets no writes (wgpu refuses writes
        // without one).
        let (first, last) = match (&timestamp_writes, self.forward.is_empty()) {
            (Some(t), false) => (
                t.beginning_of_pass_write_index
                    .map(|i| wgpu::ComputePassTimestampWrites {
                        query_set: t.query_set,
                        beginning_of_pass_write_index: Some(i),
                        end_of_pass_write_index: None,
                    }),
                t.end_of_pass_write_index
                    .map(|i| wgpu::ComputePassTimestampWrites {
                        query_set: t.query_set,
                        beginning_of_pass_write_index: None,
                        end_of_pass_write_index: Some(i),
                    }),
            ),
            _ => (timestamp_writes, None),
        };
        {
            let mut pass = encoder.begin_compute_pass(&wgpu::ComputePassDescriptor {
                label: Some("kv-cache attention"),
                timestamp_writes: first,
            });
            for (pipeline, bg, [x, y, z]) in &pass_bind_groups {
                pass.set_pipeline(pipeline);
                pass.set_bind_group(0, bg, &[]);
                pass.dispatch_workgroups(*x, *y, *z);
            }
        }
        if let Some(Some(err)) = scope.pop().now_or_never() {
            return Err(FlashError::Wgpu(err.to_string()));
        }
        // 4. Prefill chunks through the forward kernels, after the append (their keys and rotated
        // queries are in place); the passes above have no rows of theirs.
        let q_buffer = match &self.rotated_q {
            Some(b) => TensorBuffer {
                buffer: b,
                offset: 0,
            },
            None => buffers.q,
        };
        let mut last = last;
        for (n, (&(b, _), forward)) in self.plan.forward.iter().zip(&self.forward).enumerate() {
            let token =
                p.cu_seqlens_q[b as usize] as u64 * p.heads_q as u64 * p.head_dim as u64 * e;
            // Contiguous: the sequence's cache entry; paged: the whole pool, through its table row.
            let entry = match &p.layout {
                CacheLayout::Contiguous { .. } => b as u64 * page_bytes,
                CacheLayout::Paged { .. } => 0,
            };
            let attention = crate::context::AttentionBuffers::new(
                shifted(q_buffer, token),
                shifted(buffers.k_cache, entry),
                shifted(buffers.v_cache, entry),
                shifted(buffers.out, token),
            );
            let stamps = if n + 1 == self.forward.len() {
                last.take()
            } else {
                None
            };
            forward.encode_timed(encoder, &attention, stamps)?;
        }
        Ok(())
    }
}

/// `t`, `by` bytes further on.
fn shifted(t: TensorBuffer<'_>, by: u64) -> TensorBuffer<'_> {
    TensorBuffer {
        buffer: t.buffer,
        offset: t.offset + by,
    }
}

/// A GPU merge of `parts` attention states over `rows` rows (the combine kernel of split-KV
/// decoding, for callers that computed attention over disjoint key sets elsewhere: other devices,
/// other caches). Inputs are f32: O parts laid out `[part][row][head_dim]`, each normalised over its
/// own keys, and LSE parts `[part][row]` (natural log, -inf for a part without keys). Output row r
/// goes to `out` at (r / heads, r % heads) of a (tokens, heads, head_dim) tensor in `dtype`, and
/// the merged LSE (f32) to `lse[r]`. The host version is [`kvcache::merge_states`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct MergeStates {
    /// Number of states per row.
    pub parts: u32,
    /// Rows (tokens * heads).
    pub rows: u32,
    /// Heads per token in the output layout.
    pub heads: u32,
    /// Head dimension.
    pub head_dim: u32,
    /// Storage type of the merged O.
    pub dtype: DType,
    /// Also write the merged LSE.
    pub with_lse: bool,
}

impl MergeStates {
    fn validate(&self) -> Result<()> {
        for (what, v) in [
            ("parts", self.parts),
            ("rows", self.rows),
            ("heads", self.heads),
        ] {
            if v == 0 {
                return Err(FlashError::ZeroSize { what });
            }
        }
        if self.head_dim % 4 != 0
            || self.head_dim == 0
            || self.head_dim > crate::problem::MAX_HEAD_DIM
        {
            return Err(FlashError::UnsupportedHeadDim {
                got: self.head_dim,
                max: crate::problem::MAX_HEAD_DIM,
            });
        }
        if self.rows % self.heads != 0 {
            return Err(FlashError::BadOption {
                what: "rows",
                got: self.rows.to_string(),
                why: "rows must be a whole number of tokens (a multiple of heads)",
            });
        }
        Ok(())
    }
}

/// The caller's buffers of a [`MergeStates`].
#[derive(Debug, Clone, Copy)]
pub struct MergeBuffers<'a> {
    /// Partial outputs, f32 `[part][row][head_dim]`.
    pub o_parts: TensorBuffer<'a>,
    /// Partial LSEs, f32 `[part][row]`.
    pub lse_parts: TensorBuffer<'a>,
    /// Merged output, (rows / heads, heads, head_dim) in the merge's dtype.
    pub out: TensorBuffer<'a>,
    /// Merged LSE, f32 `[row]`; required with `with_lse`.
    pub lse: Option<TensorBuffer<'a>>,
}

/// A planned [`MergeStates`] with its pipeline.
#[derive(Debug)]
pub struct MergePlan {
    merge: MergeStates,
    storage: Storage,
    pipeline: wgpu::ComputePipeline,
    device: wgpu::Device,
    lse_placeholder: wgpu::Buffer,
    /// Bound as the (unread) token map.
    map_placeholder: wgpu::Buffer,
}

impl MergePlan {
    /// Records the merge into the caller's encoder.
    pub fn encode(&self, encoder: &mut wgpu::CommandEncoder, buffers: &MergeBuffers) -> Result<()> {
        let m = &self.merge;
        let device = &self.device;
        let align = device.limits().min_storage_buffer_offset_alignment as u64;
        let e = elem_bytes(self.storage);
        let rows = m.rows as u64;
        let d = m.head_dim as u64;
        let o_parts = range(
            "o_parts",
            buffers.o_parts,
            m.parts as u64 * rows * d * 4,
            16,
            align,
        )?;
        let lse_parts = range(
            "lse_parts",
            buffers.lse_parts,
            m.parts as u64 * rows * 4,
            4,
            align,
        )?;
        let out = range("out", buffers.out, rows * d * e, 4 * e, align)?;
        let lse = match (m.with_lse, buffers.lse) {
            (false, _) => None,
            (true, tb) => Some(range(
                "lse",
                required(
                    "lse",
                    tb,
                    "the merge writes its LSE (with_lse): give an lse buffer",
                )?,
                rows * 4,
                4,
                align,
            )?),
        };
        let inputs = [buffers.o_parts.buffer, buffers.lse_parts.buffer];
        if inputs.contains(&buffers.out.buffer)
            || lse
                .as_ref()
                .is_some_and(|l| inputs.contains(&l.buffer) || l.buffer == buffers.out.buffer)
        {
            return Err(FlashError::BadLayout {
                tensor: "out",
                what: "buffer",
                got: 1,
                why: "the merged outputs must not share a buffer with the parts or each other",
            });
        }
        let max = device.limits().max_compute_workgroups_per_dimension;
        let [gx, gy] = grid_2d(m.rows, max);
        let params = CombineParams {
            parts: m.parts,
            rows: m.rows,
            heads: m.heads,
            groups_x: gx,
            o_part_offset: o_parts.first,
            lse_part_offset: lse_parts.first,
            lse_offset: lse.as_ref().map_or(0, |r| r.first),
            map_offset: 0,
            o: [out.first, 0, m.heads * m.head_dim / 4, m.head_dim / 4],
        };
        let scope = device.push_error_scope(wgpu::ErrorFilter::Validation);
        let u = uniform(device, &params);
        let bg = bind_group(
            device,
            &self.pipeline,
            vec![
                u.as_entire_binding(),
                o_parts.binding(),
                lse_parts.binding(),
                out.binding(),
                lse.as_ref()
                    .map_or(self.lse_placeholder.as_entire_binding(), |r| r.binding()),
                self.map_placeholder.as_entire_binding(),
            ],
        );
        {
            let mut pass = encoder.begin_compute_pass(&wgpu::ComputePassDescriptor {
                label: Some("attention state merge"),
                timestamp_writes: None,
            });
            pass.set_pipeline(&self.pipeline);
            pass.set_bind_group(0, &bg, &[]);
            pass.dispatch_workgroups(gx, gy, 1);
        }
        if let Some(Some(err)) = scope.pop().now_or_never() {
            return Err(FlashError::Wgpu(err.to_string()));
        }
        Ok(())
    }
}
