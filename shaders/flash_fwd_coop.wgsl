// FlashAttention forward, tensor-core tier: Q K^T and P V on the matrix units through cooperative
// matrices (f16 inputs, f32 accumulation), the online softmax on the lanes.
//
// One workgroup of NS subgroups owns BM = MR * NS query rows of one (batch, query head); subgroup s
// owns rows MR s .. MR s + MR - 1, as R16 blocks of 16 (MR = 16 R16). Its Q rows stay in registers
// as R16 * D / 16 fragments; K and V tiles of BN keys are staged in workgroup memory (f16) and shared
// by all subgroups. Each K or V fragment read from workgroup memory feeds R16 products, which is
// why a subgroup may own 32 rows: reading fragments is what bounds this kernel. For each tile a
// subgroup computes its MR x BN scores as fragments, stores them to its own block of workgroup
// memory, where its lanes apply the masks, update the running max and sum and write the
// probabilities P as f16; then O (MR x D, R16 * D / 16 accumulator fragments) += P V.
//
// ELEMENTS (where the plan has probed the device): the scores never leave registers. WGSL cannot
// reach a fragment's elements, so the kernel calls stub functions (coop_get_c, coop_set_a, ...)
// that the host turns into SPIR-V element access (src/kernels/spirv_elements.rs) before passing
// the module through to the Vulkan driver. Each lane then masks and exponentiates its own elements
// of the S fragments, reduces row maxima and sums with the 3 other lanes of its rows, and builds
// the P fragments element by element; the row rescale of O, and at the end its scaling by 1 / l
// and its write-out, also happen in registers. That drops both round trips through workgroup
// memory and the subgroup barriers between the stages, and frees the room for longer key tiles
// (bench-results/h200-2026-12-01-session13, call 4: 41% / 32% faster at d = 128, 24-113% by head
// dim and mask). Which (row, column) each element is comes from probe_elements at the end of
// this file, run once per device.
//
// Without ELEMENTS, cooperative matrices are opaque: their rows cannot be rescaled in
// registers. So the running max is only moved when a row's max grows by more than 2^THRESH (in
// exp2 units); until then P stays below 2^THRESH, which f16 holds exactly as well as values
// below 1. When any row must move, its subgroup takes a slow path that scales O through
// workgroup memory; after the first few tiles this is rare. With ELEMENTS O is scaled in
// registers, and with RESCALE_ALWAYS every tile against the exact running max: the rare branch
// saves nothing there, since on its skipping path the driver's compiler copies all of O between
// registers (bench-results/h200-2026-12-01-session14; src/plan.rs says where each form runs).
// The final normalisation uses the max actually subtracted, so the result is exact either way.
//
// Per key tile: the tile waiting in registers is stored to workgroup memory and the next tile's
// loads are issued, so their latency hides behind this tile's products. Two workgroup barriers
// order that staging (one with TWO_KV, where the tile to come goes to a second K/V tile). Where
// registers are shortest (above d = 192), the plan loads each tile in its own pass instead,
// between those two barriers (src/plan.rs, coop_load_in_loop): its latency is exposed, but no
// registers hold a tile through the pass.
// Everything else a subgroup does in a tile (its scores, P, the rescale) only touches its own
// blocks of workgroup memory, so subgroup barriers order it and the subgroups
// drift apart within a tile instead of waiting for the slowest at every stage (7% faster at
// d = 128 on the H200). That (SUBGROUP_SYNC) relies on a subgroup barrier ordering the
// subgroup's accesses to workgroup memory, as it does on NVIDIA (the whole test suite runs
// there), although naga gives it subgroup-memory semantics, which Vulkan's memory model does not
// bind to workgroup memory; so the plan asks for it on NVIDIA only. Elsewhere sync_subgroup() is
// a workgroup barrier and the rescale decision a workgroup flag.
//
// The block between the HEADER markers is replaced by constants generated from the plan
// (src/kernels/coop.rs); the defaults below keep this file valid WGSL on its own.
enable f16;
enable wgpu_cooperative_matrix;
// Every cooperative operation below runs in subgroup-uniform control flow (loop bounds and
// branches come from the uniform params, workgroup ids, workgroupUniformLoad and subgroupAny), and
// every workgroup barrier in workgroup-uniform control flow (the rescale branch is only
// subgroup-uniform with SUBGROUP_SYNC, when sync_subgroup() is a subgroup barrier), but naga's
// analysis treats every local variable as non-uniform and would reject them; this filter (the one
// naga applies to its uniformity checks) turns that check off.
diagnostic(off, derivative_uniformity);

// HEADER BEGIN
const D: u32 = 128u;      // head_dim, a multiple of 16
const BN: u32 = 32u;      // keys per tile, a multiple of 16
const NS: u32 = 4u;       // subgroups per workgroup
const R16: u32 = 1u;      // 16-row blocks per subgroup (1 or 2)
const SG: u32 = 32u;      // subgroup size (a power of two, at least 16)
const BANDED: bool = false;   // a causal mask or a sliding window limits the keys of a row (and
                              // where src/plan.rs, coop_banded, takes this code for every problem)
const SCALED: bool = false;   // scores scaled before exp2 (softcap, ALiBi, a bias; scales below 1e-8)
const SOFTCAP: bool = false;
const ALIBI: bool = false;
const SINKS: bool = false;
const BIAS: bool = false;     // an additive f32 bias from mask_buf
const KEEP_MASK: bool = false; // a boolean byte mask from mask_buf
const VARLEN: bool = false;   // per-sequence lengths from the prefix sums in mask_buf
const PAGED: bool = false;    // K and V in pages through the block table in mask_buf
const PAGE: u32 = 16u;        // PAGED: tokens per page
const WRITE_LSE: bool = true;
// Subgroup barriers order each subgroup's own stages (see above); else workgroup barriers.
const SUBGROUP_SYNC: bool = false;
fn sync_subgroup() { workgroupBarrier(); }
// Scores and probabilities stay in registers (element access to the fragments; see ELEMENTS).
const ELEMENTS: bool = false;
// ELEMENTS only: two K/V tiles in workgroup memory, one barrier a key tile (see the key loop).
const TWO_KV: bool = false;
// ELEMENTS only: O is rescaled every key tile, instead of when a row's max grew by 2^THRESH.
const RESCALE_ALWAYS: bool = false;
// The key loop loads the tile ahead in every pass, past the key range too, without a branch.
const LOAD_ALWAYS: bool = false;
// HEADER END
// Four elements of Q, K, V or O as their buffers hold them, as f16 for the matrix units (half4),
// and from f32 for O (pack4). For f32 or bf16 storage (where the problem allows f16 products)
// the host replaces this block (src/kernels/coop.rs, storage_block).
// STORAGE BEGIN
alias Packed4 = vec4<f16>;
fn half4(x: Packed4) -> vec4<f16> { return x; }
fn pack4(x: vec4<f32>) -> Packed4 { return vec4<f16>(x); }
// STORAGE END

const D4: u32 = D / 4u;
const D16: u32 = D / 16u;
const N16: u32 = BN / 16u;
const MR: u32 = 16u * R16;      // query rows per subgroup
const SLOTS: u32 = select(R16, 2u * R16, ELEMENTS);   // rows a lane keeps a max and sum of
const BM: u32 = MR * NS;
const WG: u32 = SG * NS;
const LPR: u32 = SG / 16u;      // lanes per score row in the softmax (each lane has R16 rows)
const CPL: u32 = BN / LPR;      // score columns per lane and row (adjacent; a multiple of 4)
const CPL4: u32 = CPL / 4u;
// Row strides: K/V (and staged Q) rows of halves, score rows of floats, probability rows of
// halves; each padded against bank conflicts and a multiple of 16 bytes.
const RS: u32 = D + 8u;
// ELEMENTS: the score block only makes the zero accumulator, and the probability block is
// unused; the room can go to a second K/V tile (TWO_KV).
const SS: u32 = select(BN + 4u, 20u, ELEMENTS);   // at least 16: 16 x 16 fragments pass through it
const PS: u32 = BN + 8u;
const KV_BUFS: u32 = select(1u, 2u, TWO_KV);
const KV_BUF: u32 = 2u * BN * RS;  // halves of one K and V tile pair
const THRESH: f32 = 8.0;
const LOADS: u32 = (BN * D4 + WG - 1u) / WG;  // vec4s of a K (and of a V) tile each thread moves
const QROWS: u32 = 2u * BN;     // Q rows staged at a time through the K/V tile
// Stands for -infinity in scores: finite, so that max() and subtraction stay well defined.
const MASKED: f32 = -3.0e38;
const LN2: f32 = 0.6931471805599453;
const LOG2E: f32 = 1.4426950408889634;
const NEG_INF_BITS: u32 = 0xff800000u;

struct Params {
    seq_q: u32,
    seq_kv: u32,
    group: u32,          // heads_q / heads_kv
    banded_groups: u32,  // BANDED: groups of (batch, head) pairs (see the top of forward)
    scale_log2: f32,     // |softmax_scale| * log2(e); log2(e) when SCALED
    lse_offset: u32,     // in f32 elements
    heads_q: u32,
    score_sign: f32,     // sign of softmax_scale, carried by Q here: exact, so scores stay unscaled until exp2
    win_left: i32,       // keys before the diagonal a query sees; -1: unbounded
    win_right: i32,      // keys after the diagonal; -1: unbounded (0 with causal)
    scale: f32,          // softmax_scale; |softmax_scale| is applied before exp2 when SCALED
    softcap: f32,
    alibi_offset: u32,   // in f32 elements
    alibi_batch_stride: u32,  // 0: one slope per head; heads_q: one per (batch, head)
    sinks_offset: u32,   // in f32 elements
    _pad: u32,
    mask_offset: u32,    // in mask elements (f32 for a bias, bytes for a boolean mask)
    mask_batch_stride: u32,  // elements between batch planes (0: broadcast)
    mask_head_stride: u32,   // elements between head planes (0: broadcast)
    total_q: u32,        // VARLEN: query tokens in all (the LSE is laid out (heads_q, total_q))
    batch: u32,          // VARLEN: sequences; mask_buf holds cu_seqlens_q then cu_seqlens_k
    table_offset: u32,   // PAGED: where the block table starts in mask_buf (after the prefix sums)
    pages_per_seq: u32,  // PAGED: columns of the block table
    _pad5: u32,
    // offset, batch, seq and head strides, in vec4 units
    q: vec4<u32>,
    k: vec4<u32>,
    v: vec4<u32>,
    o: vec4<u32>,
}

@group(0) @binding(0) var<uniform> params: Params;
@group(0) @binding(1) var<storage, read> q_buf: array<Packed4>;
@group(0) @binding(2) var<storage, read> k_buf: array<Packed4>;
@group(0) @binding(3) var<storage, read> v_buf: array<Packed4>;
@group(0) @binding(4) var<storage, read_write> o_buf: array<Packed4>;
// LSE is written as raw bits so that -infinity (a row that sees no key) needs no float infinity.
@group(0) @binding(5) var<storage, read_write> lse_buf: array<u32>;
@group(0) @binding(6) var<storage, read> alibi_buf: array<f32>;
@group(0) @binding(7) var<storage, read> sinks_buf: array<f32>;
// A bias as f32 bits (-infinity masks), a boolean mask as bytes four to a word, or (VARLEN and
// PAGED, which take no mask) the prefix sums of the sequence lengths, then the block table.
@group(0) @binding(8) var<storage, read> mask_buf: array<u32>;

// K at 0, V at BN * RS (in halves; the tile holds them four to a vec4, so that staging takes one
// store per loaded vec4, and cooperative loads count its addresses and strides in vec4s); the Q
// block passes through it at the start, QROWS rows at a time.
var<workgroup> kv_tile: array<vec4<f16>, KV_BUFS * KV_BUF / 4u>;
// Without ELEMENTS, each subgroup's MR x BN scores, and where O fragments are scaled and written
// out; with ELEMENTS only where the zero accumulator is made.
// Both hold four elements to a vec4 (element i at [i / 4][i % 4]; SS and PS are multiples of 4),
// so that a lane reads four scores and writes four probabilities at a time.
var<workgroup> s_tile: array<vec4<f32>, BM * SS / 4u>;
var<workgroup> p_tile: array<vec4<f16>, select(BM * PS / 4u, 4u, ELEMENTS)>;
// Per row, without ELEMENTS: the factor O is scaled by (rescale, then 1 / l at the end).
var<workgroup> row_scale: array<f32, BM>;
// VARLEN: this workgroup's sequence in 0..3, read once and shared so that loop bounds are uniform;
// without SUBGROUP_SYNC, the rescale flag in 4.
//
// Every workgroup variable is a multiple of 32 bytes: a driver may place them in any order, and
// cooperative loads and stores silently misread rows that do not start on a 16-byte boundary
// (measured on NVIDIA: one 4-byte flag shifted every fragment by two elements).
var<workgroup> shared_u32: array<u32, 8>;
const RESCALE: u32 = 4u;

// K and V tiles pass through registers: loads are issued KV_BUFS tiles ahead, so their latency
// hides behind a tile of products. Keys past the sequence are never garbage: zeros before the key
// loop (fetch), copies of the last key in it (its clamped loads). P is 0 there, and 0 * NaN would
// not be; a copy shares its tile with the last key itself, so it adds no product that key does not
// already add. `at` counts halves, a multiple of 4.
fn store4(at: u32, x: vec4<f16>) {
    kv_tile[at / 4u] = x;
}

// Where the plan asks for it, the block between the STAGE markers is replaced by another form
// of the same stores (this stage() behind a wrapper, or a text of its own): which form the
// driver's compiler runs fastest depends on the head dim (src/plan.rs, coop_stage;
// src/kernels/coop.rs).
// STAGE BEGIN
// A tile's K and V from registers into kv_tile from `off` (in halves; K rows there, V rows
// BN rows on), K and V of each loaded vec4 together.
fn stage(k: array<vec4<f16>, LOADS>, v: array<vec4<f16>, LOADS>, lid: u32, off: u32) {
    for (var u = 0u; u < LOADS; u++) {
        let i = lid + u * WG;
        if (i < BN * D4) {
            store4(off + (i / D4) * RS + (i % D4) * 4u, k[u]);
            store4(off + (BN + i / D4) * RS + (i % D4) * 4u, v[u]);
        }
    }
}
// STAGE END

// Where key `key` of sequence `seq` starts in a K or V binding (`t`: offset, batch-or-page, token
// and head strides in vec4 units; `base`: the head's first element, plus the sequence's when not
// PAGED). Only called for keys inside the sequence, so the block table is never read past a row.
fn key_row(base: u32, t: vec4<u32>, seq: u32, key: u32) -> u32 {
    if (PAGED) {
        let page = mask_buf[params.table_offset + seq * params.pages_per_seq + key / PAGE];
        return base + page * t.y + (key % PAGE) * t.z;
    }
    return base + key * t.z;
}

// Element i of the K (or V) tile at n0, zeros past the sequence: the loads before the key loop,
// which may run for an empty sequence. The loop's own loads clamp the key instead.
fn fetch(from_v: bool, base: u32, seq: u32, n0: u32, seq_kv: u32, i: u32) -> vec4<f16> {
    let key = n0 + i / D4;
    if (i >= BN * D4 || key >= seq_kv) {
        return vec4<f16>(0.0h);
    }
    if (from_v) {
        return half4(v_buf[key_row(base, params.v, seq, key) + i % D4]);
    }
    return half4(k_buf[key_row(base, params.k, seq, key) + i % D4]);
}

// Element i % D4 of row `r` of this workgroup's Q block (zeros past the block or the sequence,
// and for i past a tile, which stage() never stores), times the sign of the scale: the sign rides
// on Q, so scores need no multiply. Exact where the device keeps f16 subnormals (NVIDIA does); a
// driver that flushes them in the multiply loses Q elements below 6.1e-5, under f16's rounding of
// larger ones.
fn q_vec4(q_base: u32, m0: u32, r: u32, i: u32, seq_q: u32) -> vec4<f16> {
    if (i >= BN * D4 || r >= BM || m0 + r >= seq_q) {
        return vec4<f16>(0.0h);
    }
    return half4(q_buf[q_base + (m0 + r) * params.q.z + i % D4]) * f16(params.score_sign);
}

// One score of the tile at `key` for query row `row` (modifiers and masks applied), in the units
// exp2 takes after scaling by scale_log2; MASKED where the key is not visible. `interior`: the
// whole tile is inside both sequences and every row's band, so no element needs the visibility
// test (a bias or a boolean mask still applies).
fn score(s: f32, key: u32, row: u32, diag: i32, interior: bool, slope: f32, batch: u32,
         head_q: u32, seq_q: u32, seq_kv: u32) -> f32 {
    var visible = true;
    if (!interior) {
        visible = key < seq_kv && row < seq_q;
        if (BANDED) {
            visible = visible && (params.win_left < 0 || i32(key) >= diag - params.win_left);
            visible = visible && (params.win_right < 0 || i32(key) <= diag + params.win_right);
        }
    }
    var xj = s;
    if (SCALED) {
        xj = s * abs(params.scale);
        if (SOFTCAP) {
            // Clamped: tanh is +-1 in f32 well before 15, and some backends compute it through
            // exp, which overflows for large arguments.
            xj = params.softcap * tanh(clamp(xj / params.softcap, -15.0, 15.0));
        }
        if (ALIBI) {
            xj -= slope * f32(abs(diag - i32(key)));
        }
    }
    if ((BIAS || KEEP_MASK) && visible) {
        let at = params.mask_offset + batch * params.mask_batch_stride
            + head_q * params.mask_head_stride + row * seq_kv + key;
        if (BIAS) {
            let bits = mask_buf[at];
            visible = bits != NEG_INF_BITS;
            xj += select(0.0, bitcast<f32>(bits), visible);
        }
        if (KEEP_MASK) {
            visible = ((mask_buf[at / 4u] >> ((at % 4u) * 8u)) & 0xffu) != 0u;
        }
    }
    return select(MASKED, xj, visible);
}

// This lane's CPL scores of one row of the tile (keys key0 .. key0 + CPL - 1; their raw values
// from s_tile at s_row, in vec4s) into x, as score() makes them, and their max.
fn row_scores(x: ptr<function, array<f32, CPL>>, s_row: u32, key0: u32, row: u32, diag: i32,
              interior: bool, slope: f32, batch: u32, head_q: u32, seq_q: u32, seq_kv: u32) -> f32 {
    var tile_max = MASKED;
    for (var j4 = 0u; j4 < CPL4; j4++) {
        let s4 = s_tile[s_row + j4];
        let key = key0 + j4 * 4u;
        (*x)[j4 * 4u] = score(s4.x, key, row, diag, interior, slope, batch, head_q, seq_q, seq_kv);
        (*x)[j4 * 4u + 1u] = score(s4.y, key + 1u, row, diag, interior, slope, batch, head_q, seq_q, seq_kv);
        (*x)[j4 * 4u + 2u] = score(s4.z, key + 2u, row, diag, interior, slope, batch, head_q, seq_q, seq_kv);
        (*x)[j4 * 4u + 3u] = score(s4.w, key + 3u, row, diag, interior, slope, batch, head_q, seq_q, seq_kv);
        tile_max = max(tile_max, max(max((*x)[j4 * 4u], (*x)[j4 * 4u + 1u]), max((*x)[j4 * 4u + 2u], (*x)[j4 * 4u + 3u])));
    }
    return tile_max;
}

// exp2 of a score against the subtracted max (both scaled to exp2 units); 0 for a masked one.
fn prob(x: f32, m_scaled: f32) -> f32 {
    return select(0.0, exp2(fma(x, params.scale_log2, -m_scaled)), x > MASKED);
}

// ELEMENTS: what exp2 subtracts for a row whose max is m, so that exp2(x scale_log2 - offset)
// needs no test for masked scores (prob's select cost 64 instructions a tile at d = 128):
// MASKED * scale_log2 is below -2^100 (the host keeps scale_log2 above 1e-8 by scaling tiny
// scales before exp2, see SCALED), so a masked score underflows to 0 against any max far above
// MASKED, and a row that has seen no visible key yet subtracts 0 instead of its MASKED max. A
// bias within a factor of about 3 of -3e38 would break that; prob()'s offset never served such
// maxima either.
fn exp2_offset(m: f32) -> f32 {
    return select(m * params.scale_log2, 0.0, m <= MASKED);
}

// ELEMENTS: element i of a lane's share of a 16 x 16 fragment. WGSL has no such access; in the
// SPIR-V these calls become OpCompositeExtract / OpCompositeInsert with constant i
// (src/kernels/spirv_elements.rs), so these bodies never run. Which (row, column) element i is
// was probed on the device: with 32 lanes, lane l holds row l / 4 in elements 0-3 and row l / 4 + 8
// in 4-7, columns 2 (l % 4) + {0, 1, 8, 9}, the same in C (f32) and A (f16) fragments.
const EL: u32 = 8u;
const HALVES: u32 = 2u;   // rows per lane and 16-row block
fn coop_get_c(m: coop_mat16x16<f32, C>, i: u32) -> f32 { return 0.0; }
fn coop_set_c(m: coop_mat16x16<f32, C>, i: u32, x: f32) -> coop_mat16x16<f32, C> { return m; }
fn coop_set_a(m: coop_mat16x16<f16, A>, i: u32, x: f16) -> coop_mat16x16<f16, A> { return m; }
fn coop_get_a(m: coop_mat16x16<f16, A>, i: u32) -> f16 { return 0.0h; }
fn coop_len_c(m: coop_mat16x16<f32, C>) -> u32 { return 0u; }
fn coop_len_a(m: coop_mat16x16<f16, A>) -> u32 { return 0u; }
fn elem_row(lane: u32, i: u32) -> u32 { return lane / 4u + 8u * (i / 4u); }
fn elem_col(lane: u32, i: u32) -> u32 { return 2u * (lane % 4u) + (i % 2u) + 8u * ((i / 2u) % 2u); }

// ELEMENTS: this lane's scores of row block rb of the tile at n0 (element e of key block nb at
// x[nb * EL + e], raw on entry) through score(), and the tile max of its two rows.
fn elem_scores(x: ptr<function, array<f32, EL * N16>>, lane: u32, n0: u32, row_first: u32,
               diag_offset: i32, interior: bool, slope: f32, batch: u32, head_q: u32,
               seq_q: u32, seq_kv: u32) -> vec2<f32> {
    // Where the plan takes the tree form (src/plan.rs, coop_tree_form), this block is replaced
    // by src/kernels/coop.rs's TREE_SCORES_MAX.
    // SCORES_MAX BEGIN
    var tile_max = vec2<f32>(MASKED);
    for (var nb = 0u; nb < N16; nb++) {
        for (var e = 0u; e < EL; e++) {
            let row = row_first + elem_row(lane, e);
            let key = n0 + nb * 16u + elem_col(lane, e);
            let v = score((*x)[nb * EL + e], key, row, i32(row) + diag_offset, interior, slope,
                batch, head_q, seq_q, seq_kv);
            (*x)[nb * EL + e] = v;
            if (e < 4u) {
                tile_max.x = max(tile_max.x, v);
            } else {
                tile_max.y = max(tile_max.y, v);
            }
        }
    }
    return tile_max;
    // SCORES_MAX END
}

// Where the plan asks for it, the loads of the tile ahead go through a function of their own:
// load_tile, made of the key loop's LOAD block, replaces this block, and a call to it that
// LOAD block (src/plan.rs, coop_load_in_function; src/kernels/coop.rs).
// LOAD_FN BEGIN
// LOAD_FN END

@compute @workgroup_size(WG)
fn forward(
    @builtin(workgroup_id) wid: vec3<u32>,
    @builtin(num_workgroups) nwg: vec3<u32>,
    @builtin(local_invocation_index) lid: u32,
    @builtin(subgroup_id) sg: u32,
    @builtin(subgroup_invocation_id) lane: u32,
) {
    // Banded blocks differ in length: with the band's right side bounded (causal) the last query
    // block sees the most keys, with only its left side bounded the first. The (batch, head)
    // pairs run in params.banded_groups groups of nearly equal size (the first pairs % groups
    // one pair larger), one group after the other; in each, all blocks longest first, the
    // group's pairs side by side. So the last wave of each group is made of its shortest blocks,
    // and the workgroups running at once read the K/V of few heads.
    var block = wid.x;
    var head_q = wid.y;
    var batch = wid.z;
    if (BANDED) {
        let pairs = nwg.y * nwg.z;
        let order = wid.x + nwg.x * (wid.y + nwg.y * wid.z);
        let small = pairs / params.banded_groups;       // pairs in a smaller group
        let larger = pairs % params.banded_groups;      // groups with one pair more
        let in_larger = larger * (small + 1u) * nwg.x;  // their workgroups, dispatched first
        var size = small + 1u;
        var first = order / (size * nwg.x) * size;      // the group's first pair
        var within = order % (size * nwg.x);
        if (order >= in_larger) {
            size = small;
            first = larger * (small + 1u) + (order - in_larger) / (size * nwg.x) * size;
            within = (order - in_larger) % (size * nwg.x);
        }
        let rank = within / size;  // 0: the group's longest blocks
        block = select(rank, nwg.x - 1u - rank, params.win_right >= 0);
        let pair = first + within % size;
        head_q = pair % nwg.y;
        batch = pair / nwg.y;
    }
    let m0 = block * BM;
    let head_kv = head_q / params.group;
    // This workgroup's sequence: its lengths, and where its tokens start in the packed tensors.
    var seq_q = params.seq_q;
    var seq_kv = params.seq_kv;
    var q_tok0 = 0u;
    var k_tok0 = 0u;
    if (VARLEN) {
        if (lid == 0u) {
            let q0 = mask_buf[params.mask_offset + batch];
            let k0 = mask_buf[params.mask_offset + params.batch + 1u + batch];
            shared_u32[0] = q0;
            shared_u32[1] = mask_buf[params.mask_offset + batch + 1u] - q0;
            shared_u32[2] = k0;
            shared_u32[3] = mask_buf[params.mask_offset + params.batch + 2u + batch] - k0;
        }
        q_tok0 = workgroupUniformLoad(&shared_u32[0]);
        seq_q = workgroupUniformLoad(&shared_u32[1]);
        k_tok0 = workgroupUniformLoad(&shared_u32[2]);
        seq_kv = workgroupUniformLoad(&shared_u32[3]);
        if (m0 >= seq_q) {
            return; // a query block past a short sequence: nothing to do
        }
    }
    let diag_offset = i32(seq_kv) - i32(seq_q); // query i's diagonal key is i + diag_offset
    let q_base = params.q.x + batch * params.q.y + head_q * params.q.w + q_tok0 * params.q.z;
    var k_base = params.k.x + head_kv * params.k.w;
    var v_base = params.v.x + head_kv * params.v.w;
    if (!PAGED) {
        k_base += batch * params.k.y + k_tok0 * params.k.z;
        v_base += batch * params.v.y + k_tok0 * params.v.z;
    }
    let row0 = sg * MR; // this subgroup's first row in the block

    // Q block -> workgroup memory (QROWS rows at a time) -> this subgroup's A fragments, kept for
    // the whole pass. Each round's rows are loaded into the K/V staging registers first, all
    // loads issued before any store (rows r0 .. r0 + BN - 1 where a K tile goes, the next BN where
    // its V tile goes), then stored as a K/V tile is: a load and its store in the same pass of a
    // loop would wait for each load in turn.
    var q_frag: array<coop_mat16x16<f16, A>, R16 * D16>;
    var k_staged: array<vec4<f16>, LOADS>;
    var v_staged: array<vec4<f16>, LOADS>;
    for (var r0 = 0u; r0 < BM; r0 += QROWS) {
        for (var u = 0u; u < LOADS; u++) {
            let i = lid + u * WG;
            k_staged[u] = q_vec4(q_base, m0, r0 + i / D4, i, seq_q);
            v_staged[u] = q_vec4(q_base, m0, r0 + BN + i / D4, i, seq_q);
        }
        workgroupBarrier();
        stage(k_staged, v_staged, lid, 0u);
        workgroupBarrier();
        // The same for all lanes of a subgroup, which is what cooperative loads need.
        for (var rb = 0u; rb < R16; rb++) {
            let first = row0 + rb * 16u;
            if (first >= r0 && first < r0 + QROWS) {
                for (var kd = 0u; kd < D16; kd++) {
                    let at = (first - r0) * RS + kd * 16u;
                    q_frag[rb * D16 + kd] = coopLoadT<coop_mat16x16<f16, A>>(&kv_tile[at / 4u], RS / 4u);
                }
            }
        }
    }

    // Keys outside [kv_start, kv_end) are masked for every row of this block: their tiles are never
    // visited. The first row has the band's lowest key, the last row its highest.
    var kv_start = 0u;
    var kv_end = seq_kv;
    if (BANDED) {
        let last_row = min(m0 + BM, seq_q) - 1u;
        if (params.win_left >= 0) {
            let lo = clamp(i32(m0) + diag_offset - params.win_left, 0, i32(seq_kv));
            kv_start = u32(lo) / BN * BN;
        }
        if (params.win_right >= 0) {
            kv_end = u32(clamp(i32(last_row) + diag_offset + params.win_right + 1, 0, i32(seq_kv)));
        }
    }
    var slope = 0.0;
    if (ALIBI) {
        slope = alibi_buf[params.alibi_offset + batch * params.alibi_batch_stride + head_q];
    }

    // Softmax roles: lane `lane` of subgroup `sg` handles row r of each of the subgroup's R16
    // blocks of 16 rows, and its CPL adjacent score columns part * CPL .. part * CPL + CPL - 1,
    // four at a time. The LPR lanes of a row hold the same running max.
    let r = lane / LPR;
    let part = lane % LPR;
    let s_base = row0 * SS;
    let p_base = row0 * PS;
    // Per row this lane works on: R16 of them, or with ELEMENTS 2 R16 (rows g and g + 8 of each
    // block, g = lane / 4, at [2 rb] and [2 rb + 1]).
    var m_used: array<f32, SLOTS>;   // the max subtracted in exp2 (unscaled score units)
    var l_part: array<f32, SLOTS>;   // this lane's share of the row sum, relative to m_used
    for (var rb = 0u; rb < SLOTS; rb++) {
        m_used[rb] = MASKED;
        l_part[rb] = 0.0;
    }

    // A zero accumulator, loaded from zeroed workgroup memory (the portable way to make one).
    // Whole vec4s: lanes writing components of one vector could overwrite each other's.
    for (var e = lane; e < 64u; e += SG) {
        s_tile[(s_base + (e / 4u) * SS) / 4u + e % 4u] = vec4<f32>(0.0);
    }
    workgroupBarrier();
    let zero_frag = coopLoadT<coop_mat16x16<f32, C>>(&s_tile[s_base / 4u], SS / 4u);
    var o_acc: array<coop_mat16x16<f32, C>, R16 * D16>;
    for (var f = 0u; f < R16 * D16; f++) {
        o_acc[f] = zero_frag;
    }

    // The first tile's loads. Where the plan loads each tile in the key loop itself (src/plan.rs,
    // coop_load_in_loop), this block and the AHEAD block below are removed and the LOAD block
    // goes to LOAD_HERE.
    // PREFETCH BEGIN
    for (var u = 0u; u < LOADS; u++) {
        k_staged[u] = fetch(false, k_base, batch, kv_start, seq_kv, lid + u * WG);
        v_staged[u] = fetch(true, v_base, batch, kv_start, seq_kv, lid + u * WG);
    }
    // PREFETCH END

    // TWO_KV: two K/V tiles in workgroup memory, so one barrier a tile orders both the stores
    // of the tile to come and the reads of the one before. The first tile is stored here (after
    // the Q fragments have left the tile), and the registers take the second.
    if (TWO_KV) {
        workgroupBarrier();
        stage(k_staged, v_staged, lid, 0u);
        if (kv_start + BN < kv_end) {
            for (var u = 0u; u < LOADS; u++) {
                k_staged[u] = fetch(false, k_base, batch, kv_start + BN, seq_kv, lid + u * WG);
                v_staged[u] = fetch(true, v_base, batch, kv_start + BN, seq_kv, lid + u * WG);
            }
        }
    }
    var kv_off = 0u;   // where this tile's K and V start in kv_tile, in halves
    for (var n0 = kv_start; n0 < kv_end; n0 += BN) {
        if (TWO_KV) {
            // This tile's stores are visible, and the readers of the other tile are done.
            workgroupBarrier();
            let next_off = KV_BUF - kv_off;
            if (n0 + BN < kv_end) {
                stage(k_staged, v_staged, lid, next_off);
            }
        } else {
            // The previous tile's readers of kv_tile, s_tile and the flag are done.
            workgroupBarrier();
            if (!SUBGROUP_SYNC && lid == 0u) {
                shared_u32[RESCALE] = 0u;
            }
            // LOAD_HERE BEGIN
            // LOAD_HERE END
            stage(k_staged, v_staged, lid, 0u);
            workgroupBarrier();
        }
        // AHEAD BEGIN
        // The loads of the tile KV_BUFS tiles ahead start now; their latency hides behind this
        // tile's work. One form for every tile, paged or not: its cost is address arithmetic,
        // which the per-load tests of fetch() would exceed.
        let ahead = n0 + KV_BUFS * BN;
        if (LOAD_ALWAYS || ahead < kv_end) {
            // The block below also becomes the body of load_tile (see LOAD_FN), so it uses no
            // other variables than that function's parameters.
            // LOAD BEGIN
            // With the tree form (src/plan.rs, coop_tree_form) this block becomes the else
            // branch of stepped loads (src/kernels/coop.rs, load_rows_stepped).
            // LOAD_ROWS BEGIN
            for (var u = 0u; u < LOADS; u++) {
                let i = lid + u * WG;
                if (LOADS * WG == BN * D4 || i < BN * D4) {
                    // Keys past the end load the last key's row (seq_kv > 0: this pass's tile
                    // starts below kv_end <= seq_kv), masked in the scores; tiles starting at or
                    // past kv_end are never staged.
                    let key = min(ahead + i / D4, seq_kv - 1u);
                    k_staged[u] = half4(k_buf[key_row(k_base, params.k, batch, key) + i % D4]);
                    v_staged[u] = half4(v_buf[key_row(v_base, params.v, batch, key) + i % D4]);
                }
            }
            // LOAD_ROWS END
            // LOAD END
        }
        // AHEAD END

        // S = Q K^T for this subgroup's rows: K read column-major is K^T. Each K fragment is read
        // once for all R16 row blocks. Without ELEMENTS each key block's scores go to this
        // subgroup's score block as soon as they are done.
        var s_acc: array<coop_mat16x16<f32, C>, R16 * N16>;
        for (var nb = 0u; nb < N16; nb++) {
            for (var rb = 0u; rb < R16; rb++) {
                s_acc[rb * N16 + nb] = zero_frag;
            }
            for (var kd = 0u; kd < D16; kd++) {
                let at = kv_off + nb * 16u * RS + kd * 16u;
                let k_frag = coopLoad<coop_mat16x16<f16, B>>(&kv_tile[at / 4u], RS / 4u);
                for (var rb = 0u; rb < R16; rb++) {
                    s_acc[rb * N16 + nb] = coopMultiplyAdd(q_frag[rb * D16 + kd], k_frag, s_acc[rb * N16 + nb]);
                }
            }
            if (!ELEMENTS) {
                for (var rb = 0u; rb < R16; rb++) {
                    let at = s_base + rb * 16u * SS + nb * 16u;
                    coopStoreT(s_acc[rb * N16 + nb], &s_tile[at / 4u], SS / 4u);
                }
            }
        }

        // Whether every key of the tile is inside both sequences (and, BANDED, inside the band
        // of every row of this subgroup: the first row bounds the band's right edge, the last
        // row its left edge), so that no element needs the visibility test.
        var interior = n0 + BN <= seq_kv && m0 + row0 + MR <= seq_q;
        if (BANDED) {
            let first = i32(m0 + row0) + diag_offset;
            let last = i32(m0 + row0 + MR - 1u) + diag_offset;
            interior = interior
                && (params.win_left < 0 || i32(n0) >= last - params.win_left)
                && (params.win_right < 0 || i32(n0 + BN - 1u) <= first + params.win_right);
        }

        // This subgroup's P as A fragments, for O += P V below.
        var p_frag: array<coop_mat16x16<f16, A>, R16 * N16>;
        if (ELEMENTS) {
            // The softmax on this lane's elements of the S fragments, and P fragments built in
            // registers: no round trip through workgroup memory and no barrier between the
            // stages.
            var alpha: array<f32, 2u * R16>;
            var moved = false;
            for (var rb = 0u; rb < R16; rb++) {
                var x: array<f32, EL * N16>;
                for (var nb = 0u; nb < N16; nb++) {
                    for (var e = 0u; e < EL; e++) {
                        x[nb * EL + e] = coop_get_c(s_acc[rb * N16 + nb], e);
                    }
                }
                let row_first = m0 + row0 + rb * 16u;
                var tile_max: vec2<f32>;
                if (interior) {
                    tile_max = elem_scores(&x, lane, n0, row_first, diag_offset, true, slope, batch, head_q, seq_q, seq_kv);
                } else {
                    tile_max = elem_scores(&x, lane, n0, row_first, diag_offset, false, slope, batch, head_q, seq_q, seq_kv);
                }
                // The 4 lanes of a row are adjacent.
                tile_max = max(tile_max, subgroupShuffleXor(tile_max, 1u));
                tile_max = max(tile_max, subgroupShuffleXor(tile_max, 2u));
                for (var h = 0u; h < HALVES; h++) {
                    let slot = 2u * rb + h;
                    var a = 1.0;
                    if (RESCALE_ALWAYS) {
                        let m_new = max(m_used[slot], tile_max[h]);
                        a = exp2((m_used[slot] - m_new) * params.scale_log2);
                        m_used[slot] = m_new;
                    } else if (m_used[slot] <= MASKED) {
                        m_used[slot] = tile_max[h];
                    } else if ((tile_max[h] - m_used[slot]) * params.scale_log2 > THRESH) {
                        a = exp2((m_used[slot] - tile_max[h]) * params.scale_log2);
                        m_used[slot] = tile_max[h];
                        moved = true;
                    }
                    alpha[slot] = a;
                    l_part[slot] *= a;
                }
                let m_lo = exp2_offset(m_used[2u * rb]);
                let m_hi = exp2_offset(m_used[2u * rb + 1u]);
                // Replaced by src/kernels/coop.rs's TREE_PROBS with the tree form (src/plan.rs,
                // coop_tree_form).
                // PROBS BEGIN
                for (var nb = 0u; nb < N16; nb++) {
                    // Every element is set, so any A fragment will do to start from.
                    var pf = q_frag[0];
                    for (var e = 0u; e < EL; e++) {
                        let pe = exp2(fma(x[nb * EL + e], params.scale_log2, -select(m_hi, m_lo, e < 4u)));
                        if (e < 4u) {
                            l_part[2u * rb] += pe;
                        } else {
                            l_part[2u * rb + 1u] += pe;
                        }
                        pf = coop_set_a(pf, e, f16(pe));
                    }
                    p_frag[rb * N16 + nb] = pf;
                }
                // PROBS END
            }
            if (RESCALE_ALWAYS || subgroupAny(moved)) {
                for (var f = 0u; f < R16 * D16; f++) {
                    for (var e = 0u; e < EL; e++) {
                        let a = alpha[2u * (f / D16) + e / 4u];
                        o_acc[f] = coop_set_c(o_acc[f], e, coop_get_c(o_acc[f], e) * a);
                    }
                }
            }
        } else {
            // The scores are in this subgroup's block.
            sync_subgroup();
            var moved = false;

            for (var rb = 0u; rb < R16; rb++) {
                let rr = rb * 16u + r; // row within the subgroup's block
                let row = m0 + row0 + rr;
                let diag = i32(row) + diag_offset;
                // Score modifiers, the mask, and the row max of this tile: this lane's CPL adjacent
                // columns, four at a time.
                var x: array<f32, CPL>;
                var tile_max: f32;
                let s_row = (s_base + rr * SS + part * CPL) / 4u;
                // Tiles wholly inside the sequences and the band (almost all of them) take a copy
                // of the scores that skips the visibility test (`true` below is a constant in that
                // copy once row_scores is inlined); `interior` is the same for the whole subgroup,
                // so the branch is uniform. Passing `interior` itself to one copy instead left the
                // test in every tile's code: causal ran 9% (d = 128) and 16% (d = 64) slower
                // (bench-results/h200-2026-11-30-session8, call5).
                if (interior) {
                    tile_max = row_scores(&x, s_row, n0 + part * CPL, row, diag, true, slope, batch, head_q, seq_q, seq_kv);
                } else {
                    tile_max = row_scores(&x, s_row, n0 + part * CPL, row, diag, false, slope, batch, head_q, seq_q, seq_kv);
                }
                for (var off = 1u; off < LPR; off *= 2u) {
                    tile_max = max(tile_max, subgroupShuffleXor(tile_max, off));
                }

                // Move the subtracted max only when this row's max grew by more than 2^THRESH; a row
                // that saw no key yet has O = 0 and l = 0, so it takes the new max for free.
                var alpha = 1.0;
                if (m_used[rb] <= MASKED) {
                    m_used[rb] = tile_max;
                } else if ((tile_max - m_used[rb]) * params.scale_log2 > THRESH) {
                    alpha = exp2((m_used[rb] - tile_max) * params.scale_log2);
                    m_used[rb] = tile_max;
                    moved = true;
                    if (!SUBGROUP_SYNC) {
                        shared_u32[RESCALE] = 1u;
                    }
                }
                if (part == 0u) {
                    row_scale[row0 + rr] = alpha;
                }
                var l = l_part[rb] * alpha;
                let m_scaled = m_used[rb] * params.scale_log2;
                let p_row = (p_base + rr * PS + part * CPL) / 4u;
                for (var j4 = 0u; j4 < CPL4; j4++) {
                    let p4 = vec4<f32>(
                        prob(x[j4 * 4u], m_scaled),
                        prob(x[j4 * 4u + 1u], m_scaled),
                        prob(x[j4 * 4u + 2u], m_scaled),
                        prob(x[j4 * 4u + 3u], m_scaled),
                    );
                    l += (p4.x + p4.y) + (p4.z + p4.w);
                    p_tile[p_row + j4] = vec4<f16>(p4);
                }
                l_part[rb] = l;
            }

            // P, row_scale (and the flag) are visible to the whole subgroup (workgroup) after this.
            var rescale: bool;
            if (SUBGROUP_SYNC) {
                sync_subgroup();
                rescale = subgroupAny(moved);
            } else {
                rescale = workgroupUniformLoad(&shared_u32[RESCALE]) != 0u;
            }
            if (rescale) {
                // Rare: scale O by row through this subgroup's score block, 16 rows at a time.
                for (var f = 0u; f < R16 * D16; f++) {
                    coopStoreT(o_acc[f], &s_tile[s_base / 4u], SS / 4u);
                    sync_subgroup();
                    for (var e = lane; e < 64u; e += SG) {
                        let at = (s_base + (e / 4u) * SS) / 4u + e % 4u;
                        s_tile[at] *= row_scale[row0 + (f / D16) * 16u + e / 4u];
                    }
                    sync_subgroup();
                    o_acc[f] = coopLoadT<coop_mat16x16<f32, C>>(&s_tile[s_base / 4u], SS / 4u);
                    sync_subgroup();
                }
            }

            // P from this subgroup's probability block.
            for (var rb = 0u; rb < R16; rb++) {
                for (var nb = 0u; nb < N16; nb++) {
                    let at = p_base + rb * 16u * PS + nb * 16u;
                    p_frag[rb * N16 + nb] = coopLoadT<coop_mat16x16<f16, A>>(&p_tile[at / 4u], PS / 4u);
                }
            }
        }

        // O += P V: each V fragment is read once for all R16 row blocks.
        for (var f = 0u; f < D16; f++) {
            for (var nb = 0u; nb < N16; nb++) {
                let at = kv_off + (BN + nb * 16u) * RS + f * 16u;
                let v_frag = coopLoadT<coop_mat16x16<f16, B>>(&kv_tile[at / 4u], RS / 4u);
                for (var rb = 0u; rb < R16; rb++) {
                    let o = rb * D16 + f;
                    o_acc[o] = coopMultiplyAdd(p_frag[rb * N16 + nb], v_frag, o_acc[o]);
                }
            }
        }
        if (TWO_KV) {
            kv_off = KV_BUF - kv_off;
        }
    }

    // Row sums: add the parts of the lanes of a row (LPR of them, or with ELEMENTS the 4 that
    // share it). Then 1 / l (and the LSE) per row: with ELEMENTS kept in this lane's registers,
    // which hold the elements of O it scales; otherwise through row_scale.
    var inv_row: array<f32, SLOTS>;
    if (!ELEMENTS) {
        workgroupBarrier();
    }
    for (var k = 0u; k < SLOTS; k++) {
        var rr = k * 16u + r;
        var lanes = LPR;
        var writer = part == 0u;
        if (ELEMENTS) {
            rr = (k / 2u) * 16u + elem_row(lane, 4u * (k % 2u));
            lanes = 4u;
            writer = lane % 4u == 0u;
        }
        let row = m0 + row0 + rr;
        var l = l_part[k];
        for (var off = 1u; off < lanes; off *= 2u) {
            l += subgroupShuffleXor(l, off);
        }
        // A row that sees no key has l == 0: its output is 0 and its LSE -infinity (or the
        // sink). Every lane of the row has the whole sum.
        let m2 = m_used[k] * params.scale_log2;
        var inv = select(0.0, 1.0 / l, l > 0.0);
        var lse = m2 * LN2 + log(l);
        if (SINKS) {
            // The sink joins the denominator: rescale both to the larger of row max and sink.
            let sink2 = sinks_buf[params.sinks_offset + head_q] * LOG2E;
            let top = select(sink2, max(m2, sink2), l > 0.0);
            let kept = select(0.0, exp2(m2 - top), l > 0.0);
            let total = l * kept + exp2(sink2 - top);
            inv = kept / total;
            lse = top * LN2 + log(total);
        }
        inv_row[k] = inv;
        if (writer) {
            if (!ELEMENTS) {
                row_scale[row0 + rr] = inv;
            }
            if (WRITE_LSE && row < seq_q) {
                var at = params.lse_offset + (batch * params.heads_q + head_q) * seq_q + row;
                if (VARLEN) {
                    at = params.lse_offset + head_q * params.total_q + q_tok0 + row;
                }
                lse_buf[at] = select(NEG_INF_BITS, bitcast<u32>(lse), l > 0.0 || SINKS);
            }
        }
    }

    let o_base = params.o.x + batch * params.o.y + head_q * params.o.w + q_tok0 * params.o.z;
    if (ELEMENTS) {
        // O / l straight from registers. In each of its two rows of a fragment (elements from
        // e = 4 h), lane 4 g + q holds columns 2 q, 2 q + 1 (elements e, e + 1) and 2 q + 8,
        // 2 q + 9 (e + 2, e + 3), as elem_col says and probe_elements checks. Lanes q = 2 s and
        // 2 s + 1 (s = 0, 1) swap a pair, so that the even one holds columns 4 s .. 4 s + 3 and
        // the odd one 8 + 4 s .. 8 + 4 s + 3: one vec4 each, starting at the even lane's element
        // e (even) or e + 2 (odd).
        let odd = lane % 2u == 1u;
        let col4 = elem_col(lane - lane % 2u, select(0u, 2u, odd)) / 4u;
        for (var rb = 0u; rb < R16; rb++) {
            for (var f = 0u; f < D16; f++) {
                var x: array<f32, EL>;
                for (var e = 0u; e < EL; e++) {
                    x[e] = coop_get_c(o_acc[rb * D16 + f], e);
                }
                for (var h = 0u; h < HALVES; h++) {
                    let e = 4u * h;
                    let near = vec2<f32>(x[e], x[e + 1u]);
                    let far = vec2<f32>(x[e + 2u], x[e + 3u]);
                    let give = select(far, near, odd);
                    let got = vec2<f32>(subgroupShuffleXor(give.x, 1u), subgroupShuffleXor(give.y, 1u));
                    let o = select(vec4<f32>(near, got), vec4<f32>(got, far), odd);
                    let out_row = m0 + row0 + rb * 16u + elem_row(lane, e);
                    if (out_row < seq_q) {
                        o_buf[o_base + out_row * params.o.z + f * 4u + col4] = pack4(o * inv_row[2u * rb + h]);
                    }
                }
            }
        }
        return;
    }
    workgroupBarrier();

    // O / l, one 16 x 16 fragment per row block at a time through this subgroup's score block.
    for (var f = 0u; f < D16; f++) {
        for (var rb = 0u; rb < R16; rb++) {
            let at = s_base + rb * 16u * SS;
            coopStoreT(o_acc[rb * D16 + f], &s_tile[at / 4u], SS / 4u);
        }
        workgroupBarrier();
        for (var e = lane; e < MR * 4u; e += SG) {
            let rr = e / 4u;
            let c4 = e % 4u;
            let out_row = m0 + row0 + rr;
            if (out_row < seq_q) {
                let o = s_tile[(s_base + rr * SS) / 4u + c4];
                o_buf[o_base + out_row * params.o.z + f * 4u + c4] = pack4(o * row_scale[row0 + rr]);
            }
        }
        workgroupBarrier();
    }
}

// ELEMENTS: whether a lane holds EL elements of C (f32) and A (f16) fragments, whether elem_row
// and elem_col say where each is, and whether setting an element of either puts it there. Run
// once per device, in one subgroup of 32 lanes, before any plan keeps scores in registers; each
// lane writes its mismatches to lse_buf[lane] (the plan needs none in any lane, and the host fills
// the buffer with ones first): bit 0 the C length, bit 1 the A length, then counts in 4
// bits each from bit 4: C elements read, A elements read, A elements written, C elements written;
// bit 31 (RAN) is always set, so that neither a buffer left as it was nor a zeroed one passes.
const RAN: u32 = 0x80000000u;
@compute @workgroup_size(32)
fn probe_elements(@builtin(subgroup_invocation_id) lane: u32) {
    // Element (row, column) of a 16 x 16 block holds 16 row + column.
    for (var v = lane; v < 64u; v += 32u) {
        let x = vec4<f32>(f32(4u * v), f32(4u * v + 1u), f32(4u * v + 2u), f32(4u * v + 3u));
        s_tile[v] = x;
        kv_tile[v] = vec4<f16>(x);
    }
    workgroupBarrier();
    let c = coopLoadT<coop_mat16x16<f32, C>>(&s_tile[0], 4u);
    var a = coopLoadT<coop_mat16x16<f16, A>>(&kv_tile[0], 4u);
    var wrong = select(1u, 0u, coop_len_c(c) == EL) + select(2u, 0u, coop_len_a(a) == EL);
    var c2 = c;
    for (var e = 0u; e < EL; e++) {
        let at = 16u * elem_row(lane, e) + elem_col(lane, e);
        wrong += select(1u << 4u, 0u, coop_get_c(c, e) == f32(at));
        wrong += select(1u << 8u, 0u, coop_get_a(a, e) == f16(at));
        a = coop_set_a(a, e, f16(1024u + EL * lane + e));
        c2 = coop_set_c(c2, e, f32(2048u + EL * lane + e));
    }
    workgroupBarrier();
    coopStoreT(a, &kv_tile[0], 4u);
    coopStoreT(c2, &s_tile[0], 4u);
    workgroupBarrier();
    for (var e = 0u; e < EL; e++) {
        let at = 16u * elem_row(lane, e) + elem_col(lane, e);
        wrong += select(1u << 12u, 0u, kv_tile[at / 4u][at % 4u] == f16(1024u + EL * lane + e));
        wrong += select(1u << 16u, 0u, s_tile[at / 4u][at % 4u] == f32(2048u + EL * lane + e));
    }
    lse_buf[lane] = wrong | RAN;
}

