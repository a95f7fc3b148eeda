//! Attention over a KV cache: decoding, chunked prefill, and both mixed in one step.
//!
//! A [`KvCacheAttention`] describes one step of an inference server: a ragged batch of query
//! tokens (`cu_seqlens_q`, one token per decoding sequence, a chunk of a prompt for a prefilling
//! one) over per-sequence caches of keys and values, stored contiguously or in pages through a
//! block table. Optionally the step's new keys and values are appended to the cache first, with
//! rotary embeddings applied to the queries and the new keys. [`plan`] turns it into a
//! [`KvCachePlan`] for a device (tiles, split-KV count, work list); no GPU calls happen here.
//! Prefill chunks (64 query tokens or more) run through the forward kernels over the same caches
//! where the device has the tensor-core tier ([`PrefillRoute`]); the KV-cache kernel runs the rest.
//!
//! ```
//! use wgpu_flash_attn::kvcache::{KvCacheAttention, RotaryEmbedding};
//! use wgpu_flash_attn::DType;
//! // 3 sequences: two decode one token, the third prefills a chunk of 100 tokens; their caches
//! // hold 500, 70 and 0 tokens before this step, in pages of 16 tokens.
//! let pages_per_seq = 40;
//! let block_table: Vec<u32> = (0..3 * pages_per_seq).collect();
//! let step = KvCacheAttention::new(32, 8, 128, &[0, 1, 2, 102], &[500, 70, 0])
//!     .dtype(DType::F16)
//!     .paged(16, 3 * pages_per_seq, &block_table)
//!     .causal(true)
//!     .append_new_kv(true)
//!     .rotary(Some(RotaryEmbedding::half_split(128, 10000.0)));
//! assert!(step.validate().is_ok());
//! assert_eq!(step.kv_len(2), 100); // the chunk attends to itself, causally
//! ```

use crate::error::{FlashError, Result};
use crate::plan::{storage_for, DeviceCaps, Plan, Storage, BROWSER_BACKEND};
use crate::problem::{Attention, DType, Strides, MAX_HEAD_DIM};

/// How the K and V caches are laid out (both the same way, in two buffers).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum CacheLayout {
    /// One entry per sequence: (batch, capacity, heads_kv, head_dim), as FlashAttention's
    /// `k_cache` / `v_cache`.
    Contiguous {
        /// Tokens each sequence's entry holds.
        capacity: u32,
    },
    /// Fixed-size pages: (num_pages, page_size, heads_kv, head_dim); token t of sequence b is in
    /// page `block_table[b * pages_per_seq + t / page_size]`, row `t % page_size` (vLLM's
    /// PagedAttention). Pages may be in any order and shared between sequences; any page size of
    /// at least 1 is supported (a tile of keys may span page boundaries).
    Paged {
        /// Tokens per page.
        page_size: u32,
        /// Pages in the cache buffers.
        num_pages: u32,
        /// (batch, pages_per_seq) page indices, row-major.
        block_table: Vec<u32>,
    },
}

/// The two usual ways of pairing head_dim elements for rotation.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum RotaryStyle {
    /// Elements (2i, 2i + 1) form pair i (GPT-J, FlashAttention's `rotary_interleaved=True`).
    Interleaved,
    /// Elements (i, i + rotary_dim / 2) form pair i (GPT-NeoX, LLaMA as in Hugging Face).
    HalfSplit,
}

/// Where the rotation angles come from.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum RotaryAngles {
    /// Pair i at position p turns by p * theta^(-2i / rotary_dim), computed in f32 on the GPU.
    Theta(f32),
    /// Tables of `positions` rows of rotary_dim / 2 values in one f32 buffer: cos, then sin
    /// (FlashAttention's `rotary_cos` / `rotary_sin`, concatenated).
    Table {
        /// Rows of each table (positions covered).
        positions: u32,
    },
}

/// Rotary position embedding applied to the queries and the new keys of a step; a token's
/// position is its index in its sequence (cached tokens first).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct RotaryEmbedding {
    /// Leading elements of each head that rotate (the rest pass through).
    pub dim: u32,
    /// How elements pair.
    pub style: RotaryStyle,
    /// Angles from a base or from tables.
    pub angles: RotaryAngles,
}

impl RotaryEmbedding {
    /// Half-split pairs over `dim` elements with angles from `theta` (10000 in most models).
    pub fn half_split(dim: u32, theta: f32) -> Self {
        RotaryEmbedding {
            dim,
            style: RotaryStyle::HalfSplit,
            angles: RotaryAngles::Theta(theta),
        }
    }

    /// Interleaved pairs over `dim` elements with angles from `theta`.
    pub fn interleaved(dim: u32, theta: f32) -> Self {
        RotaryEmbedding {
            dim,
            style: RotaryStyle::Interleaved,
            angles: RotaryAngles::Theta(theta),
        }
    }

    /// Number of f32 values the table buffer holds (cos and sin), 0 without tables.
    pub fn table_len(&self) -> u64 {
        match self.angles {
            RotaryAngles::Theta(_) => 0,
            RotaryAngles::Table { positions } => 2 * positions as u64 * (self.dim / 2) as u64,
        }
    }
}

/// One step of attention over KV caches. Queries are packed (total_q, heads_q, head_dim) like a
/// variable-length batch; the output has the same layout; the LSE is f32 laid out
/// (total_q, heads_q), the order of the output's rows, so [`merge_states`] applies directly.
///
/// Sequence b has queries `cu_seqlens_q[b]..cu_seqlens_q[b + 1]` (0 is allowed: it sits this
/// step out) and sees keys `0..kv_len(b)` of its cache, where `kv_len(b)` is `cached[b]`, plus its
/// query count when the step appends new keys and values. With `causal`, query i of a sequence
/// with n queries sees keys j <= i + kv_len(b) - n (aligned bottom-right, so a prefill chunk sees
/// its cached prefix and itself causally, and a decode token sees everything).
#[derive(Debug, Clone, PartialEq)]
pub struct KvCacheAttention {
    /// Query heads.
    pub heads_q: u32,
    /// Key/value heads (heads_q a multiple).
    pub heads_kv: u32,
    /// Dimension of each head.
    pub head_dim: u32,
    /// Storage type of Q, the caches, the new K/V and O.
    pub dtype: DType,
    /// f32 or bf16 prefill chunks may run on the tensor-core forward kernel, which multiplies f16
    /// ([`Attention::allow_f16_products`] of [`KvCacheAttention::forward_problem`]; the KV-cache
    /// kernel itself always computes in the storage type). Off by default.
    pub allow_f16_products: bool,
    /// Prefix sums of the query tokens per sequence (batch + 1 entries, starting at 0).
    pub cu_seqlens_q: Vec<u32>,
    /// Tokens already in each sequence's cache (before this step's append).
    pub cached: Vec<u32>,
    /// How the caches are laid out.
    pub layout: CacheLayout,
    /// Causal mask, aligned bottom-right.
    pub causal: bool,
    /// Scale applied to Q K^T; `None` means 1/sqrt(head_dim).
    pub softmax_scale: Option<f32>,
    /// Also write the natural-log LSE of each row, (total_q, heads_q), f32.
    pub with_lse: bool,
    /// Each query token brings a key and a value per KV head (k_new, v_new laid out
    /// (total_q, heads_kv, head_dim)), written to the cache at its position before attention.
    pub append_new_kv: bool,
    /// Rotary embedding of the queries and the new keys (needs `append_new_kv`).
    pub rotary: Option<RotaryEmbedding>,
    /// Force the number of KV splits (otherwise the plan picks it).
    pub num_splits: Option<u32>,
    /// Which kernels run the prefill chunks (sequences with at least [`FORWARD_PREFILL_TOKENS`]
    /// query tokens in the step); [`PrefillRoute::Auto`] by default. Steps that ask for the LSE
    /// keep every sequence on the KV-cache kernel.
    pub prefill_route: PrefillRoute,
}

/// Where a step's prefill chunks run. The forward kernels read the same caches (the contiguous
/// entry or the block-table row of the sequence, see [`KvCacheAttention::forward_problem`]), after
/// the step's append and in the same encoder; the KV-cache kernel then runs the other sequences
/// alone. A chunk goes to the forward kernels only where they can plan it (its K and V within one
/// binding: for pages, the whole pool).
///
/// On the H200, a 32k-token prompt among 32 decoding sequences (`examples/serving.rs
/// --prefill-route kv-cache` and `forward`, one run) took 462.6 ms in one step on the KV-cache
/// kernel and 133.6 ms through the tensor-core forward kernel (BENCHMARKS.md, sixth round).
/// Without tensor cores the two routes have not been compared on a GPU, so `Auto` keeps the
/// KV-cache kernel there.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum PrefillRoute {
    /// The forward kernels where a chunk's forward plan takes the tensor cores
    /// ([`Kernel::ForwardCoopMatrix`](crate::Kernel::ForwardCoopMatrix)), else the KV-cache kernel.
    #[default]
    Auto,
    /// The forward kernels for every chunk they can plan, whatever their tier.
    Forward,
    /// The KV-cache kernel for every sequence.
    KvCache,
}

impl PrefillRoute {
    /// "auto", "forward" or "kv-cache" (as the tools' `--prefill-route` takes it, and as the
    /// autotuner's cache keys record it).
    pub fn name(self) -> &'static str {
        match self {
            PrefillRoute::Auto => "auto",
            PrefillRoute::Forward => "forward",
            PrefillRoute::KvCache => "kv-cache",
        }
    }
}

impl std::str::FromStr for PrefillRoute {
    type Err = String;

    /// The route [`PrefillRoute::name`] names.
    fn from_str(s: &str) -> std::result::Result<PrefillRoute, String> {
        [
            PrefillRoute::Auto,
            PrefillRoute::Forward,
            PrefillRoute::KvCache,
        ]
        .into_iter()
        .find(|r| r.name() == s)
        .ok_or_else(|| format!("unknown prefill route {s:?} (want auto, forward or kv-cache)"))
    }
}

/// Query tokens from which a sequence of a step counts as a prefill chunk for
/// [`KvCacheAttention::prefill_route`].
pub const FORWARD_PREFILL_TOKENS: u32 = 64;

impl KvCacheAttention {
    /// A step over `cached[b]` tokens per sequence with queries `cu_seqlens_q`, contiguous caches
    /// just large enough (capacity: the longest cached + query tokens), f32, not causal, no append.
    pub fn new(
        heads_q: u32,
        heads_kv: u32,
        head_dim: u32,
        cu_seqlens_q: &[u32],
        cached: &[u32],
    ) -> Self {
        let mut step = KvCacheAttention {
            heads_q,
            heads_kv,
            head_dim,
            dtype: DType::F32,
            cu_seqlens_q: cu_seqlens_q.to_vec(),
            cached: cached.to_vec(),
            layout: CacheLayout::Contiguous { capacity: 1 },
            causal: false,
            softmax_scale: None,
            with_lse: false,
            append_new_kv: false,
            rotary: None,
            num_splits: None,
            prefill_route: PrefillRoute::Auto,
            allow_f16_products: false,
        };
        // Room for every cached token and one new token per query, should the step append.
        let capacity = (0..step.batch())
            .map(|b| step.cached.get(b as usize).copied().unwrap_or(0) + step.seq_q(b))
            .max()
            .unwrap_or(1);
        step.layout = CacheLayout::Contiguous {
            capacity: capacity.max(1),
        };
        step
    }

    /// Decoding: `seq_q` query tokens for each of `cache_seqlens.len()` sequences (FlashAttention's
    /// `flash_attn_with_kvcache` with q (batch, seq_q, heads_q, head_dim)), caches of `capacity`
    /// tokens per sequence. Causal, so several query tokens see the cache and each other in order.
    pub fn decode(
        heads_q: u32,
        heads_kv: u32,
        head_dim: u32,
        seq_q: u32,
        cache_seqlens: &[u32],
        capacity: u32,
    ) -> Self {
        let cu: Vec<u32> = (0..=cache_seqlens.len() as u32)
            .map(|b| b * seq_q)
            .collect();
        KvCacheAttention::new(heads_q, heads_kv, head_dim, &cu, cache_seqlens)
            .contiguous(capacity)
            .causal(true)
    }

    /// Contiguous caches of `capacity` tokens per sequence.
    pub fn contiguous(mut self, capacity: u32) -> Self {
        self.layout = CacheLayout::Contiguous { capacity };
        self
    }

    /// Paged caches: `num_pages` pages of `page_size` tokens, and a block table of
    /// (batch, pages_per_seq) page indices, row-major (pages_per_seq = its length / batch).
    pub fn paged(mut self, page_size: u32, num_pages: u32, block_table: &[u32]) -> Self {
        self.layout = CacheLayout::Paged {
            page_size,
            num_pages,
            block_table: block_table.to_vec(),
        };
        self
    }

    /// Sets the storage type.
    pub fn dtype(mut self, dtype: DType) -> Self {
        self.dtype = dtype;
        self
    }

    /// Lets f32 or bf16 prefill chunks run on the tensor-core forward kernel, which rounds their
    /// inputs to f16 as it reads them: see [`Attention::allow_f16_products`] for what that costs.
    /// With [`PrefillRoute::Auto`] this is what sends an f32 or bf16 step's prefill chunks to the
    /// forward kernels on a device with tensor cores.
    pub fn allow_f16_products(mut self, allow: bool) -> Self {
        self.allow_f16_products = allow;
        self
    }

    /// Turns the causal (bottom-right aligned) mask on or off.
    pub fn causal(mut self, causal: bool) -> Self {
        self.causal = causal;
        self
    }

    /// Sets the scale applied to Q K^T.
    pub fn softmax_scale(mut self, scale: f32) -> Self {
        self.softmax_scale = Some(scale);
        self
    }

    /// Asks for the row LSE as a second output.
    pub fn with_lse(mut self, with_lse: bool) -> Self {
        self.with_lse = with_lse;
        self
    }

    /// Appends each query token's new key and value to the cache before attention.
    pub fn append_new_kv(mut self, append: bool) -> Self {
        self.append_new_kv = append;
        self
    }

    /// Sets (or clears) the rotary embedding of the queries and the new keys.
    pub fn rotary(mut self, rotary: Option<RotaryEmbedding>) -> Self {
        self.rotary = rotary;
        self
    }

    /// Forces the number of KV splits (1 turns split-KV off).
    pub fn num_splits(mut self, splits: u32) -> Self {
        self.num_splits = Some(splits);
        self
    }

    /// Chooses where the prefill chunks run ([`PrefillRoute`]; `Auto` by default).
    pub fn prefill_route(mut self, route: PrefillRoute) -> Self {
        self.prefill_route = route;
        self
    }

    /// Sequence b's attention as a forward problem (batch 1) over the caches: its query tokens
    /// against its cached keys (plus its new ones when appending), K and V read from the cache
    /// buffers (entry b of a contiguous cache: bind them at that entry; pages through row b of the
    /// block table), Q and O packed (bind them at the sequence's first token).
    ///
    /// # Panics
    /// When `b` is not a sequence of the step (paged caches).
    pub fn forward_problem(&self, b: u32) -> Attention {
        let a = Attention::new(
            1,
            self.heads_q,
            self.heads_kv,
            self.seq_q(b),
            self.kv_len(b),
            self.head_dim,
        )
        .dtype(self.dtype)
        .allow_f16_products(self.allow_f16_products)
        .causal(self.causal)
        .softmax_scale(self.scale());
        match &self.layout {
            CacheLayout::Contiguous { capacity } => {
                let mut a = a;
                let entry = Strides::contiguous(*capacity, self.heads_kv, self.head_dim);
                a.strides[1] = entry;
                a.strides[2] = entry;
                a
            }
            CacheLayout::Paged {
                page_size,
                num_pages,
                block_table,
            } => {
                let per_seq = self.pages_per_seq() as usize;
                let row = &block_table[b as usize * per_seq..][..per_seq];
                a.paged_kv(*page_size, *num_pages, row)
            }
        }
    }

    /// Number of sequences.
    pub fn batch(&self) -> u32 {
        self.cu_seqlens_q.len().saturating_sub(1) as u32
    }

    /// Query tokens of sequence b.
    pub fn seq_q(&self, b: u32) -> u32 {
        crate::problem::prefix_len(&self.cu_seqlens_q, b)
    }

    /// Query tokens in all.
    pub fn total_q(&self) -> u32 {
        self.cu_seqlens_q.last().copied().unwrap_or(0)
    }

    /// Keys sequence b attends to: its cached tokens, plus its new ones when appending.
    pub fn kv_len(&self, b: u32) -> u32 {
        let cached = self.cached.get(b as usize).copied().unwrap_or(0);
        if self.append_new_kv {
            cached.saturating_add(self.seq_q(b))
        } else {
            cached
        }
    }

    /// The longest `kv_len` of the batch.
    pub fn longest_kv(&self) -> u32 {
        (0..self.batch()).map(|b| self.kv_len(b)).max().unwrap_or(0)
    }

    /// The scale actually applied.
    pub fn scale(&self) -> f32 {
        self.softmax_scale
            .unwrap_or(1.0 / (self.head_dim as f32).sqrt())
    }

    /// Tokens each sequence's cache can hold (contiguous capacity, or pages per sequence times
    /// the page size).
    pub fn capacity(&self) -> u64 {
        match &self.layout {
            CacheLayout::Contiguous { capacity } => *capacity as u64,
            CacheLayout::Paged { page_size, .. } => self.pages_per_seq() as u64 * *page_size as u64,
        }
    }

    /// Columns of the block table (0 for contiguous caches).
    pub fn pages_per_seq(&self) -> u32 {
        match &self.layout {
            CacheLayout::Contiguous { .. } => 0,
            CacheLayout::Paged { block_table, .. } => {
                (block_table.len() / self.batch().max(1) as usize) as u32
            }
        }
    }

    /// Elements of each cache buffer (K or V): batch * capacity or num_pages * page_size tokens,
    /// times heads_kv * head_dim.
    pub fn cache_len(&self) -> u64 {
        let tokens = match &self.layout {
            CacheLayout::Contiguous { capacity } => self.batch() as u64 * *capacity as u64,
            CacheLayout::Paged {
                page_size,
                num_pages,
                ..
            } => *num_pages as u64 * *page_size as u64,
        };
        tokens * self.heads_kv as u64 * self.head_dim as u64
    }

    /// Elements of Q and of O: total_q * heads_q * head_dim.
    pub fn q_len(&self) -> u64 {
        self.total_q() as u64 * self.heads_q as u64 * self.head_dim as u64
    }

    /// Elements of each of k_new and v_new: total_q * heads_kv * head_dim (0 without append).
    pub fn new_kv_len(&self) -> u64 {
        if self.append_new_kv {
            self.total_q() as u64 * self.heads_kv as u64 * self.head_dim as u64
        } else {
            0
        }
    }

    /// LSE values: total_q * heads_q.
    pub fn lse_len(&self) -> u64 {
        self.total_q() as u64 * self.heads_q as u64
    }

    /// Bytes of K and V the step reads from the caches (each visible key once per KV head).
    pub fn kv_bytes_read(&self) -> u64 {
        (0..self.batch())
            .map(|b| self.kv_len(b) as u64)
            .sum::<u64>()
            * 2
            * self.heads_kv as u64
            * self.head_dim as u64
            * self.dtype.size()
    }

    /// Checks everything that does not depend on a device.
    pub fn validate(&self) -> Result<()> {
        for (what, v) in [
            ("heads_q", self.heads_q),
            ("heads_kv", self.heads_kv),
            ("head_dim", self.head_dim),
            ("batch (cu_seqlens_q.len() - 1)", self.batch()),
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
        let cu = &self.cu_seqlens_q;
        if cu.first() != Some(&0) || cu.windows(2).any(|w| w[1] < w[0]) {
            return Err(FlashError::BadOption {
                what: "cu_seqlens_q",
                got: format!("{cu:?}"),
                why: "prefix sums start at 0 and never decrease",
            });
        }
        if self.total_q() == 0 {
            return Err(FlashError::ZeroSize {
                what: "query tokens (cu_seqlens_q's last entry)",
            });
        }
        if self.cached.len() != self.batch() as usize {
            return Err(FlashError::ShapeMismatch {
                tensor: "cached (tokens per sequence)",
                expected: self.batch() as u64,
                got: self.cached.len() as u64,
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
        if let Some(n) = self.num_splits {
            if n == 0 || n > MAX_SPLITS {
                return Err(FlashError::BadOption {
                    what: "num_splits",
                    got: n.to_string(),
                    why: "between 1 and 256",
                });
            }
        }
        match &self.layout {
            CacheLayout::Contiguous { capacity } if *capacity == 0 => {
                return Err(FlashError::ZeroSize {
                    what: "cache capacity",
                })
            }
            CacheLayout::Paged {
                page_size,
                num_pages,
                block_table,
            } => {
                if *page_size == 0 || *num_pages == 0 {
                    return Err(FlashError::ZeroSize {
                        what: "page_size and num_pages",
                    });
                }
                if block_table.is_empty() || block_table.len() % self.batch() as usize != 0 {
                    return Err(FlashError::ShapeMismatch {
                        tensor: "block_table (a multiple of batch)",
                        expected: self.batch() as u64 * self.pages_per_seq().max(1) as u64,
                        got: block_table.len() as u64,
                    });
                }
                if let Some(&bad) = block_table.iter().find(|&&p| p >= *num_pages) {
                    return Err(FlashError::BadOption {
                        what: "block_table entry",
                        got: format!("{bad} (num_pages {num_pages})"),
                        why: "a page index must be below num_pages",
                    });
                }
            }
            _ => {}
        }
        for b in 0..self.batch() {
            let need = self.cached[b as usize] as u64
                + if self.append_new_kv {
                    self.seq_q(b) as u64
                } else {
                    0
                };
            if need > self.capacity() {
                return Err(FlashError::DeviceLimit {
                    what: "cache capacity per sequence (tokens after the append)",
                    needed: need,
                    limit: self.capacity(),
                });
            }
        }
        if let Some(r) = self.rotary {
            if !self.append_new_kv {
                return Err(FlashError::BadOption {
                    what: "rotary",
                    got: "on".into(),
                    why: "rotary embeddings rotate the new keys: turn append_new_kv on",
                });
            }
            let unit = match r.style {
                RotaryStyle::Interleaved => 4,
                RotaryStyle::HalfSplit => 8,
            };
            if r.dim == 0 || r.dim % unit != 0 || r.dim > self.head_dim {
                return Err(FlashError::BadOption {
                    what: "rotary.dim",
                    got: r.dim.to_string(),
                    why:
                        "a positive multiple of 4 (interleaved) or 8 (half-split), at most head_dim",
                });
            }
            match r.angles {
                RotaryAngles::Theta(theta) if !(theta.is_finite() && theta > 0.0) => {
                    return Err(FlashError::BadOption {
                        what: "rotary theta",
                        got: theta.to_string(),
                        why: "a finite positive base",
                    })
                }
                RotaryAngles::Table { positions } if positions < self.longest_kv() => {
                    return Err(FlashError::BadOption {
                        what: "rotary table positions",
                        got: positions.to_string(),
                        why: "the tables must cover every position of the step (the longest sequence)",
                    })
                }
                _ => {}
            }
        }
        Ok(())
    }
}

/// Most KV splits a plan uses.
pub const MAX_SPLITS: u32 = 256;

/// Which KV-cache attention kernel a plan runs.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, serde::Serialize, serde::Deserialize)]
pub enum DecodeKernel {
    /// `shaders/flash_decode.wgsl`: plain WGSL; each tile passes through workgroup memory between
    /// its scores, softmax and P V phases (two barriers a tile). Runs everywhere.
    Portable,
    /// `shaders/flash_decode_subgroup.wgsl` (needs `SUBGROUP`): the `threads_per_key` lanes of a
    /// key keep it from its scores (summed through subgroup shuffles) to its share of P V, each
    /// lane with its own online softmax: no barrier in the key loop. `threads_v` is unused.
    Subgroup,
}

impl DecodeKernel {
    /// Lower-case name, as reports and `DecodeTilesSpec` write it.
    pub fn name(self) -> &'static str {
        match self {
            DecodeKernel::Portable => "portable",
            DecodeKernel::Subgroup => "subgroup",
        }
    }
}

/// Tile shape of the KV-cache attention kernels.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, serde::Serialize, serde::Deserialize)]
pub struct DecodeTiles {
    /// The kernel these tiles are for.
    pub kernel: DecodeKernel,
    /// Packed query rows ((token, query head of a group) pairs) per workgroup.
    pub block_m: u32,
    /// Keys per tile.
    pub block_n: u32,
    /// Invocations per workgroup (block_n * threads_per_key / keys_per_thread).
    pub threads: u32,
    /// Threads that share one key's dot products.
    pub threads_per_key: u32,
    /// Keys each thread scores per tile (each Q chunk it reads serves that many keys).
    pub keys_per_thread: u32,
    /// Threads along head_dim (in vec4s) while accumulating P V.
    pub threads_v: u32,
}

/// As the decode benchmark and tools print them: portable `BMxBNxTHxTV/TK/KK` (block_m, block_n,
/// threads, threads_v / threads_per_key / keys_per_thread), subgroup `sg:BMxBNxTH/TK/KK`.
impl std::fmt::Display for DecodeTiles {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self.kernel {
            DecodeKernel::Portable => write!(
                f,
                "{}x{}x{}x{}/{}/{}",
                self.block_m,
                self.block_n,
                self.threads,
                self.threads_v,
                self.threads_per_key,
                self.keys_per_thread
            ),
            DecodeKernel::Subgroup => write!(
                f,
                "sg:{}x{}x{}/{}/{}",
                self.block_m,
                self.block_n,
                self.threads,
                self.threads_per_key,
                self.keys_per_thread
            ),
        }
    }
}

/// KV-cache tiles as benchmarks and tools ask for them: a kernel (`None`: the plan's choice) and
/// knobs that replace that kernel's default tiles' ([`default_tiles`]; `None`: keep the default).
///
/// Written `plan`, `portable`, `subgroup` (that kernel's default tiles),
/// `THREADS/THREADS_PER_KEY/KEYS_PER_THREAD/THREADS_V` (portable kernel, e.g. `128/4/1/16`) or
/// `sg:THREADS/THREADS_PER_KEY/KEYS_PER_THREAD` (subgroup kernel, e.g. `sg:64/16/4`).
///
/// ```
/// use wgpu_flash_attn::kvcache::{DecodeKernel, DecodeTilesSpec};
/// let spec: DecodeTilesSpec = "sg:64/16/8".parse().unwrap();
/// assert_eq!(spec.kernel, Some(DecodeKernel::Subgroup));
/// assert_eq!((spec.threads, spec.keys_per_thread, spec.threads_v), (Some(64), Some(8), None));
/// assert_eq!("plan".parse::<DecodeTilesSpec>().unwrap(), DecodeTilesSpec::default());
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct DecodeTilesSpec {
    /// The kernel; `None`: the plan's.
    pub kernel: Option<DecodeKernel>,
    /// Invocations per workgroup.
    pub threads: Option<u32>,
    /// Threads (portable) or lanes (subgroup) that share one key.
    pub threads_per_key: Option<u32>,
    /// Keys each thread scores per tile.
    pub keys_per_thread: Option<u32>,
    /// Threads along head_dim in P V (portable kernel).
    pub threads_v: Option<u32>,
}

/// The forms a [`DecodeTilesSpec`] is written in.
const SPEC_FORMS: &str = "want plan, portable, subgroup, THREADS/THREADS_PER_KEY/KEYS_PER_THREAD/\
                          THREADS_V or sg:THREADS/THREADS_PER_KEY/KEYS_PER_THREAD";

impl std::str::FromStr for DecodeTilesSpec {
    type Err = FlashError;

    fn from_str(spec: &str) -> Result<DecodeTilesSpec> {
        let kernel_only = |kernel| DecodeTilesSpec {
            kernel,
            ..Default::default()
        };
        if spec == "plan" {
            return Ok(kernel_only(None));
        }
        for kernel in [DecodeKernel::Portable, DecodeKernel::Subgroup] {
            if spec == kernel.name() {
                return Ok(kernel_only(Some(kernel)));
            }
        }
        let bad = || FlashError::BadOption {
            what: "KV-cache tiles",
            got: spec.into(),
            why: SPEC_FORMS,
        };
        let (kernel, knobs) = match spec.strip_prefix("sg:") {
            Some(rest) => (DecodeKernel::Subgroup, rest),
            None => (DecodeKernel::Portable, spec),
        };
        let n: Vec<u32> = knobs
            .split('/')
            .map(|x| x.trim().parse::<u32>().map_err(|_| bad()))
            .collect::<Result<_>>()?;
        let threads_v = match (kernel, &n[..]) {
            (DecodeKernel::Portable, &[_, _, _, v]) => Some(v),
            (DecodeKernel::Subgroup, &[_, _, _]) => None,
            _ => return Err(bad()),
        };
        Ok(DecodeTilesSpec {
            kernel: Some(kernel),
            threads: Some(n[0]),
            threads_per_key: Some(n[1]),
            keys_per_thread: Some(n[2]),
            threads_v,
        })
    }
}

impl DecodeTilesSpec {
    /// The tiles for `problem` on a device: `None` where the spec asks for nothing (the plan's
    /// own choice), else the kernel's default tiles (the plan's kernel when none is named) with
    /// the given knobs in place; [`plan_with`] checks them. A knob changes only itself: fewer
    /// lanes per key keep the default keys per lane, so each lane then holds more of each key
    /// (name `keys_per_thread` too to keep a lane's registers where they were).
    pub fn resolve(
        &self,
        problem: &KvCacheAttention,
        caps: &DeviceCaps,
    ) -> Result<Option<DecodeTiles>> {
        if *self == DecodeTilesSpec::default() {
            return Ok(None);
        }
        let base = match self.kernel {
            Some(kernel) => default_tiles(problem, kernel, caps)?,
            None => plan(problem, caps)?.tiles,
        };
        let threads = self.threads.unwrap_or(base.threads);
        let threads_per_key = self.threads_per_key.unwrap_or(base.threads_per_key);
        let keys_per_thread = self.keys_per_thread.unwrap_or(base.keys_per_thread);
        Ok(Some(DecodeTiles {
            threads,
            threads_per_key,
            keys_per_thread,
            block_n: threads * keys_per_thread / threads_per_key.max(1),
            threads_v: self.threads_v.unwrap_or(base.threads_v),
            ..base
        }))
    }
}

impl DecodeTiles {
    /// Bytes of workgroup memory. Portable: Q rows (f32), the score parts (one word of padding a
    /// row), the probability tile, the rescale factors and the merge state. Subgroup: the rows of
    /// O being merged, each key stream's max and sum, and two words for merging the splits.
    pub fn workgroup_bytes(&self, head_dim: u32) -> u32 {
        if self.kernel == DecodeKernel::Subgroup {
            let streams = self.threads / self.threads_per_key;
            return self.block_m * (4 * head_dim + 8 * streams) + 8;
        }
        let key_groups = self.threads / self.threads_v;
        self.block_m
            * (4 * head_dim
                + 4 * self.block_n * self.threads_per_key
                + 4
                + 4 * self.block_n
                + 12 * key_groups)
    }
}

/// Whether the key lanes of subgroup-kernel tiles sit inside one subgroup on this device.
fn subgroup_keys_fit(t: &DecodeTiles, caps: &DeviceCaps) -> bool {
    caps.subgroup_sizes.is_some_and(|(min, max)| {
        t.threads_per_key.is_power_of_two() && t.threads_per_key <= min && t.threads % max == 0
    })
}

fn check_tiles(t: &DecodeTiles, head_dim: u32, caps: &DeviceCaps) -> Result<()> {
    let pow2 = |x: u32| x.is_power_of_two();
    if t.kernel == DecodeKernel::Subgroup {
        if !(t.block_m.is_power_of_two()
            && t.block_m <= t.threads_per_key
            && t.keys_per_thread >= 1
            && t.threads % t.threads_per_key == 0
            && t.threads * t.keys_per_thread == t.block_n * t.threads_per_key)
        {
            return Err(FlashError::BadOption {
                what: "KV-cache tiles (subgroup kernel)",
                got: format!("{t:?}"),
                why: "block_m a power of two no larger than threads_per_key (each lane finishes one row), threads a multiple of threads_per_key and threads * keys_per_thread = block_n * threads_per_key",
            });
        }
        if caps.subgroup_sizes.is_none() || caps.backend == BROWSER_BACKEND {
            return Err(FlashError::MissingFeature {
                what: "the subgroup KV-cache kernel",
                feature: "SUBGROUP outside the browser",
            });
        }
        // The lanes of a key must be adjacent lanes of one subgroup whatever size the device
        // picks, and the workgroup whole subgroups.
        if !subgroup_keys_fit(t, caps) {
            return Err(FlashError::BadOption {
                what: "KV-cache tiles (subgroup kernel)",
                got: format!("{t:?} on subgroups of {:?}", caps.subgroup_sizes),
                why: "threads_per_key a power of two no larger than the smallest subgroup size, threads a multiple of the largest",
            });
        }
    } else if !(t.block_m >= 1
        && pow2(t.threads_per_key)
        && pow2(t.threads_v)
        && t.keys_per_thread >= 1
        && t.threads * t.keys_per_thread == t.block_n * t.threads_per_key
        && t.threads % t.threads_v == 0
        && t.threads / t.threads_v >= 1
        && t.block_n % (t.threads / t.threads_v) == 0)
    {
        return Err(FlashError::BadOption {
            what: "KV-cache tiles",
            got: format!("{t:?}"),
            why: "threads * keys_per_thread = block_n * threads_per_key, threads_per_key and threads_v powers of two, threads_v dividing threads and threads / threads_v dividing block_n",
        });
    }
    let limit = caps
        .max_invocations_per_workgroup
        .min(caps.max_workgroup_size_x);
    if t.threads > limit {
        return Err(FlashError::DeviceLimit {
            what: "invocations per workgroup (KV-cache kernel)",
            needed: t.threads as u64,
            limit: limit as u64,
        });
    }
    let bytes = t.workgroup_bytes(head_dim);
    if bytes > caps.max_workgroup_storage_bytes {
        return Err(FlashError::DeviceLimit {
            what: "max_compute_workgroup_storage_size (bytes, KV-cache kernel)",
            needed: bytes as u64,
            limit: caps.max_workgroup_storage_bytes as u64,
        });
    }
    Ok(())
}

/// Tiles for `rows` packed query rows per sequence (query heads per KV head times the longest
/// query count): the subgroup kernel where the device has subgroups (outside the browser) and its
/// tiles keep enough rows together; the portable kernel elsewhere. Lanes per key are capped by
/// the smallest subgroup size the device reports, which for wgpu's Metal backend and Vulkan
/// drivers without subgroup size control is a placeholder of 4: at large head_dim that leaves one
/// row per workgroup, K and V read once per query head. So with that placeholder the subgroup
/// tiles must keep min(rows, 4) rows; with a real smallest size (8 or more) min(rows, 2) do: on
/// lavapipe (subgroups of 8) at d = 128 its 2-row tiles ran 2.4-4x faster than the portable
/// kernel's 4-row ones (BENCHMARKS.md, sixth round, "The KV-cache kernel on 8-wide subgroups"),
/// and 3.7-6x with one K/V register set (eighth round).
fn choose_tiles(problem: &KvCacheAttention, rows: u32, caps: &DeviceCaps) -> Result<DecodeTiles> {
    let smallest_real = caps.subgroup_sizes.is_some_and(|(lo, _)| lo >= 8);
    let enough = rows
        .next_power_of_two()
        .min(if smallest_real { 2 } else { 4 });
    match subgroup_tiles(problem, rows, caps) {
        Some(t) if t.block_m >= enough => Ok(t),
        _ => portable_tiles(problem.head_dim, rows, caps),
    }
}

/// Bytes of a tile's K (and as many of its V) that a lane of the subgroup KV-cache kernel holds:
/// 8 keys of 16 bytes at d = 128 in f16. On the H200 that kernel then takes 128 registers, so 8
/// workgroups of 64 share an SM ([`workgroups_per_unit`]).
const LANE_KV_BYTES: u32 = 128;

/// Lanes per key of the subgroup KV-cache kernel, at least (where the subgroup and head_dim / 4
/// allow): one load of each lane then reads, across a key's lanes, 128 contiguous bytes of its
/// row at d = 128 in f16 (a whole cache line) rather than 64, which is the likely reason that 8
/// lanes beat 4 on the H200 (below).
const MIN_KEY_LANES: u32 = 8;

/// Subgroup-kernel tiles: 64 threads (or one subgroup of the largest size); up to 8 rows per
/// workgroup, each lane holding at most 8 vec4s of Q and 8 of O (its chunks of the block's rows),
/// with as few lanes per key (so as few shuffles) as give that, but at least [`MIN_KEY_LANES`];
/// where the smallest subgroup is too small for that, one row per workgroup with as many lanes
/// per key as it allows. Keys per lane and tile: as many as keep a lane's share of a tile's K
/// (and of its V) within [`LANE_KV_BYTES`], at least 1 and at most 8, all loaded at once; so the
/// bytes in flight per lane, not the keys, are the same across head dims, row counts and types.
/// On the H200 (d = 128, f16):
/// - 4 rows: 64 threads with 4 keys per lane beat 128 threads with 2 by 20%
///   (bench-results/h200-2026-11-30-session4); one register set of 8 keys per lane took 12-14%
///   less time than two sets of 4 and 8-9% less than one set of 4 (session8, call1). At 32k
///   (session9, call2): 16 lanes per key with 8 keys each 0.277 ms; 4 keys 0.303; 128 threads
///   0.285; 32 lanes per key 0.467-0.475.
/// - 1 row (plain multi-head attention, batch 4, 32 heads, 32k, 8 splits; medians of calls 1
///   and 2 of session9): 8 lanes with 4 keys each took 0.482-0.492 ms, level with PyTorch's
///   FlashAttention-2 (0.483-0.492) and cuDNN (0.479-0.487); 4 lanes with 2 keys 0.569-0.592.
///
/// The lane minimum also retiles steps that were not timed: at d <= 64, one row per KV head (d =
/// 64 had 2 lanes), two rows at d = 64 and four at d = 32 (4 lanes), f32 alike. Keys of fewer than
/// 8 head_dim chunks (d < 32) take the largest power of two of lanes that their chunks fill.
fn subgroup_tiles(problem: &KvCacheAttention, rows: u32, caps: &DeviceCaps) -> Option<DecodeTiles> {
    let (min_sg, max_sg) = caps.subgroup_sizes?;
    if caps.backend == BROWSER_BACKEND {
        return None;
    }
    let head_dim = problem.head_dim;
    let d4 = head_dim / 4;
    let threads = 64.max(max_sg);
    let lanes = min_sg.min(32);
    let mut block_m = rows.next_power_of_two().min(8);
    loop {
        // At least one lane per row: each lane finishes one row's softmax.
        // Lanes per key are a power of two: at most head_dim / 4 of them (rounded down) when
        // fewer than MIN_KEY_LANES chunks make a key.
        let mut threads_per_key = block_m.max(MIN_KEY_LANES.min(1 << d4.ilog2())).min(lanes);
        while block_m * d4.div_ceil(threads_per_key) > 8 && threads_per_key < lanes {
            threads_per_key *= 2;
        }
        let fits = block_m <= threads_per_key && block_m * d4.div_ceil(threads_per_key) <= 8;
        let key_bytes = d4.div_ceil(threads_per_key) * 4 * problem.dtype.size() as u32;
        let keys_per_thread = 1 << (LANE_KV_BYTES / key_bytes).clamp(1, 8).ilog2();
        let t = DecodeTiles {
            kernel: DecodeKernel::Subgroup,
            block_m,
            block_n: threads / threads_per_key * keys_per_thread,
            threads,
            threads_per_key,
            keys_per_thread,
            threads_v: 0,
        };
        if fits || block_m == 1 {
            return check_tiles(&t, head_dim, caps).is_ok().then_some(t);
        }
        block_m /= 2;
    }
}

/// Portable-kernel tiles: 128 threads, 4 per key while scoring (32 keys per tile). Up to 16 rows
/// per workgroup; threads_v (threads along head_dim in P V) makes each thread hold about 8
/// accumulator vec4s, at most 16: fewer threads along head_dim mean more key groups, and so more
/// (row, key group) softmax states finished in parallel. One key per thread while scoring.
fn portable_tiles(head_dim: u32, rows: u32, caps: &DeviceCaps) -> Result<DecodeTiles> {
    let d4 = head_dim / 4;
    let threads = 128.min(
        caps.max_invocations_per_workgroup
            .min(caps.max_workgroup_size_x),
    );
    if threads < 16 {
        return Err(FlashError::DeviceLimit {
            what: "invocations per workgroup (the KV-cache kernel needs 16)",
            needed: 16,
            limit: threads as u64,
        });
    }
    let threads_per_key = 4;
    let block_n = threads / threads_per_key;
    let mut block_m = rows.next_power_of_two().min(16);
    loop {
        let threads_v = (d4 * block_m)
            .div_ceil(8)
            .next_power_of_two()
            .clamp(threads_per_key, 32);
        let t = DecodeTiles {
            kernel: DecodeKernel::Portable,
            block_m,
            block_n,
            threads,
            threads_per_key,
            keys_per_thread: 1,
            threads_v,
        };
        let fits = block_m * d4.div_ceil(threads_v) <= 16
            && t.workgroup_bytes(head_dim) <= caps.max_workgroup_storage_bytes;
        if fits || block_m == 1 {
            check_tiles(&t, head_dim, caps)?;
            return Ok(t);
        }
        block_m /= 2;
    }
}

/// Groups consecutive sequences into windows of the caches that fit one binding.
fn cache_windows(
    p: &KvCacheAttention,
    work: &[(u32, u32)],
    caps: &DeviceCaps,
) -> Result<Vec<CacheWindow>> {
    let row_bytes = p.heads_kv as u64 * p.head_dim as u64 * p.dtype.size();
    let (page_tokens, total_pages) = match &p.layout {
        CacheLayout::Contiguous { capacity } => (*capacity, p.batch()),
        CacheLayout::Paged {
            page_size,
            num_pages,
            ..
        } => (*page_size, *num_pages),
    };
    let page_bytes = page_tokens as u64 * row_bytes;
    // A binding starts at an aligned offset at or below the window.
    let usable = caps
        .max_storage_buffer_binding_size
        .saturating_sub(caps.min_storage_buffer_offset_alignment as u64);
    let first_work = |b: u32| work.partition_point(|w| w.0 < b) as u32;
    if total_pages as u64 * page_bytes <= usable {
        return Ok(vec![CacheWindow {
            sequences: (0, p.batch()),
            work: (0, work.len() as u32),
            first_page: 0,
            pages: total_pages,
        }]);
    }
    // Pages each sequence touches: its cache entry, or its block table row up to kv_len.
    let span = |b: u32| -> Option<(u32, u32)> {
        match &p.layout {
            CacheLayout::Contiguous { .. } => Some((b, b)),
            CacheLayout::Paged {
                page_size,
                block_table,
                ..
            } => {
                let used = p.kv_len(b).div_ceil(*page_size) as usize;
                let row = &block_table[(b * p.pages_per_seq()) as usize..][..used];
                Some((*row.iter().min()?, *row.iter().max()?))
            }
        }
    };
    // Balance the windows: as many sequences in each as the fewest windows would need.
    let fewest = (total_pages as u64 * page_bytes).div_ceil(usable.max(1));
    let per_window = (p.batch() as u64).div_ceil(fewest.max(1)) as u32;
    let mut windows: Vec<CacheWindow> = Vec::new();
    let mut open: Option<(u32, u32, u32)> = None; // (first sequence, lo page, hi page)
    for b in 0..p.batch() {
        let Some((lo, hi)) = span(b) else { continue };
        if (hi - lo + 1) as u64 * page_bytes > usable {
            return Err(FlashError::DeviceLimit {
                what: "max_storage_buffer_binding_size (bytes between one sequence's first and last cache page)",
                needed: (hi - lo + 1) as u64 * page_bytes,
                limit: usable,
            });
        }
        open = match open {
            Some((b0, l, h))
                if b - b0 < per_window
                    && (h.max(hi) - l.min(lo) + 1) as u64 * page_bytes <= usable =>
            {
                Some((b0, l.min(lo), h.max(hi)))
            }
            Some((b0, l, h)) => {
                windows.push(CacheWindow {
                    sequences: (b0, b),
                    work: (first_work(b0), first_work(b)),
                    first_page: l,
                    pages: h - l + 1,
                });
                Some((b, lo, hi))
            }
            None => Some((windows.last().map_or(0, |w| w.sequences.1), lo, hi)),
        };
    }
    let (b0, l, h) = open.unwrap_or((0, 0, 0)); // no sequence reads a page: any window will do
    windows.push(CacheWindow {
        sequences: (b0, p.batch()),
        work: (first_work(b0), work.len() as u32),
        first_page: l,
        pages: h - l + 1,
    });
    Ok(windows)
}

/// A validated, device-specific way to run one KV-cache step. Pure data, made only by the planner
/// ([`plan`], [`plan_with`]); it may gain fields: `#[non_exhaustive]`.
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub struct KvCachePlan {
    /// The step this plan was made for.
    pub problem: KvCacheAttention,
    /// How tensors are stored and read.
    pub storage: Storage,
    /// Tile sizes.
    pub tiles: DecodeTiles,
    /// KV splits per work item (1: nothing to merge).
    pub splits: u32,
    /// With splits: whether the last workgroup to finish of each work item and KV head merges
    /// the partial states in the attention kernel, rather than a combine pass after it. The
    /// subgroup kernel does, in a step of one dispatch (one window) whose splits cover at least
    /// 1024 keys of the longest sequence (`MERGE_MIN_KEYS_PER_SPLIT` says why).
    pub merge_in_kernel: bool,
    /// Work items: (sequence, block of `block_m` packed query rows).
    pub work: Vec<(u32, u32)>,
    /// Sequences whose attention runs through the forward kernels instead (prefill chunks; see
    /// [`KvCacheAttention::prefill_route`]), each with the plan of its
    /// [`KvCacheAttention::forward_problem`].
    pub forward: Vec<(u32, Plan)>,
    /// Dispatches, each over a window of the caches that fits one binding (usually one).
    pub windows: Vec<CacheWindow>,
    /// Attention workgroups in x (splits times KV heads, the heads varying fastest), y (work items
    /// of the largest window), z (1).
    pub grid: [u32; 3],
    /// Workgroup memory of the attention kernel, bytes.
    pub workgroup_bytes: u32,
    /// Device memory for partial states (splits > 1) and rotated queries (rotary), bytes.
    pub scratch_bytes: u64,
}

impl KvCachePlan {
    /// Whether sequence `b` runs through the forward kernels ([`KvCachePlan::forward`]).
    pub fn is_forward(&self, b: u32) -> bool {
        routed(&self.forward, b)
    }

    /// Query tokens of the sequences the KV-cache kernel runs: those with partial states when it
    /// splits (routed chunks have none).
    pub fn partial_tokens(&self) -> u32 {
        (0..self.problem.batch())
            .filter(|&b| !self.is_forward(b))
            .map(|b| self.problem.seq_q(b))
            .sum()
    }

    /// Bytes of the partial states buffer (0 with one split): O and LSE of every split for the
    /// rows of [`KvCachePlan::partial_tokens`], and when merging in the kernel, a counter per
    /// work item and KV head.
    pub fn partial_bytes(&self) -> u64 {
        if self.splits > 1 {
            let rows = self.partial_tokens() as u64 * self.problem.heads_q as u64;
            let counters = if self.merge_in_kernel {
                self.work.len() as u64 * self.problem.heads_kv as u64
            } else {
                0
            };
            (self.splits as u64 * rows * (self.problem.head_dim as u64 + 1) + counters) * 4
        } else {
            0
        }
    }

    /// Bytes of the rotated-query buffer (0 without rotary).
    pub fn rotated_q_bytes(&self) -> u64 {
        if self.problem.rotary.is_some() {
            (self.problem.q_len() * self.problem.dtype.size()).next_multiple_of(4)
        } else {
            0
        }
    }
}

/// A rough count of the device's compute units (SMs, CUs, cores), from its name, for choosing how
/// many workgroups to launch; 0 when unknown (the plan then assumes a mid-size GPU).
pub fn estimate_compute_units(adapter_name: &str) -> u32 {
    let name = adapter_name.to_ascii_lowercase();
    const TABLE: &[(&str, u32)] = &[
        ("h200", 132),
        ("h100", 132),
        ("gh200", 132),
        ("a100", 108),
        ("l40", 142),
        ("4090", 128),
        ("3090", 82),
        ("a10", 72),
        ("mi300", 304),
        ("llvmpipe", 8),
        ("swiftshader", 8),
    ];
    TABLE
        .iter()
        .find(|(key, _)| name.contains(key))
        .map_or(0, |&(_, n)| n)
}

/// Workgroups the plan aims for per compute unit and dispatch, at most, per kernel: one whole wave
/// of resident workgroups, so that no last wave runs partly filled. Eight workgroups of the
/// subgroup kernel are resident per SM of the H200 (d = 128, f16: 128 registers): there, batch 8
/// x 8 KV heads at KV 32k takes 16 splits (0.97 waves): 0.272 ms, against 0.289 with 12 and 0.315
/// with 24 (1.45 waves); KV 128k runs as two dispatches of 4 sequences (the cache exceeds one
/// binding) and takes 33 splits in each (1 wave): 1.019 ms, against 1.085 with 24 and 1.160 with
/// 48 (bench-results/h200-2026-11-30-session8, call1). Half a wave was 50% slower (session5). The
/// portable kernel keeps the 6 the subgroup kernel had before (its own count was not measured).
/// On other GPUs, and for other head dims and types, the resident count differs and this is a
/// guess: `num_splits` forces the count, and [`crate::autotune::tune_kv_cache`] measures the
/// counts around it.
fn workgroups_per_unit(kernel: DecodeKernel) -> u32 {
    match kernel {
        DecodeKernel::Subgroup => 8,
        DecodeKernel::Portable => 6,
    }
}
/// A split covers at least this many keys (shorter ones cost more in the combine than they save).
const MIN_KEYS_PER_SPLIT: u32 = 256;
/// The subgroup kernel merges its own splits ([`KvCachePlan::merge_in_kernel`]) only where they
/// are this long. On the H200 (batch 8, 32/8 heads, d = 128, f16; bench-results/
/// h200-2026-11-30-session10), against the combine pass: at 1024 and 2048 keys per split (KV 16k
/// and 32k, 16 splits) merging in the kernel was 0.1-2.1% faster with pages and, contiguous,
/// from 1.7% slower to 3% faster call to call; at 256 keys per split (KV 1k with 4 splits, 4k
/// with 16) it was 2-7% slower. Nothing between 256 and 1024 was measured.
const MERGE_MIN_KEYS_PER_SPLIT: u32 = 1024;
/// Workgroups per dispatch the plan aims for where the device's compute units are unknown: a
/// guess that fills a large GPU (an H200 holds 1056 of the subgroup kernel's at once), at the cost
/// of a partly filled last wave on a small one.
const UNKNOWN_DEVICE_WORKGROUPS: u64 = 512;

/// A range of sequences whose cache pages (contiguous: cache entries) lie in one window of the
/// cache buffers small enough for one binding; the step runs one dispatch per window.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct CacheWindow {
    /// Sequences `start..end`.
    pub sequences: (u32, u32),
    /// Work items `start..end` (those of these sequences).
    pub work: (u32, u32),
    /// First page (contiguous: first cache entry) the window binds.
    pub first_page: u32,
    /// Pages (cache entries) it binds.
    pub pages: u32,
}

/// The tiles a plan would choose for this step if it ran `kernel` (an error where the device
/// cannot run it): a starting point for forcing tiles with [`plan_with`].
pub fn default_tiles(
    problem: &KvCacheAttention,
    kernel: DecodeKernel,
    caps: &DeviceCaps,
) -> Result<DecodeTiles> {
    problem.validate()?;
    // As the plan counts them: without the sequences that run through the forward kernels.
    let forward = forward_prefill(problem, caps);
    let rows = packed_rows(problem, |&b| !routed(&forward, b));
    match kernel {
        DecodeKernel::Portable => portable_tiles(problem.head_dim, rows, caps),
        DecodeKernel::Subgroup => {
            subgroup_tiles(problem, rows, caps).ok_or(FlashError::MissingFeature {
                what: "the subgroup KV-cache kernel",
                feature: "SUBGROUP outside the browser, with subgroup sizes that are \
                              powers of two and tiles within the device's limits",
            })
        }
    }
}

/// Packed query rows of the longest of the sequences `of` takes: query heads per KV head times
/// its query tokens.
fn packed_rows(problem: &KvCacheAttention, of: impl Fn(&u32) -> bool) -> u32 {
    let max_q = (0..problem.batch())
        .filter(of)
        .map(|b| problem.seq_q(b))
        .max()
        .unwrap_or(1);
    problem.heads_q / problem.heads_kv * max_q
}

/// Whether sequence `b` is among the `forward` ones ([`KvCachePlan::forward`]).
fn routed(forward: &[(u32, Plan)], b: u32) -> bool {
    forward.iter().any(|&(f, _)| f == b)
}

/// The sequences of a step that run through the forward kernels, with their forward plans:
/// prefill chunks, as the step's [`PrefillRoute`] says and when no LSE is asked for; each only
/// where the forward kernels can plan it (its K and V within one binding, among the rest).
fn forward_prefill(problem: &KvCacheAttention, caps: &DeviceCaps) -> Vec<(u32, Plan)> {
    // Auto routes to the tensor cores only: without them, nothing to plan.
    let auto_without = problem.prefill_route == PrefillRoute::Auto && !caps.coop_matrix_f16;
    if problem.prefill_route == PrefillRoute::KvCache || problem.with_lse || auto_without {
        return Vec::new();
    }
    (0..problem.batch())
        .filter(|&b| problem.seq_q(b) >= FORWARD_PREFILL_TOKENS)
        .filter_map(|b| {
            let plan = crate::plan::plan(&problem.forward_problem(b), caps).ok()?;
            let take = match problem.prefill_route {
                PrefillRoute::Auto => plan.kernel == crate::plan::Kernel::ForwardCoopMatrix,
                _ => true,
            };
            take.then_some((b, plan))
        })
        .collect()
}

/// Plans a KV-cache step for a device.
pub fn plan(problem: &KvCacheAttention, caps: &DeviceCaps) -> Result<KvCachePlan> {
    plan_with(problem, caps, None)
}

/// Plans a KV-cache step with the tiles forced (still checked against the device).
pub fn plan_with(
    problem: &KvCacheAttention,
    caps: &DeviceCaps,
    tiles: Option<DecodeTiles>,
) -> Result<KvCachePlan> {
    problem.validate()?;
    let storage = storage_for(problem.dtype, caps, false);
    let group = problem.heads_q / problem.heads_kv;
    // The sequences that run through the forward kernels first: the KV-cache kernel's tiles, work
    // and splits are for the others.
    let forward = forward_prefill(problem, caps);
    let here = |&b: &u32| !routed(&forward, b);
    let tiles = match tiles {
        Some(t) => {
            check_tiles(&t, problem.head_dim, caps)?;
            t
        }
        None => choose_tiles(problem, packed_rows(problem, here), caps)?,
    };
    let block_m = tiles.block_m;
    let workgroup_bytes = tiles.workgroup_bytes(problem.head_dim);
    let mut work = Vec::new();
    for b in (0..problem.batch()).filter(here) {
        for block in 0..(problem.seq_q(b) * group).div_ceil(block_m) {
            work.push((b, block));
        }
    }
    let windows = cache_windows(problem, &work, caps)?;
    let longest_kv = (0..problem.batch())
        .filter(here)
        .map(|b| problem.kv_len(b))
        .max()
        .unwrap_or(0);
    // Workgroups of the largest dispatch, before splitting.
    let blocks = windows
        .iter()
        .map(|w| (w.work.1 - w.work.0) as u64)
        .max()
        .unwrap_or(0)
        * problem.heads_kv as u64;
    let splits = match problem.num_splits {
        Some(n) => n,
        None => {
            let target = match caps.compute_units {
                0 => UNKNOWN_DEVICE_WORKGROUPS,
                n => n as u64 * workgroups_per_unit(tiles.kernel) as u64,
            };
            let by_keys = (longest_kv / MIN_KEYS_PER_SPLIT).max(1) as u64;
            let splits = (target / blocks.max(1))
                .max(1)
                .min(by_keys)
                .min(MAX_SPLITS as u64);
            // Splits take tiles in turn, so the slowest has ceil(tiles / splits) of them: keep
            // that, with as few splits as give it (1024 tiles: 64 splits of 16, not 66 of 15-16),
            // which saves partial states to combine.
            let tiles = (longest_kv.div_ceil(tiles.block_n) as u64).max(1);
            tiles.div_ceil(tiles.div_ceil(splits)) as u32
        }
    };
    // Every sequence through the forward kernels: nothing to split or combine.
    let splits = if work.is_empty() { 1 } else { splits };
    let grid = [
        splits as u64 * problem.heads_kv as u64,
        windows
            .iter()
            .map(|w| w.work.1 - w.work.0)
            .max()
            .unwrap_or(0) as u64,
        1,
    ];
    for (what, n) in [
        ("workgroups in x (KV splits times heads_kv)", grid[0]),
        ("workgroups in y (query blocks of one dispatch)", grid[1]),
    ] {
        if n > caps.max_workgroups_per_dimension as u64 {
            return Err(FlashError::DeviceLimit {
                what,
                needed: n,
                limit: caps.max_workgroups_per_dimension as u64,
            });
        }
    }
    let grid = grid.map(|n| n as u32);
    // Q and O are bound whole (from an aligned offset at or below theirs); the caches by window.
    let bytes =
        problem.q_len() * problem.dtype.size() + caps.min_storage_buffer_offset_alignment as u64;
    if bytes > caps.max_storage_buffer_binding_size {
        return Err(FlashError::DeviceLimit {
            what: "max_storage_buffer_binding_size (bytes of q or out)",
            needed: bytes,
            limit: caps.max_storage_buffer_binding_size,
        });
    }
    let mut plan = KvCachePlan {
        problem: problem.clone(),
        storage,
        tiles,
        splits,
        // Several windows keep one pass after them all: merging on the tail of each window's
        // dispatch was 0-0.9% slower at KV 128k (two windows) with pages on the H200. (The
        // kernel finds its counters for one dispatch only.)
        merge_in_kernel: splits > 1
            && tiles.kernel == DecodeKernel::Subgroup
            && windows.len() == 1
            && longest_kv / splits >= MERGE_MIN_KEYS_PER_SPLIT,
        work,
        forward,
        windows,
        grid,
        workgroup_bytes,
        scratch_bytes: 0,
    };
    let partial = plan.partial_bytes();
    if partial
        > caps
            .max_storage_buffer_binding_size
            .min(u32::MAX as u64 * 4)
    {
        return Err(FlashError::DeviceLimit {
            what: "bytes of the split-KV partial states (fewer splits would fit)",
            needed: partial,
            limit: caps.max_storage_buffer_binding_size,
        });
    }
    plan.scratch_bytes = partial + plan.rotated_q_bytes();
    Ok(plan)
}

/// Merges attention states computed over disjoint sets of keys (on other devices, other caches,
/// or other splits), by their log-sum-exp: `LSE = log(sum_s exp(lse_s))` and
/// `O = sum_s exp(lse_s - LSE) * O_s` for each row.
///
/// Each part is `(O_s, lse_s)`: O_s is normalised over its own keys, `rows * head_dim` values laid
/// out row by row, lse_s holds `rows` natural-log values (-inf for a part that saw no key of that
/// row). Returns the merged (O, LSE); a row no part saw gets O = 0 and LSE = -inf. The GPU
/// version is [`crate::kernels::decode::MergeStates`].
///
/// ```
/// use wgpu_flash_attn::kvcache::merge_states;
/// // One row, head_dim 2: two halves of the keys with equal mass average their outputs.
/// let (o, lse) = merge_states(2, &[(&[1.0, 0.0], &[0.5]), (&[0.0, 1.0], &[0.5])]).unwrap();
/// assert_eq!(o, vec![0.5, 0.5]);
/// assert!((lse[0] - (0.5 + 2f32.ln())).abs() < 1e-6);
/// ```
pub fn merge_states(head_dim: usize, parts: &[(&[f32], &[f32])]) -> Result<(Vec<f32>, Vec<f32>)> {
    let rows = parts.first().map_or(0, |p| p.1.len());
    for (o, lse) in parts {
        if lse.len() != rows || o.len() != rows * head_dim {
            return Err(FlashError::ShapeMismatch {
                tensor: "merge_states part (rows * head_dim outputs, rows LSEs)",
                expected: (rows * head_dim) as u64,
                got: o.len() as u64,
            });
        }
    }
    let mut out = vec![0.0f32; rows * head_dim];
    let mut lse_out = vec![f32::NEG_INFINITY; rows];
    for r in 0..rows {
        let m = parts
            .iter()
            .map(|p| p.1[r])
            .fold(f32::NEG_INFINITY, f32::max);
        if m == f32::NEG_INFINITY {
            continue;
        }
        let weights: Vec<f64> = parts.iter().map(|p| ((p.1[r] - m) as f64).exp()).collect();
        let sum: f64 = weights.iter().sum();
        for (p, w) in parts.iter().zip(&weights) {
            if *w == 0.0 {
                continue;
            }
            for c in 0..head_dim {
                out[r * head_dim + c] += (w / sum * p.0[r * head_dim + c] as f64) as f32;
            }
        }
        lse_out[r] = m + sum.ln() as f32;
    }
    Ok((out, lse_out))
}
