//! The FlashAttention forward kernel (`shaders/flash_fwd.wgsl`): source for a plan, params, encoding.

use bytemuck::{Pod, Zeroable};

use crate::error::{FlashError, Result};
use crate::plan::{Kernel, Plan, Storage};
use crate::problem::{Attention, MaskKind, Tensor};

/// The shader file, with default constants.
pub const SOURCE: &str = include_str!("../../shaders/flash_fwd.wgsl");
/// Its entry point.
pub const ENTRY: &str = "forward";
/// Size of the params uniform.
pub const PARAMS_BYTES: u64 = std::mem::size_of::<Params>() as u64;

/// Mirrors `Params` in the shader.
#[repr(C)]
#[derive(Debug, Clone, Copy, Pod, Zeroable)]
pub(crate) struct Params {
    seq_q: u32,
    seq_kv: u32,
    group: u32,
    banded_groups: u32,
    scale_log2: f32,
    lse_offset: u32,
    heads_q: u32,
    score_sign: f32,
    win_left: i32,
    win_right: i32,
    scale: f32,
    softcap: f32,
    alibi_offset: u32,
    alibi_batch_stride: u32,
    sinks_offset: u32,
    _pad: u32,
    mask_offset: u32,
    mask_batch_stride: u32,
    mask_head_stride: u32,
    total_q: u32,
    batch: u32,
    table_offset: u32,
    pages_per_seq: u32,
    _pad5: u32,
    q: [u32; 4],
    k: [u32; 4],
    v: [u32; 4],
    o: [u32; 4],
}

/// The shader source specialised for a plan.
pub fn shader_source(plan: &Plan) -> String {
    shader_text(plan).render()
}

/// The shader text for a plan (either forward kernel), not yet rendered.
pub(crate) fn shader_text(plan: &Plan) -> super::ShaderText {
    if plan.kernel == Kernel::ForwardCoopMatrix {
        return super::coop::shader_text(plan);
    }
    let p = &plan.problem;
    let t = plan.tiles;
    let header = format!(
        "const D4: u32 = {}u;\nconst BM: u32 = {}u;\nconst BN: u32 = {}u;\nconst TX: u32 = {}u;\nconst TY: u32 = {}u;\n\
         {}const STREAM_Q: bool = {};\n{}{}",
        p.head_dim / 4,
        t.block_m,
        t.block_n,
        t.threads_x,
        t.threads_y,
        option_consts(p, p.banded()),
        plan.stream_q,
        row_reductions_wgsl(plan.kernel, t.threads_x),
        super::storage_wgsl(plan.storage),
    );
    let (rm, rn) = (t.block_m / t.threads_y, t.block_n / t.threads_x);
    let rd4 = (p.head_dim / 4).div_ceil(t.threads_x);
    // Measured on the H200 (d=128, N=8k, f32): 1.7 TFLOP/s with these loops left to the driver,
    // 10.3 unrolled, because the driver kept the register arrays in local memory.
    let mut bounds = vec![
        ("RM", rm),
        ("RN", rn),
        ("RD4", rd4),
        ("RM * RN", rm * rn),
        ("RM * RD4", rm * rd4),
        ("TX", t.threads_x),
        ("4u", 4),
        ("LOADS", (t.block_n * p.head_dim / 4).div_ceil(t.threads())),
    ];
    // The products' own loops, where the plan says so (Plan::unroll_qk, Plan::unroll_pv).
    if plan.unroll_qk {
        bounds.push(("D4", p.head_dim / 4));
    }
    if plan.unroll_pv {
        bounds.push(("BN4", t.block_n.div_ceil(4)));
    }
    super::ShaderText::new(SOURCE, header).unrolled(&bounds)
}

/// WGSL for the row reductions: the subgroup tier combines the `threads_x` lanes of a row with a
/// butterfly of `subgroupShuffleXor` (offsets below `threads_x`, so each lane only meets lanes of
/// its own row whatever the subgroup size, as long as `threads_x` divides it: the plan checks);
/// the portable tier goes through workgroup memory and only needs placeholders.
fn row_reductions_wgsl(kernel: Kernel, threads_x: u32) -> String {
    if kernel != Kernel::ForwardSubgroup {
        return "const SUBGROUP_ROWS: bool = false;\n\
                fn lanes_max(x: f32) -> f32 { return x; }\n\
                fn lanes_sum(x: f32) -> f32 { return x; }\n"
            .into();
    }
    let mut offsets = Vec::new();
    let mut o = threads_x / 2;
    while o > 0 {
        offsets.push(o);
        o /= 2;
    }
    let steps = |op: &str| -> String {
        offsets
            .iter()
            .map(|o| format!(" r = {op}; ", op = op.replace("OFF", &format!("{o}u"))))
            .collect()
    };
    format!(
        "const SUBGROUP_ROWS: bool = true;\n\
         fn lanes_max(x: f32) -> f32 {{ var r = x;{} return r; }}\n\
         fn lanes_sum(x: f32) -> f32 {{ var r = x;{} return r; }}\n",
        steps("max(r, subgroupShuffleXor(r, OFF))"),
        steps("r + subgroupShuffleXor(r, OFF)"),
    )
}

/// The WGSL constants that switch the problem's options on, shared by the forward kernels;
/// `banded`: the kernel's banded code (the problem's, or the plan's choice of code form).
pub(crate) fn option_consts(p: &Attention, banded: bool) -> String {
    format!(
        "const BANDED: bool = {};\nconst SCALED: bool = {};\nconst SOFTCAP: bool = {};\nconst ALIBI: bool = {};\n\
         const SINKS: bool = {};\nconst BIAS: bool = {};\nconst KEEP_MASK: bool = {};\nconst VARLEN: bool = {};\n\
         const PAGED: bool = {};\nconst PAGE: u32 = {}u;\nconst WRITE_LSE: bool = {};\n",
        banded,
        scaled(p),
        p.softcap > 0.0,
        p.alibi.is_some(),
        p.sinks,
        matches!(p.mask, Some(m) if m.kind == MaskKind::Additive),
        matches!(p.mask, Some(m) if m.kind == MaskKind::Boolean),
        p.cu_seqlens.is_some(),
        p.paged_kv.is_some(),
        p.paged_kv.as_ref().map_or(1, |pk| pk.page_size),
        p.with_lse,
    )
}

/// Bytes per element as the shader reads it.
pub(crate) fn element_bytes(storage: Storage) -> u64 {
    match storage {
        Storage::F32 => 4,
        Storage::F16 | Storage::F16Packed | Storage::BF16Packed => 2,
    }
}

/// Where one tensor's binding starts in its buffer, and the tensor's offset inside that binding.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct BindRange {
    /// Byte offset of the binding (aligned to the device's storage offset alignment).
    pub offset: u64,
    /// Byte size of the binding.
    pub size: u64,
    /// Offset of the tensor's first element inside the binding, in units of 4 elements.
    pub first4: u32,
}

/// Checks that a tensor of `span` elements at byte `offset` fits `buffer_size` and can be addressed.
pub(crate) fn bind_range(
    tensor: &'static str,
    offset: u64,
    span_elems: u64,
    elem_bytes: u64,
    buffer_size: u64,
    align: u64,
) -> Result<BindRange> {
    let unit = 4 * elem_bytes;
    if offset % unit != 0 {
        return Err(FlashError::BadLayout {
            tensor,
            what: "byte offset",
            got: offset,
            why: "buffer offsets must be multiples of 4 elements (16 bytes for f32, 8 for f16)",
        });
    }
    let needed = offset + span_elems * elem_bytes;
    if needed > buffer_size {
        return Err(FlashError::BufferTooSmall {
            tensor,
            needed,
            got: buffer_size,
        });
    }
    let start = offset - offset % align;
    let size = (needed - start)
        .next_multiple_of(4)
        .min(buffer_size - start);
    Ok(BindRange {
        offset: start,
        size,
        first4: ((offset - start) / unit) as u32,
    })
}

/// Softcap and ALiBi act on real logits: such plans scale scores before the exponential instead of
/// folding the scale into it. So do scales below 1e-8 in size (0 among them), which keeps
/// `scale_log2` large enough for the tensor-core kernel's masked scores to underflow exp2
/// (`exp2_offset` in its shader).
pub(crate) fn scaled(p: &Attention) -> bool {
    p.scale().abs() < 1e-8
        || p.softcap > 0.0
        || p.alibi.is_some()
        || matches!(p.mask, Some(m) if m.kind == MaskKind::Additive)
}

/// Positions (in f32 elements, inside their bindings) of the small f32 inputs and outputs.
#[derive(Debug, Clone, Copy, Default)]
pub(crate) struct ExtraOffsets {
    pub lse: u32,
    pub alibi: u32,
    pub sinks: u32,
    pub mask: u32,
}

/// The words the kernel reads from the mask's binding when the problem has no mask: a
/// variable-length batch's prefix sums (cu_seqlens_q, then cu_seqlens_k), then the block table of
/// paged K/V. Empty when it has neither.
pub(crate) fn sequence_words(p: &Attention) -> Vec<u32> {
    let mut words: Vec<u32> = Vec::new();
    if let Some((cq, ck)) = &p.cu_seqlens {
        words.extend(cq.iter().chain(ck));
    }
    if let Some(pk) = &p.paged_kv {
        words.extend(&pk.block_table);
    }
    words
}

/// How many of [`sequence_words`] precede the block table.
fn prefix_words(p: &Attention) -> u32 {
    p.cu_seqlens
        .as_ref()
        .map_or(0, |(cq, ck)| (cq.len() + ck.len()) as u32)
}

/// Fills the params uniform for a plan and the tensors' positions inside their bindings.
pub(crate) fn params(plan: &Plan, first4: [u32; 4], extra: ExtraOffsets) -> Params {
    let p: &Attention = &plan.problem;
    let strides4 = |t: Tensor, first: u32| super::strides4(p, t, first);
    Params {
        seq_q: p.seq_q,
        seq_kv: p.seq_kv,
        group: p.heads_q / p.heads_kv,
        banded_groups: plan.banded_groups,
        scale_log2: if scaled(p) { 1.0 } else { p.scale().abs() } * std::f32::consts::LOG2_E,
        lse_offset: extra.lse,
        heads_q: p.heads_q,
        score_sign: if p.scale() < 0.0 { -1.0 } else { 1.0 },
        // A side wider than the sequence is unbounded (as in FlashAttention); this also keeps the
        // shader's i32 band arithmetic far from overflow.
        win_left: if p.window_size.0 as i64 >= p.seq_kv as i64 {
            -1
        } else {
            p.window_size.0
        },
        win_right: match (p.causal, p.window_size.1) {
            (true, r) if r < 0 => 0,
            (true, r) => r.min(0),
            (false, r) if r as i64 >= p.seq_q as i64 => -1,
            (false, r) => r,
        },
        scale: p.scale(),
        softcap: p.softcap,
        alibi_offset: extra.alibi,
        alibi_batch_stride: match p.alibi {
            Some(crate::problem::AlibiSlopes::PerBatchHead) => p.heads_q,
            _ => 0,
        },
        sinks_offset: extra.sinks,
        _pad: 0,
        mask_offset: extra.mask,
        mask_batch_stride: p.mask.map_or(0, |m| {
            if m.per_batch {
                (if m.per_head { p.heads_q } else { 1 }) * p.seq_q * p.seq_kv
            } else {
                0
            }
        }),
        mask_head_stride: p
            .mask
            .map_or(0, |m| if m.per_head { p.seq_q * p.seq_kv } else { 0 }),
        total_q: p.total_tokens().0 as u32,
        batch: p.batch,
        // The block table follows the prefix sums (see sequence_words).
        table_offset: extra.mask + prefix_words(p),
        pages_per_seq: p
            .paged_kv
            .as_ref()
            .map_or(0, |pk| pk.pages_per_seq(p.batch)),
        _pad5: 0,
        q: strides4(Tensor::Q, first4[0]),
        k: strides4(Tensor::K, first4[1]),
        v: strides4(Tensor::V, first4[2]),
        o: strides4(Tensor::O, first4[3]),
    }
}
