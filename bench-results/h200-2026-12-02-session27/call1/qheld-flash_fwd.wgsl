// FlashAttention forward, portable tier: plain WGSL, f32 accumulation.
//
// One workgroup owns BM query rows of one (batch, query head). It keeps those rows of Q in
// workgroup memory, streams K and V through one shared tile of BN keys, and keeps a running
// row max (m), running row sum (l) and the output accumulator in registers (online softmax).
// Only O, and optionally the row log-sum-exp, reach device memory.
//
// Thread (tx, ty) of the TX x TY workgroup owns rows ty + i*TY (i < RM) and, of each score tile,
// key columns tx + j*TX (j < RN); of the output, vec4 columns tx + c*TX (c < RD4) of its rows.
// Both products are register-blocked: per vec4 of d, a thread reads RM vec4s of Q and RN of K once
// and does 4*RM*RN multiply-adds with them; per 4 keys, RM vec4s of probabilities and 4*RD4 vec4s
// of V for 16*RM*RD4. Larger RM and RN (tiles with more rows or keys per thread) mean fewer
// workgroup-memory reads per multiply-add; Q streamed from device memory leaves room for them.
//
// The block between the HEADER markers is replaced by constants generated from the plan
// (src/kernels/forward.rs); the defaults below keep this file valid WGSL on its own.

// HEADER BEGIN
const D4: u32 = 16u;      // head_dim / 4
const BM: u32 = 32u;      // query rows per workgroup
const BN: u32 = 32u;      // keys per tile
const TX: u32 = 16u;      // threads along a row
const TY: u32 = 16u;      // thread rows
const BANDED: bool = false;   // a causal mask or a sliding window limits the keys of a row
const SCALED: bool = false;   // scores are scaled before exp2 (softcap or ALiBi need real logits)
const SOFTCAP: bool = false;
const ALIBI: bool = false;
const SINKS: bool = false;
const BIAS: bool = false;     // an additive f32 bias from mask_buf
const KEEP_MASK: bool = false; // a boolean byte mask from mask_buf
const VARLEN: bool = false;   // per-sequence lengths from the prefix sums in mask_buf
const PAGED: bool = false;    // K and V in pages through the block table in mask_buf
const PAGE: u32 = 16u;        // PAGED: tokens per page (a constant, so / and % are cheap)
const WRITE_LSE: bool = true;
// Q is read from device memory (through the cache) in the score loop instead of being kept in
// workgroup memory: the plan sets this for tiles that do not fit otherwise (forced ones, or the
// tuning table's streamed-Q tiles).
const STREAM_Q: bool = false;
// Subgroup tier: the TX threads of a row are TX adjacent lanes of one subgroup, and row maxima and
// sums go through subgroup shuffles instead of workgroup memory. The host writes these functions
// (shuffle offsets below TX) only for devices with SUBGROUP; here they are placeholders.
const SUBGROUP_ROWS: bool = false;
fn lanes_max(x: f32) -> f32 { return x; }
fn lanes_sum(x: f32) -> f32 { return x; }
alias Packed4 = vec4<f32>;
fn unpack4(x: Packed4) -> vec4<f32> { return x; }
fn pack4(x: vec4<f32>) -> Packed4 { return x; }
// HEADER END

const WG: u32 = TX * TY;
const RM: u32 = BM / TY;
const RN: u32 = BN / TX;
const RD4: u32 = (D4 + TX - 1u) / TX;
const FULL_D: bool = D4 % TX == 0u;  // every thread owns RD4 output vec4s: no column checks
const ROW4: u32 = D4 + 1u;      // padded K/V row, in vec4s: consecutive rows start on different banks
const BN4: u32 = (BN + 3u) / 4u; // a probability row in vec4s
const PROW4: u32 = BN4 + 1u;    // padded probability row, in vec4s
// Q rows are not padded: the threads of a row read the same Q vec4 (a broadcast), and the
// different rows that one subgroup reads at once (consecutive ones) are spread over the banks by
// XORing the vec4 column with the row: QSW is the largest power of two up to 8 dividing D4, so the
// swizzled column stays in its row.
const Q_LEN: u32 = select(BM * D4, 1u, STREAM_Q);  // q_tile is unused when Q is streamed
const QSW: u32 = select(select(select(1u, 2u, D4 % 2u == 0u), 4u, D4 % 4u == 0u), 8u, D4 % 8u == 0u);
const RED_LEN: u32 = select(BM * TX, 1u, SUBGROUP_ROWS);  // row_red is unused in the subgroup tier
const LOADS: u32 = (BN * D4 + WG - 1u) / WG;  // vec4s of a K/V tile each thread moves
// Stands for -infinity in scores: finite, so that max() and subtraction stay well defined.
const MASKED: f32 = -3.0e38;
const LN2: f32 = 0.6931471805599453;
const LOG2E: f32 = 1.4426950408889634;
const NEG_INF_BITS: u32 = 0xff800000u;

struct Params {
    seq_q: u32,
    seq_kv: u32,
    group: u32,          // heads_q / heads_kv
    banded_groups: u32,  // read by the tensor-core kernel only (flash_fwd_coop.wgsl)
    scale_log2: f32,     // |softmax_scale| * log2(e); log2(e) when SCALED
    lse_offset: u32,     // in f32 elements
    heads_q: u32,
    score_sign: f32,     // sign of softmax_scale: exact, so scores stay unscaled until exp2
    win_left: i32,       // keys before the diagonal a query sees; -1: unbounded
    win_right: i32,      // keys after the diagonal; -1: unbounded (0 with causal)
    scale: f32,          // softmax_scale, applied before exp2 when SCALED
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

var<workgroup> q_tile: array<vec4<f32>, Q_LEN>;
var<workgroup> kv_tile: array<vec4<f32>, BN * ROW4>;
// Probabilities as vec4s along keys, so that O += P V reads four keys' worth in one load.
var<workgroup> p_tile: array<vec4<f32>, BM * PROW4>;
var<workgroup> row_red: array<f32, RED_LEN>;

@compute @workgroup_size(WG)
fn forward(@builtin(workgroup_id) wid: vec3<u32>, @builtin(local_invocation_index) lid: u32) {
    let m0 = wid.x * BM;
    let head_q = wid.y;
    let batch = wid.z;
    let head_kv = head_q / params.group;
    let tx = lid % TX;
    let ty = lid / TX;
    // This workgroup's sequence: its lengths, and where its tokens start in the packed tensors.
    var seq_q = params.seq_q;
    var seq_kv = params.seq_kv;
    var q_tok0 = 0u;
    var k_tok0 = 0u;
    if (VARLEN) {
        q_tok0 = mask_buf[params.mask_offset + batch];
        seq_q = mask_buf[params.mask_offset + batch + 1u] - q_tok0;
        k_tok0 = mask_buf[params.mask_offset + params.batch + 1u + batch];
        seq_kv = mask_buf[params.mask_offset + params.batch + 2u + batch] - k_tok0;
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

    if (!STREAM_Q) {
        // All loads first, then the stores: a load and its store in the same pass of a loop would
        // wait for each load in turn. A thread moves at most RM * RD4 vec4s of the block
        // (BM * D4 / WG = RM * D4 / TX).
        var q_staged: array<vec4<f32>, RM * RD4>;
        for (var u = 0u; u < RM * RD4; u++) {
            let i = lid + u * WG;
            let r = i / D4;
            var x = vec4<f32>(0.0);
            if (i < BM * D4 && m0 + r < seq_q) {
                x = unpack4(q_buf[q_base + (m0 + r) * params.q.z + i % D4]);
            }
            q_staged[u] = x;
        }
        for (var u = 0u; u < RM * RD4; u++) {
            let i = lid + u * WG;
            let r = i / D4;
            if (i < BM * D4) {
                q_tile[r * D4 + ((i % D4) ^ (r % QSW))] = q_staged[u];
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

    // Where this thread's Q rows start in q_buf when Q is streamed; rows past the end read the
    // last row: finite scores that are never written.
    var q_row: array<u32, RM>;
    for (var i = 0u; i < RM; i++) {
        q_row[i] = q_base + min(m0 + ty + i * TY, seq_q - 1u) * params.q.z;
    }

    var m_run: array<f32, RM>;
    var tile_max: array<f32, RM>;  // SUBGROUP_ROWS: this tile's row maxima
    var l_run: array<f32, RM>;
    var acc: array<vec4<f32>, RM * RD4>;
    for (var i = 0u; i < RM; i++) {
        m_run[i] = MASKED;
        l_run[i] = 0.0;
    }
    for (var i = 0u; i < RM * RD4; i++) {
        acc[i] = vec4<f32>(0.0);
    }

    // Each thread moves LOADS vec4s of every K and V tile: global memory -> registers (`staged`),
    // issued just before a compute phase so that their latency hides behind it, then registers ->
    // kv_tile after the next barrier.
    var staged: array<vec4<f32>, LOADS>;
    for (var u = 0u; u < LOADS; u++) {
        let i = lid + u * WG;
        var x = vec4<f32>(0.0);
        if (i < BN * D4 && kv_start + i / D4 < seq_kv) {
            x = unpack4(k_buf[key_row(k_base, params.k, batch, kv_start + i / D4) + i % D4]);
        }
        staged[u] = x;
    }

    for (var n0 = kv_start; n0 < kv_end; n0 += BN) {
        // The previous tile's readers of kv_tile, p_tile and row_red are done (and q_tile is complete).
        workgroupBarrier();
        for (var u = 0u; u < LOADS; u++) {
            let i = lid + u * WG;
            if (i < BN * D4) {
                kv_tile[(i / D4) * ROW4 + i % D4] = staged[u];
            }
        }
        workgroupBarrier();
        // V of this tile, in flight while the scores are computed.
        for (var u = 0u; u < LOADS; u++) {
            let i = lid + u * WG;
            var x = vec4<f32>(0.0);
            if (i < BN * D4 && n0 + i / D4 < seq_kv) {
                x = unpack4(v_buf[key_row(v_base, params.v, batch, n0 + i / D4) + i % D4]);
            }
            staged[u] = x;
        }

        // S = Q K^T for this thread's RM x RN scores.
        var s: array<f32, RM * RN>;
        for (var i = 0u; i < RM * RN; i++) {
            s[i] = 0.0;
        }
        // The host unrolls this loop where the plan says so (Plan::unroll_qk): each read then takes
        // a constant offset and no loop state moves between registers.
        for (var c = 0u; c < D4; c++) {
            // Every operand read once into registers, then the RM x RN outer product.
            var qv: array<vec4<f32>, RM>;
            for (var i = 0u; i < RM; i++) {
                if (STREAM_Q) {
                    qv[i] = unpack4(q_buf[q_row[i] + c]);
                } else {
                    let r = ty + i * TY;
                    qv[i] = q_tile[r * D4 + (c ^ (r % QSW))];
                }
            }
            var kv: array<vec4<f32>, RN>;
            for (var j = 0u; j < RN; j++) {
                kv[j] = kv_tile[(tx + j * TX) * ROW4 + c];
            }
            // A chain of fma rather than dot() + add: four multiply-adds, not a multiply, three
            // multiply-adds and an add.
            for (var i = 0u; i < RM; i++) {
                for (var j = 0u; j < RN; j++) {
                    var x = s[i * RN + j];
                    x = fma(qv[i].x, kv[j].x, x);
                    x = fma(qv[i].y, kv[j].y, x);
                    x = fma(qv[i].z, kv[j].z, x);
                    s[i * RN + j] = fma(qv[i].w, kv[j].w, x);
                }
            }
        }

        // Score modifiers, the mask, and this thread's part of each row max.
        for (var i = 0u; i < RM; i++) {
            let row = m0 + ty + i * TY;
            let diag = i32(row) + diag_offset;
            var part_max = MASKED;
            for (var j = 0u; j < RN; j++) {
                let key = n0 + tx + j * TX;
                var visible = key < seq_kv;
                if (BANDED) {
                    visible = visible && (params.win_left < 0 || i32(key) >= diag - params.win_left);
                    visible = visible && (params.win_right < 0 || i32(key) <= diag + params.win_right);
                }
                var x = s[i * RN + j] * params.score_sign;
                if (SCALED) {
                    x = s[i * RN + j] * params.scale;
                    if (SOFTCAP) {
                        // Clamped: tanh is +-1 in f32 well before 15, and some backends compute it
                        // through exp, which overflows for large arguments.
                        x = params.softcap * tanh(clamp(x / params.softcap, -15.0, 15.0));
                    }
                    if (ALIBI) {
                        x -= slope * f32(abs(diag - i32(key)));
                    }
                }
                if ((BIAS || KEEP_MASK) && visible && row < seq_q) {
                    let at = params.mask_offset + batch * params.mask_batch_stride + head_q * params.mask_head_stride
                        + row * seq_kv + key;
                    if (BIAS) {
                        let bits = mask_buf[at];
                        visible = bits != NEG_INF_BITS;
                        x += select(0.0, bitcast<f32>(bits), visible);
                    }
                    if (KEEP_MASK) {
                        visible = ((mask_buf[at / 4u] >> ((at % 4u) * 8u)) & 0xffu) != 0u;
                    }
                }
                x = select(MASKED, x, visible);
                s[i * RN + j] = x;
                part_max = max(part_max, x);
            }
            if (SUBGROUP_ROWS) {
                tile_max[i] = lanes_max(part_max);
            } else {
                row_red[(ty + i * TY) * TX + tx] = part_max;
            }
        }
        // Also needed in the subgroup tier: V overwrites K in kv_tile below.
        workgroupBarrier();

        // Online softmax: new row max, rescale what was accumulated, probabilities of this tile.
        for (var i = 0u; i < RM; i++) {
            let r = ty + i * TY;
            var m_new = m_run[i];
            if (SUBGROUP_ROWS) {
                m_new = max(m_new, tile_max[i]);
            } else {
                for (var t = 0u; t < TX; t++) {
                    m_new = max(m_new, row_red[r * TX + t]);
                }
            }
            // Scores are kept unscaled and the scale is applied inside one fma, as FlashAttention does:
            // the rounding of m_new * scale_log2 is common to the whole row and cancels in O.
            let alpha = select(exp2((m_run[i] - m_new) * params.scale_log2), 0.0, m_run[i] <= MASKED);
            let m_scaled = m_new * params.scale_log2;
            m_run[i] = m_new;
            var l_new = l_run[i] * alpha;
            for (var c = 0u; c < RD4; c++) {
                acc[i * RD4 + c] *= alpha;
            }
            for (var j = 0u; j < RN; j++) {
                let x = s[i * RN + j];
                let pr = select(0.0, exp2(fma(x, params.scale_log2, -m_scaled)), x > MASKED);
                l_new += pr;
                let key = tx + j * TX;
                p_tile[r * PROW4 + key / 4u][key % 4u] = pr;
            }
            l_run[i] = l_new;
        }
        // K is no longer read (everyone passed the barrier above): V takes its place.
        for (var u = 0u; u < LOADS; u++) {
            let i = lid + u * WG;
            if (i < BN * D4) {
                kv_tile[(i / D4) * ROW4 + i % D4] = staged[u];
            }
        }
        workgroupBarrier();
        // K of the next tile, in flight while P V is accumulated.
        if (n0 + BN < kv_end) {
            for (var u = 0u; u < LOADS; u++) {
                let i = lid + u * WG;
                var x = vec4<f32>(0.0);
                if (i < BN * D4 && n0 + BN + i / D4 < seq_kv) {
                    x = unpack4(k_buf[key_row(k_base, params.k, batch, n0 + BN + i / D4) + i % D4]);
                }
                staged[u] = x;
            }
        }

        // O += P V for this thread's rows and vec4 columns, four keys at a time: RM vec4s of P
        // and 4 * RD4 vec4s of V per 16 * RM * RD4 multiply-adds.
        // Unrolled by the host too where the plan says so (Plan::unroll_pv).
        for (var j4 = 0u; j4 < BN4; j4++) {
            var pv: array<vec4<f32>, RM>;
            for (var i = 0u; i < RM; i++) {
                pv[i] = p_tile[(ty + i * TY) * PROW4 + j4];
            }
            for (var k = 0u; k < 4u; k++) {
                let j = j4 * 4u + k;
                // Constant true when BN is a multiple of 4 (the padding keys do not exist).
                if (BN % 4u == 0u || j < BN) {
                    for (var c = 0u; c < RD4; c++) {
                        let d4 = tx + c * TX;
                        if (FULL_D || d4 < D4) {
                            let vv = kv_tile[j * ROW4 + d4];
                            for (var i = 0u; i < RM; i++) {
                                acc[i * RD4 + c] = fma(vec4<f32>(pv[i][k]), vv, acc[i * RD4 + c]);
                            }
                        }
                    }
                }
            }
        }
    }

    // Each thread summed only its own key columns: add the TX parts of every row.
    if (!SUBGROUP_ROWS) {
        workgroupBarrier();
        for (var i = 0u; i < RM; i++) {
            row_red[(ty + i * TY) * TX + tx] = l_run[i];
        }
        workgroupBarrier();
    }
    let o_base = params.o.x + batch * params.o.y + head_q * params.o.w + q_tok0 * params.o.z;
    for (var i = 0u; i < RM; i++) {
        let r = ty + i * TY;
        let row = m0 + r;
        var l = 0.0;
        if (SUBGROUP_ROWS) {
            l = lanes_sum(l_run[i]);
        } else {
            for (var t = 0u; t < TX; t++) {
                l += row_red[r * TX + t];
            }
        }
        if (row < seq_q) {
            // A row that sees no key has l == 0: its output is 0 and its LSE -infinity (or the sink).
            var inv = select(0.0, 1.0 / l, l > 0.0);
            var lse = m_run[i] * params.scale_log2 * LN2 + log(l);
            if (SINKS) {
                // The sink joins the denominator: rescale both to the larger of row max and sink.
                let m2 = m_run[i] * params.scale_log2;
                let sink2 = sinks_buf[params.sinks_offset + head_q] * LOG2E;
                let top = select(sink2, max(m2, sink2), l > 0.0);
                let kept = select(0.0, exp2(m2 - top), l > 0.0);
                let total = l * kept + exp2(sink2 - top);
                inv = kept / total;
                lse = top * LN2 + log(total);
            }
            for (var c = 0u; c < RD4; c++) {
                let d4 = tx + c * TX;
                if (FULL_D || d4 < D4) {
                    o_buf[o_base + row * params.o.z + d4] = pack4(acc[i * RD4 + c] * inv);
                }
            }
            if (WRITE_LSE && tx == 0u) {
                var at = params.lse_offset + (batch * params.heads_q + head_q) * seq_q + row;
                if (VARLEN) {
                    at = params.lse_offset + head_q * params.total_q + q_tok0 + row;
                }
                lse_buf[at] = select(NEG_INF_BITS, bitcast<u32>(lse), l > 0.0 || SINKS);
            }
        }
    }
}
