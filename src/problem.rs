//! The attention problem: shapes, layout, storage type and score options, and their validation.
//!
//! A problem says *what* to compute; [`crate::plan`] decides *how* on a given device.

use crate::error::{FlashError, Result};

/// Largest head dimension the kernels accept.
pub const MAX_HEAD_DIM: u32 = 256;

/// Storage type of Q, K, V and O in device memory. Accumulation is always f32.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum DType {
    /// IEEE binary32.
    F32,
    /// IEEE binary16. Read natively where the device has `SHADER_F16`, otherwise as packed `u32` pairs.
    F16,
    /// bfloat16 (the upper half of an f32), read as packed `u32` pairs (WGSL has no bf16 type).
    BF16,
}

impl DType {
    /// Bytes per element.
    pub fn size(self) -> u64 {
        match self {
            DType::F32 => 4,
            DType::F16 | DType::BF16 => 2,
        }
    }

    /// Lower-case name, as used in reports.
    pub fn name(self) -> &'static str {
        match self {
            DType::F32 => "f32",
            DType::F16 => "f16",
            DType::BF16 => "bf16",
        }
    }
}

/// Parses the names [`DType::name`] gives (`f32`, `f16`, `bf16`), as the benchmarks and examples
/// take them on their command lines.
///
/// ```
/// use wgpu_flash_attn::DType;
/// for d in [DType::F32, DType::F16, DType::BF16] {
///     assert_eq!(d.name().parse::<DType>(), Ok(d));
/// }
/// assert!("fp16".parse::<DType>().is_err());
/// ```
impl std::str::FromStr for DType {
    type Err = String;

    fn from_str(s: &str) -> std::result::Result<DType, String> {
        [DType::F32, DType::F16, DType::BF16]
            .into_iter()
            .find(|d| d.name() == s)
            .ok_or_else(|| format!("unknown dtype {s:?} (want f32, f16 or bf16)"))
    }
}

/// Element strides of one 4-D tensor laid out as (batch, seq, head, head_dim).
///
/// The head_dim stride is always 1 (the last dimension is contiguous, as in FlashAttention).
/// Strides count elements, not bytes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct Strides {
    /// Elements between consecutive batch entries.
    pub batch: u64,
    /// Elements between consecutive tokens.
    pub seq: u64,
    /// Elements between consecutive heads.
    pub head: u64,
}

impl Strides {
    /// Strides of a contiguous (batch, seq, heads, head_dim) tensor.
    pub fn contiguous(seq: u32, heads: u32, head_dim: u32) -> Self {
        let head = head_dim as u64;
        let seq_stride = heads as u64 * head;
        Strides {
            batch: seq as u64 * seq_stride,
            seq: seq_stride,
            head,
        }
    }

    /// Strides of a packed (total tokens, heads, head_dim) tensor of a variable-length batch.
    pub fn packed(heads: u32, head_dim: u32) -> Self {
        Strides {
            batch: 0,
            seq: heads as u64 * head_dim as u64,
            head: head_dim as u64,
        }
    }

    /// Index of the first element of row (batch entry, token, head).
    pub fn offset(&self, batch: u64, seq: u64, head: u64) -> u64 {
        batch * self.batch + seq * self.seq + head * self.head
    }

    /// Number of elements from the first to one past the last element of a tensor of this shape.
    pub fn span(&self, batch: u32, seq: u32, heads: u32, head_dim: u32) -> u64 {
        (batch as u64)
            .saturating_sub(1)
            .saturating_mul(self.batch)
            .saturating_add((seq as u64).saturating_sub(1).saturating_mul(self.seq))
            .saturating_add((heads as u64).saturating_sub(1).saturating_mul(self.head))
            .saturating_add(head_dim as u64)
    }
}

/// Entry `b` of a list of prefix sums (cu_seqlens): `cu[b + 1] - cu[b]`, 0 past its end or where
/// the sums fall (malformed ones are refused by validation; here they only give empty lengths).
pub(crate) fn prefix_len(cu: &[u32], b: u32) -> u32 {
    let at = |i: usize| cu.get(i).copied().unwrap_or(0);
    at(b as usize + 1).saturating_sub(at(b as usize))
}

/// Where ALiBi slopes come from: an f32 buffer of `heads_q` values, or of `batch * heads_q`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum AlibiSlopes {
    /// One slope per query head, shared by the batch.
    PerHead,
    /// One slope per (batch, query head), laid out batch-major.
    PerBatchHead,
}

/// An attention mask or bias from a buffer, laid out [batch or 1, heads_q or 1, seq_q, seq_kv]
/// contiguously, like PyTorch SDPA's `attn_mask`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct AttnMask {
    /// What the elements are.
    pub kind: MaskKind,
    /// The buffer has one [seq_q, seq_kv] plane per batch entry (otherwise one shared by all).
    pub per_batch: bool,
    /// The buffer has one plane per query head (otherwise one shared by all heads).
    pub per_head: bool,
}

/// The element type of an [`AttnMask`].
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum MaskKind {
    /// f32 added to the scaled score (after softcap and ALiBi); -inf masks the pair.
    Additive,
    /// One byte per element (0 masks the pair, anything else keeps it), packed four to a `u32`.
    Boolean,
}

/// Which tensor of the problem a layout belongs to.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Tensor {
    /// Queries, (batch, seq_q, heads_q, head_dim).
    Q,
    /// Keys, (batch, seq_kv, heads_kv, head_dim).
    K,
    /// Values, (batch, seq_kv, heads_kv, head_dim).
    V,
    /// Output, (batch, seq_q, heads_q, head_dim).
    O,
}

impl Tensor {
    /// Lower-case name used in error messages.
    pub fn name(self) -> &'static str {
        match self {
            Tensor::Q => "q",
            Tensor::K => "k",
            Tensor::V => "v",
            Tensor::O => "out",
        }
    }
}

/// An exact attention problem: `O = softmax(scale * Q K^T + mask) V`, per batch and query head.
///
/// Built with [`Attention::new`] and chained options; later options (windows, ALiBi, varlen, paged KV)
/// join this builder without breaking existing callers.
///
/// ```
/// use wgpu_flash_attn::{Attention, DType};
/// let problem = Attention::new(2, 8, 2, 1024, 1024, 64).dtype(DType::F16).causal(true).with_lse(true);
/// assert!(problem.validate().is_ok());
/// assert_eq!(problem.flops(), 4 * 2 * 8 * 1024 * 1024 * 64 / 2);
/// ```
#[derive(Debug, Clone, PartialEq)]
pub struct Attention {
    /// Batch size.
    pub batch: u32,
    /// Query heads.
    pub heads_q: u32,
    /// Key/value heads (heads_q must be a multiple: GQA, or MQA with 1).
    pub heads_kv: u32,
    /// Query tokens per sequence.
    pub seq_q: u32,
    /// Key/value tokens per sequence.
    pub seq_kv: u32,
    /// Dimension of each head.
    pub head_dim: u32,
    /// Storage type of Q, K, V and O.
    pub dtype: DType,
    /// f32 or bf16 storage may run on the tensor-core tier, which multiplies f16 operands: see
    /// [`Attention::allow_f16_products`]. No effect on f16 problems or on the other tiers.
    pub allow_f16_products: bool,
    /// Causal mask, aligned bottom-right: query i sees keys j <= i + seq_kv - seq_q.
    pub causal: bool,
    /// Scale applied to Q K^T; `None` means 1/sqrt(head_dim).
    pub softmax_scale: Option<f32>,
    /// Also write the natural-log log-sum-exp of each row, laid out (batch, heads_q, seq_q) in f32.
    pub with_lse: bool,
    /// Strides of q, k, v and out, in that order.
    pub strides: [Strides; 4],
    /// Sliding window (left, right) as in FlashAttention: query i sees keys j with
    /// i + off - left <= j <= i + off + right, off = seq_kv - seq_q; -1 leaves a side unbounded.
    pub window_size: (i32, i32),
    /// Logit soft-capping: scores s become softcap * tanh(s / softcap) (after scaling, before masks).
    /// 0 turns it off.
    pub softcap: f32,
    /// ALiBi: score -= slope * |i + off - j|, slopes from a buffer (see [`AlibiSlopes`]).
    pub alibi: Option<AlibiSlopes>,
    /// Attention sinks: one logit per query head (an f32 buffer of `heads_q` values) joins every
    /// row's softmax denominator and contributes no value.
    pub sinks: bool,
    /// An additive bias or boolean mask from a buffer (see [`AttnMask`]).
    pub mask: Option<AttnMask>,
    /// Variable-length batch: prefix sums of the query and key lengths (see [`Attention::varlen`]).
    pub cu_seqlens: Option<(Vec<u32>, Vec<u32>)>,
    /// K and V stored in pages through a block table (see [`Attention::paged_kv`]).
    pub paged_kv: Option<PagedKv>,
}

/// K and V in fixed-size pages, FlashAttention's `block_table` form: K and V are each laid out
/// (num_pages, page_size, heads_kv, head_dim) by their strides (batch stride = page stride), and key
/// j of sequence b lives at token j % page_size of page `block_table[b * pages_per_seq + j /
/// page_size]`. Pages may be in any order and shared between sequences.
#[derive(Debug, Clone, PartialEq)]
pub struct PagedKv {
    /// Tokens per page (any size from 1).
    pub page_size: u32,
    /// Pages the K and V buffers hold.
    pub num_pages: u32,
    /// Each sequence's pages in key order, `pages_per_seq` to a row, one row per sequence.
    pub block_table: Vec<u32>,
}

impl PagedKv {
    /// Columns of the block table.
    pub fn pages_per_seq(&self, batch: u32) -> u32 {
        (self.block_table.len() as u64 / batch.max(1) as u64) as u32
    }
}

impl Attention {
    /// A problem with contiguous (batch, seq, heads, head_dim) tensors, f32 storage, no mask,
    /// scale 1/sqrt(head_dim) and no LSE output.
    pub fn new(
        batch: u32,
        heads_q: u32,
        heads_kv: u32,
        seq_q: u32,
        seq_kv: u32,
        head_dim: u32,
    ) -> Self {
        Attention {
            batch,
            heads_q,
            heads_kv,
            seq_q,
            seq_kv,
            head_dim,
            dtype: DType::F32,
            allow_f16_products: false,
            causal: false,
            softmax_scale: None,
            with_lse: false,
            strides: [
                Strides::contiguous(seq_q, heads_q, head_dim),
                Strides::contiguous(seq_kv, heads_kv, head_dim),
                Strides::contiguous(seq_kv, heads_kv, head_dim),
                Strides::contiguous(seq_q, heads_q, head_dim),
            ],
            window_size: (-1, -1),
            softcap: 0.0,
            alibi: None,
            sinks: false,
            mask: None,
            cu_seqlens: None,
            paged_kv: None,
        }
    }

    /// A variable-length batch, FlashAttention's `varlen` form: sequence b has queries
    /// `cu_seqlens_q[b]..cu_seqlens_q[b + 1]` and keys `cu_seqlens_k[b]..cu_seqlens_k[b + 1]` of
    /// packed tensors laid out (total tokens, heads, head_dim). `seq_q` and `seq_kv` become the
    /// longest lengths; masks and windows apply per sequence (causal aligned bottom-right in each).
    /// The LSE is laid out (heads_q, total_q). A query block never straddles two sequences, so at
    /// most one partial tile per sequence is spent on padding.
    pub fn varlen(
        heads_q: u32,
        heads_kv: u32,
        head_dim: u32,
        cu_seqlens_q: &[u32],
        cu_seqlens_k: &[u32],
    ) -> Self {
        let longest = |cu: &[u32]| {
            cu.windows(2)
                .map(|w| w[1].saturating_sub(w[0]))
                .max()
                .unwrap_or(0)
        };
        let batch = cu_seqlens_q.len().saturating_sub(1) as u32;
        let mut p = Attention::new(
            batch,
            heads_q,
            heads_kv,
            longest(cu_seqlens_q).max(1),
            longest(cu_seqlens_k).max(1),
            head_dim,
        );
        let packed = |heads: u32| Strides::packed(heads, head_dim);
        p.strides = [
            packed(heads_q),
            packed(heads_kv),
            packed(heads_kv),
            packed(heads_q),
        ];
        p.cu_seqlens = Some((cu_seqlens_q.to_vec(), cu_seqlens_k.to_vec()));
        p
    }

    /// K and V read through a block table of pages (FlashAttention's `block_table`; see
    /// [`PagedKv`]): `block_table` has one row of pages per sequence, each row long enough for
    /// that sequence's keys (`seq_kv`, or its length in a variable-length batch). K and V become
    /// (num_pages, page_size, heads_kv, head_dim), contiguous; a fixed batch may set other strides
    /// after this (a variable-length batch takes contiguous pages). Takes no mask buffer (the table
    /// travels in its place). The table is part of the problem, so a new table means a new plan
    /// (its pipeline comes from the cache), and the whole pool must fit one storage binding;
    /// [`Attention::len_of`] and [`crate::plan::Plan::tensor_bytes`] count every page.
    ///
    /// ```
    /// use wgpu_flash_attn::{Attention, DType};
    /// // Two sequences of 5 and 20 keys over pages of 8 tokens; sequence 1 uses pages 3, 0, 2.
    /// let p = Attention::varlen(4, 2, 64, &[0, 5, 25], &[0, 5, 25])
    ///     .dtype(DType::F16)
    ///     .causal(true)
    ///     .paged_kv(8, 4, &[1, 0, 0, 3, 0, 2]);
    /// p.validate()?;
    /// # Ok::<(), wgpu_flash_attn::FlashError>(())
    /// ```
    pub fn paged_kv(mut self, page_size: u32, num_pages: u32, block_table: &[u32]) -> Self {
        let pages = Strides::contiguous(page_size, self.heads_kv, self.head_dim);
        self.strides[1] = pages;
        self.strides[2] = pages;
        self.paged_kv = Some(PagedKv {
            page_size,
            num_pages,
            block_table: block_table.to_vec(),
        });
        self
    }

    /// Sequence b of a variable-length batch as a problem of its own (batch 1, with its row of the
    /// block table when K and V are paged); the problem itself when it is not variable-length.
    pub fn sequence(&self, b: u32) -> Attention {
        match &self.cu_seqlens {
            None => self.clone(),
            Some((cq, _)) => {
                let mut s = self.clone();
                s.cu_seqlens = None;
                s.batch = 1;
                s.seq_q = prefix_len(cq, b);
                s.seq_kv = self.seq_kv_of(b);
                if let Some(pk) = &mut s.paged_kv {
                    let per_seq = pk.pages_per_seq(self.batch) as usize;
                    let start = (b as usize * per_seq).min(pk.block_table.len());
                    let end = (start + per_seq).min(pk.block_table.len());
                    pk.block_table = pk.block_table[start..end].to_vec();
                }
                s
            }
        }
    }

    /// Keys of sequence `b`: `seq_kv`, or its length in a variable-length batch (0 past the
    /// prefix sums; `validate` refuses malformed ones). [`Attention::sequence`] without the copy.
    pub fn seq_kv_of(&self, b: u32) -> u32 {
        match &self.cu_seqlens {
            None => self.seq_kv,
            Some((_, ck)) => prefix_len(ck, b),
        }
    }

    /// Total query and key tokens: batch * seq, or the last prefix sums of a variable-length batch.
    pub fn total_tokens(&self) -> (u64, u64) {
        match &self.cu_seqlens {
            None => (
                self.batch as u64 * self.seq_q as u64,
                self.batch as u64 * self.seq_kv as u64,
            ),
            Some((cq, ck)) => (
                *cq.last().unwrap_or(&0) as u64,
                *ck.last().unwrap_or(&0) as u64,
            ),
        }
    }

    /// Sets an additive bias or boolean mask read from a buffer (or none).
    pub fn attn_mask(mut self, mask: Option<AttnMask>) -> Self {
        self.mask = mask;
        self
    }

    /// Number of mask elements the buffer must hold (0 without a mask).
    pub fn mask_len(&self) -> u64 {
        self.mask.map_or(0, |m| {
            let planes = if m.per_batch { self.batch as u64 } else { 1 }
                * if m.per_head { self.heads_q as u64 } else { 1 };
            planes * self.seq_q as u64 * self.seq_kv as u64
        })
    }

    /// Bytes of the mask buffer (f32 elements, or bytes rounded up to whole `u32` words).
    pub fn mask_bytes(&self) -> u64 {
        match self.mask.map(|m| m.kind) {
            None => 0,
            Some(MaskKind::Additive) => self.mask_len() * 4,
            Some(MaskKind::Boolean) => self.mask_len().next_multiple_of(4),
        }
    }

    /// Sets the sliding window (left, right); -1 leaves a side unbounded. Combined with causal,
    /// the right side is at most 0.
    pub fn window_size(mut self, left: i32, right: i32) -> Self {
        self.window_size = (left, right);
        self
    }

    /// Sets the logit soft cap (0 turns it off).
    pub fn softcap(mut self, softcap: f32) -> Self {
        self.softcap = softcap;
        self
    }

    /// Turns ALiBi on, with slopes laid out as given (or off, with `None`).
    pub fn alibi(mut self, slopes: Option<AlibiSlopes>) -> Self {
        self.alibi = slopes;
        self
    }

    /// Turns attention sinks on or off (one sink logit per query head, from a buffer).
    pub fn sinks(mut self, sinks: bool) -> Self {
        self.sinks = sinks;
        self
    }

    /// Number of ALiBi slopes the problem reads (0 without ALiBi).
    pub fn alibi_len(&self) -> u64 {
        match self.alibi {
            None => 0,
            Some(AlibiSlopes::PerHead) => self.heads_q as u64,
            Some(AlibiSlopes::PerBatchHead) => self.batch as u64 * self.heads_q as u64,
        }
    }

    /// The band of keys query `i` may see, as (first, last) inclusive, before clipping to
    /// [0, seq_kv): the window and the causal mask together. `None` on a side means unbounded.
    pub fn band(&self, i: u32) -> (Option<i64>, Option<i64>) {
        let diag = i as i64 + self.seq_kv as i64 - self.seq_q as i64;
        let (left, right) = self.window_size;
        let lo = (left >= 0).then(|| diag - left as i64);
        let mut hi = (right >= 0).then(|| diag + right as i64);
        if self.causal {
            hi = Some(hi.map_or(diag, |h| h.min(diag)));
        }
        (lo, hi)
    }

    /// True when some keys are masked by position (causal or a window).
    pub fn banded(&self) -> bool {
        self.causal || self.window_size.0 >= 0 || self.window_size.1 >= 0
    }

    /// Sets the storage type.
    pub fn dtype(mut self, dtype: DType) -> Self {
        self.dtype = dtype;
        self
    }

    /// Lets an f32 or bf16 problem run on the tensor-core tier
    /// ([`Kernel::ForwardCoopMatrix`](crate::Kernel::ForwardCoopMatrix)), whose matrix units
    /// multiply f16 operands: each Q, K and V element is rounded to f16 as the kernel reads it, the
    /// probabilities are f16 as in an f16 problem, and sums and the output stay f32 until O is
    /// written in its own dtype. Off by default, like PyTorch's `allow_tf32`, because it trades
    /// accuracy and range for speed:
    /// - f32: 11 significant bits instead of 24, the precision of TF32: an input of magnitude 6.1e-5
    ///   to 65504 moves by up to 2^-11 (4.9e-4) of itself where the conversion rounds to nearest,
    ///   2^-10 where it takes the other neighbour (WGSL allows either), while the f32 tier takes it
    ///   as it is. Smaller inputs lose more as f16 subnormals, or become 0 where a driver flushes
    ///   those.
    /// - bf16: exact (bf16 has 8 significant bits, f16 11) for values of magnitude 6.1e-5 to 65504,
    ///   and down to 7.6e-6 (2^-17) where f16 subnormals are kept; smaller ones lose bits.
    /// - Either: an element beyond f16's range (magnitude above 65504) does not survive the rounding;
    ///   outputs that depend on it are then undefined. Only allow it for inputs known to stay in
    ///   range.
    ///
    /// Where the device has no tensor-core tier, or the problem cannot use it, the plan runs the
    /// problem in its own dtype as without this option. On an H200 at d = 128, N = 8k, f32 runs
    /// 236 TFLOP/s this way against 29 on the f32 tier, bf16 252 (BENCHMARKS.md, thirty-second
    /// round).
    ///
    /// ```
    /// use wgpu_flash_attn::plan::plan;
    /// use wgpu_flash_attn::{Attention, DType, DeviceCaps, Kernel};
    /// let problem = Attention::new(1, 8, 8, 1024, 1024, 128).dtype(DType::F32);
    /// // A device with f16 16x16x16 cooperative matrices and 32-lane subgroups, as NVIDIA's.
    /// let caps = DeviceCaps {
    ///     coop_matrix_f16: true,
    ///     shader_f16: true,
    ///     subgroup_sizes: Some((32, 32)),
    ///     max_workgroup_storage_bytes: 48 * 1024,
    ///     ..DeviceCaps::webgpu_defaults()
    /// };
    /// assert_ne!(plan(&problem, &caps).unwrap().kernel, Kernel::ForwardCoopMatrix);
    /// let fast = problem.allow_f16_products(true);
    /// assert_eq!(plan(&fast, &caps).unwrap().kernel, Kernel::ForwardCoopMatrix);
    /// ```
    pub fn allow_f16_products(mut self, allow: bool) -> Self {
        self.allow_f16_products = allow;
        self
    }

    /// Turns the causal (bottom-right aligned) mask on or off.
    pub fn causal(mut self, causal: bool) -> Self {
        self.causal = causal;
        self
    }

    /// Sets the scale applied to Q K^T (default 1/sqrt(head_dim)).
    pub fn softmax_scale(mut self, scale: f32) -> Self {
        self.softmax_scale = Some(scale);
        self
    }

    /// Asks for the row log-sum-exp as a second output.
    pub fn with_lse(mut self, with_lse: bool) -> Self {
        self.with_lse = with_lse;
        self
    }

    /// Sets explicit element strides for one tensor (head_dim stays contiguous).
    pub fn strides(mut self, tensor: Tensor, strides: Strides) -> Self {
        self.strides[tensor as usize] = strides;
        self
    }

    /// The strides of one tensor.
    pub fn strides_of(&self, tensor: Tensor) -> Strides {
        self.strides[tensor as usize]
    }

    /// The scale actually applied.
    pub fn scale(&self) -> f32 {
        self.softmax_scale
            .unwrap_or(1.0 / (self.head_dim as f32).sqrt())
    }

    /// (batch, seq, heads) of a tensor; (num_pages, page_size, heads_kv) for paged K and V.
    pub fn dims_of(&self, tensor: Tensor) -> (u32, u32, u32) {
        if let (Tensor::K | Tensor::V, Some(pk)) = (tensor, &self.paged_kv) {
            return (pk.num_pages, pk.page_size, self.heads_kv);
        }
        match tensor {
            _ if self.cu_seqlens.is_some() => {
                let (tq, tk) = self.total_tokens();
                match tensor {
                    Tensor::Q | Tensor::O => (1, tq.max(1) as u32, self.heads_q),
                    Tensor::K | Tensor::V => (1, tk.max(1) as u32, self.heads_kv),
                }
            }
            Tensor::Q | Tensor::O => (self.batch, self.seq_q, self.heads_q),
            Tensor::K | Tensor::V => (self.batch, self.seq_kv, self.heads_kv),
        }
    }

    /// Number of elements one tensor's layout spans (from offset 0).
    pub fn span_of(&self, tensor: Tensor) -> u64 {
        let (b, s, h) = self.dims_of(tensor);
        self.strides_of(tensor).span(b, s, h, self.head_dim)
    }

    /// Number of logical elements of a tensor (its product of dimensions).
    pub fn len_of(&self, tensor: Tensor) -> u64 {
        let (b, s, h) = self.dims_of(tensor);
        b as u64 * s as u64 * h as u64 * self.head_dim as u64
    }

    /// Number of LSE values: batch * heads_q * seq_q, laid out (batch, heads_q, seq_q); for a
    /// variable-length batch heads_q * total_q, laid out (heads_q, total_q).
    pub fn lse_len(&self) -> u64 {
        self.heads_q as u64 * self.total_tokens().0
    }

    /// Number of (query, key) pairs that the mask lets through, summed over batch and heads.
    pub fn visible_pairs(&self) -> u64 {
        if self.cu_seqlens.is_some() {
            return (0..self.batch)
                .map(|b| self.sequence(b).visible_pairs())
                .sum();
        }
        let per_head: u64 = (0..self.seq_q)
            .map(|i| {
                let (lo, hi) = self.band(i);
                let lo = lo.unwrap_or(0).max(0);
                let hi = hi.unwrap_or(i64::MAX).min(self.seq_kv as i64 - 1);
                (hi - lo + 1).max(0) as u64
            })
            .sum();
        per_head * self.batch as u64 * self.heads_q as u64
    }

    /// Floating-point operations by the convention of the FlashAttention papers:
    /// 4 * B * H * Nq * Nk * d, halved when causal. With a sliding window, 4 * d times the
    /// (query, key) pairs the mask lets through.
    pub fn flops(&self) -> u64 {
        if self.cu_seqlens.is_some() {
            return (0..self.batch).map(|b| self.sequence(b).flops()).sum();
        }
        if self.window_size != (-1, -1) {
            return 4 * self.head_dim as u64 * self.visible_pairs();
        }
        let full = 4
            * self.batch as u64
            * self.heads_q as u64
            * self.seq_q as u64
            * self.seq_kv as u64
            * self.head_dim as u64;
        if self.causal {
            full / 2
        } else {
            full
        }
    }

    /// Checks a block table against the sequences' key counts.
    fn validate_pages(&self, pk: &PagedKv) -> Result<()> {
        let bad = |what, got: String, why| Err(FlashError::BadOption { what, got, why });
        if pk.page_size == 0 || pk.num_pages == 0 {
            return bad(
                "paged_kv",
                format!("page_size {}, num_pages {}", pk.page_size, pk.num_pages),
                "pages hold at least one token and there is at least one page",
            );
        }
        if self.mask.is_some() {
            return bad(
                "attn_mask",
                "on".into(),
                "a mask buffer cannot be combined with paged K/V (the block table takes its place)",
            );
        }
        let per_seq = pk.pages_per_seq(self.batch);
        if per_seq == 0 || pk.block_table.len() as u64 != per_seq as u64 * self.batch as u64 {
            return bad(
                "block_table",
                format!("{} entries for batch {}", pk.block_table.len(), self.batch),
                "one row of pages per sequence, all rows as long",
            );
        }
        for b in 0..self.batch {
            let keys = self.seq_kv_of(b);
            let needed = keys.div_ceil(pk.page_size);
            if needed > per_seq {
                return bad(
                    "block_table",
                    format!("{per_seq} pages per sequence of {} tokens", pk.page_size),
                    "each row must hold its sequence's keys",
                );
            }
            let row = &pk.block_table[(b * per_seq) as usize..][..needed as usize];
            if let Some(&page) = row.iter().find(|&&page| page >= pk.num_pages) {
                return bad(
                    "block_table",
                    format!("page {page} of sequence {b}"),
                    "every page a sequence uses must be below num_pages",
                );
            }
        }
        Ok(())
    }

    /// Checks everything that does not depend on a device.
    pub fn validate(&self) -> Result<()> {
        for (what, v) in [
            ("batch", self.batch),
            ("heads_q", self.heads_q),
            ("heads_kv", self.heads_kv),
            ("seq_q", self.seq_q),
            ("seq_kv", self.seq_kv),
            ("head_dim", self.head_dim),
        ] {
            if v == 0 {
                return Err(FlashError::ZeroSize { what });
            }
        }
        if self.head_dim % 4 != 0 || self.head_dim > MAX_HEAD_DIM {
            return Err(FlashError::UnsupportedHeadDim {
                got: self.head_dim,
                max: MAX_HEAD_DIM,
            });
        }
        if self.heads_q % self.heads_kv != 0 {
            return Err(FlashError::HeadsNotDivisible {
                heads_q: self.heads_q,
                heads_kv: self.heads_kv,
            });
        }
        let scale = self.scale();
        if !scale.is_finite() {
            return Err(FlashError::BadOption {
                what: "softmax_scale",
                got: scale.to_string(),
                why: "it must be finite",
            });
        }
        if let Some((cq, ck)) = &self.cu_seqlens {
            for (what, cu) in [("cu_seqlens_q", cq), ("cu_seqlens_k", ck)] {
                if cu.len() as u64 != self.batch as u64 + 1
                    || cu.first() != Some(&0)
                    || cu.windows(2).any(|w| w[1] < w[0])
                {
                    return Err(FlashError::BadOption {
                        what,
                        got: format!("{cu:?}"),
                        why: "prefix sums start at 0, never decrease, and both have batch + 1 entries",
                    });
                }
            }
            // Tensors keep at least one token of room (no binding may be empty), so a batch
            // without any query would hand back a row that no sequence owns: refuse it instead.
            if cq.last() == Some(&0) {
                return Err(FlashError::BadOption {
                    what: "cu_seqlens_q",
                    got: format!("{cq:?}"),
                    why: "the batch has no query token at all (skip the call instead)",
                });
            }
            if self.mask.is_some() {
                return Err(FlashError::BadOption {
                    what: "attn_mask",
                    got: "on".into(),
                    why: "a mask buffer cannot be combined with a variable-length batch",
                });
            }
            let longest =
                |cu: &Vec<u32>| cu.windows(2).map(|w| w[1] - w[0]).max().unwrap_or(0).max(1);
            if (self.seq_q, self.seq_kv) != (longest(cq), longest(ck)) {
                return Err(FlashError::BadOption {
                    what: "seq_q, seq_kv",
                    got: format!("{}, {}", self.seq_q, self.seq_kv),
                    why: "a variable-length batch's seq_q and seq_kv are its longest lengths (build it with Attention::varlen)",
                });
            }
            let packed = |heads: u32| Strides::packed(heads, self.head_dim);
            let kv = match &self.paged_kv {
                Some(pk) => Strides::contiguous(pk.page_size, self.heads_kv, self.head_dim),
                None => packed(self.heads_kv),
            };
            let expected = [packed(self.heads_q), kv, kv, packed(self.heads_q)];
            if let Some(t) = (0..4).find(|&t| self.strides[t] != expected[t]) {
                return Err(FlashError::BadLayout {
                    tensor: [Tensor::Q, Tensor::K, Tensor::V, Tensor::O][t].name(),
                    what: "strides",
                    got: self.strides[t].seq,
                    why: "a variable-length batch takes packed (total tokens, heads, head_dim) tensors (contiguous pages for paged K/V)",
                });
            }
        }
        if let Some(pk) = &self.paged_kv {
            self.validate_pages(pk)?;
        }
        let (left, right) = self.window_size;
        for (what, v) in [
            ("window_size.0 (left)", left),
            ("window_size.1 (right)", right),
        ] {
            if v < -1 {
                return Err(FlashError::BadOption {
                    what,
                    got: v.to_string(),
                    why: "a window side is -1 (unbounded) or at least 0",
                });
            }
        }
        if !(self.softcap.is_finite() && self.softcap >= 0.0) {
            return Err(FlashError::BadOption {
                what: "softcap",
                got: self.softcap.to_string(),
                why: "it must be 0 (off) or a finite positive cap",
            });
        }
        for tensor in [Tensor::Q, Tensor::K, Tensor::V, Tensor::O] {
            let s = self.strides_of(tensor);
            for (what, v) in [
                ("batch stride", s.batch),
                ("seq stride", s.seq),
                ("head stride", s.head),
            ] {
                if v % 4 != 0 {
                    return Err(FlashError::BadLayout {
                        tensor: tensor.name(),
                        what,
                        got: v,
                        why: "strides must be multiples of 4 elements (the kernels move 4 elements at a time)",
                    });
                }
            }
        }
        check_no_overlap(self, Tensor::O)
    }
}

/// An output layout must give every element its own address. Sufficient test: sorted by stride,
/// each dimension steps over the whole extent of the ones inside it.
fn check_no_overlap(p: &Attention, tensor: Tensor) -> Result<()> {
    let (b, s, h) = p.dims_of(tensor);
    let st = p.strides_of(tensor);
    let mut dims = [
        (1u64, p.head_dim as u64, "head_dim"),
        (st.head, h as u64, "head stride"),
        (st.seq, s as u64, "seq stride"),
        (st.batch, b as u64, "batch stride"),
    ];
    dims.sort_by_key(|d| d.0);
    let mut reach = 0u64; // elements covered by the inner dimensions
    for (stride, extent, what) in dims {
        if extent == 1 {
            continue;
        }
        if stride < reach {
            return Err(FlashError::BadLayout {
                tensor: tensor.name(),
                what,
                got: stride,
                why: "the output layout would write two elements to one address",
            });
        }
        reach = stride
            .saturating_mul(extent - 1)
            .saturating_add(reach.max(1));
    }
    Ok(())
}
