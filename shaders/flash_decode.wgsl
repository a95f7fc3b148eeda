// Attention over a KV cache (decode, chunked prefill, or both in one dispatch), portable tier:
// plain WGSL, f32 accumulation, split-KV (flash-decoding).
//
// Workgroup (KV head + heads_kv * split, work item). A work item is one block of BM packed query
// rows of one sequence; a packed row is (query token, query head of the KV head's group), so the
// query heads that share a KV head read each K/V element once. The sequence's visible keys are cut
// into tiles of BN keys, and split s takes tiles s, s + splits, s + 2 * splits, ... (interleaved,
// not one contiguous range): the KV heads vary fastest in the grid, then the splits, so the
// workgroups running at the same time read whole cache rows of neighbouring tiles, a streaming
// pattern that keeps DRAM pages and TLB entries shared. Per tile:
//   scores: thread (kj, kx) reads chunks kx, kx + TXK, ... of keys kj, kj + WG / TXK, ... (KK
//           keys: vec4 loads, straight from device memory into registers), dots them with Q (each
//           Q chunk read from workgroup memory serves KK keys), and the TXK parts meet in `red`;
//   softmax: the tile's keys fall into KY key groups (keys y, y + KY, ...); thread (row r, group y)
//           finishes those scores, keeps the group's running max and sum for row r (online
//           softmax per group, so no tile-wide row max is needed) and leaves the probabilities
//           and the group's rescale factor in workgroup memory: each exponential is taken once.
//           The running max only moves when a tile's max passes it by more than SLACK (log2
//           units), so almost every tile has rescale factor 1 and skips rescaling the accumulators;
//   P V:    thread (vy, vx) accumulates group vy's keys into head_dim chunks vx, vx + TXV, ...
//           The KY partial states of each row merge at the end.
// The next tile's K and V are loaded into registers before the current tile is computed, and
// (for PAGED) the block table is read one tile before that, so a page lookup never delays a load.
// With one split the result is O (and LSE); with more, each split writes a normalised partial O
// and its LSE (f32) to `part_buf`, and decode_combine.wgsl merges them by LSE.
//
// K/V rows are found through a block table when PAGED: key t of sequence b lives in page
// block_table[b][t / PAGE], row t % PAGE. Otherwise in cache entry b, row t. The caches are bound
// from page (entry) `page_base` on: a cache larger than one binding runs as several dispatches,
// each over the sequences whose pages fit one window.
//
// The block between the HEADER markers is replaced by constants generated from the plan
// (src/kernels/decode.rs); the defaults below keep this file valid WGSL on its own.

// HEADER BEGIN
const D4: u32 = 32u;      // head_dim / 4
const BM: u32 = 4u;       // packed query rows per workgroup
const BN: u32 = 32u;      // keys per tile
const WG: u32 = 128u;     // invocations (BN * TXK / KK)
const TXK: u32 = 4u;      // threads per key while computing scores
const KK: u32 = 1u;       // keys per thread while computing scores
const TXV: u32 = 32u;     // threads along head_dim while accumulating P V
const PAGED: bool = false;
const PAGE: u32 = 16u;     // PAGED: keys per page (a constant, so / and % are cheap)
const CAUSAL: bool = false;
const SPLIT: bool = false;     // write partial states for the combine kernel
const WRITE_LSE: bool = true;
alias Packed4 = vec4<f32>;
fn unpack4(x: Packed4) -> vec4<f32> { return x; }
fn pack4(x: vec4<f32>) -> Packed4 { return x; }
// HEADER END

const KY: u32 = WG / TXV;                   // key groups of the P V phase
const KPT: u32 = BN / KY;                   // keys per thread per tile in the P V phase
const RKD: u32 = (D4 + TXK - 1u) / TXK;     // head_dim chunks per thread and key, scores
const KJ: u32 = WG / TXK;                   // keys scored at once (a thread's keys are KJ apart)
const RVD: u32 = (D4 + TXV - 1u) / TXV;     // head_dim chunks per thread, P V
const SR: u32 = (BM * KY + WG - 1u) / WG;   // (row, key group) softmax states per thread
const QL: u32 = (BM * D4 + WG - 1u) / WG;   // Q chunks each thread loads
// Stands for -infinity in scores: finite, so that max() and subtraction stay well defined.
const MASKED: f32 = -3.0e38;
const LN2: f32 = 0.6931471805599453;
// Probabilities may reach 2^SLACK before the running max moves: exact in f32, and sums of up to
// 2^32 keys stay far from overflow.
const SLACK: f32 = 8.0;
const NEG_INF_BITS: u32 = 0xff800000u;

struct Params {
    heads_q: u32,
    group: u32,          // heads_q / heads_kv
    splits: u32,
    part_tokens: u32,    // SPLIT: query tokens with partial states (of the sequences run here)
    scale_log2: f32,     // softmax_scale * log2(e)
    part_cu_offset: u32, // meta: each sequence's first partial-state token
    pages_per_seq: u32,  // PAGED: columns of the block table
    append: u32,         // 1: each query token's K/V was appended after the cached ones
    cu_offset: u32,      // meta: cu_seqlens_q (batch + 1 entries)
    lens_offset: u32,    // meta: cached tokens per sequence
    work_offset: u32,    // meta: (sequence, block) per work item
    table_offset: u32,   // meta: block table, (batch, pages_per_seq)
    lse_offset: u32,     // in f32 elements
    part_lse_offset: u32,  // SPLIT: where the partial LSEs start in part_buf, in f32 elements
    page_base: u32,      // first page (cache entry) of the window the caches are bound from
    heads_kv: u32,
    // offset, batch-or-page stride, seq stride, head stride, in vec4 units
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
@group(0) @binding(6) var<storage, read> seq_meta: array<u32>;
// SPLIT: partial O (f32, [split][row][head_dim]) then partial LSE ([split][row]), as raw bits;
// rows count the query tokens of the sequences run here only (from part_cu_offset).
@group(0) @binding(7) var<storage, read_write> part_buf: array<u32>;

var<workgroup> q_tile: array<vec4<f32>, BM * D4>;
// Score parts: (row r, key j, part t) at (r * BN + j) * TXK + t + r; the shift by r spreads
// the softmax threads of different rows over different banks.
var<workgroup> red: array<f32, BM * BN * TXK + BM>;
var<workgroup> p_tile: array<f32, BM * BN>;       // probabilities of the tile
var<workgroup> alpha_tile: array<f32, BM * KY>;   // rescale factor per (row, key group)
var<workgroup> ml: array<f32, 2u * KY * BM>;

// Index (vec4 units, head 0, before the tensor's offset) of key `key` of sequence `seq`; 0 for a
// key at or past kv_end (its loads are masked, and the block table is not read past the end).
fn kv_row(seq: u32, key: u32, kv_end: u32, page_stride: u32, seq_stride: u32) -> u32 {
    if (key >= kv_end) {
        return 0u;
    }
    if (PAGED) {
        let page = seq_meta[params.table_offset + seq * params.pages_per_seq + key / PAGE];
        return (page - params.page_base) * page_stride + (key % PAGE) * seq_stride;
    }
    return (seq - params.page_base) * page_stride + key * seq_stride;
}

// Rows of this thread's V keys of the tile at n0: keys n0 + vy + u * KY.
fn v_rows(seq: u32, n0: u32, kv_end: u32, vy: u32) -> array<u32, KPT> {
    var rows: array<u32, KPT>;
    for (var u = 0u; u < KPT; u++) {
        rows[u] = kv_row(seq, n0 + vy + u * KY, kv_end, params.v.y, params.v.z);
    }
    return rows;
}

// Rows of this thread's K keys of the tile at n0: keys n0 + kj + u * KJ.
fn k_rows(seq: u32, n0: u32, kv_end: u32, kj: u32) -> array<u32, KK> {
    var rows: array<u32, KK>;
    for (var u = 0u; u < KK; u++) {
        rows[u] = kv_row(seq, n0 + kj + u * KJ, kv_end, params.k.y, params.k.z);
    }
    return rows;
}

// This thread's head_dim chunks kx, kx + TXK, ... of its keys of the tile at n0 (zero past
// kv_end), as stored: half the registers of f32 for f16.
fn load_k(k_head: u32, rows: array<u32, KK>, n0: u32, kv_end: u32, kx: u32, kj: u32) -> array<Packed4, KK * RKD> {
    var kreg: array<Packed4, KK * RKD>;
    for (var u = 0u; u < KK; u++) {
        let valid = n0 + kj + u * KJ < kv_end;
        for (var c = 0u; c < RKD; c++) {
            let d4 = kx + c * TXK;
            var x = Packed4();
            if (valid && d4 < D4) {
                x = k_buf[k_head + rows[u] + d4];
            }
            kreg[u * RKD + c] = x;
        }
    }
    return kreg;
}

// This thread's V of the tile at n0: keys n0 + vy + u * KY (rows from v_rows), head_dim chunks
// vx + c * TXV.
fn load_v(v_head: u32, rows: array<u32, KPT>, n0: u32, kv_end: u32, vx: u32, vy: u32) -> array<Packed4, KPT * RVD> {
    var vreg: array<Packed4, KPT * RVD>;
    for (var u = 0u; u < KPT; u++) {
        let valid = n0 + vy + u * KY < kv_end;
        for (var c = 0u; c < RVD; c++) {
            let d4 = vx + c * TXV;
            var x = Packed4();
            if (valid && d4 < D4) {
                x = v_buf[v_head + rows[u] + d4];
            }
            vreg[u * RVD + c] = x;
        }
    }
    return vreg;
}

// Partial dot products of Q with this thread's keys of the tile; the TXK parts of each score
// meet in `red`. Chains of fma: dot() and then + take a multiply and an add where the chain has
// a multiply-add; 1.4% faster on the H200 at KV 32k and 128k (medians;
// bench-results/h200-2026-12-01-session21, call 9).
fn tile_scores(kreg: ptr<function, array<Packed4, KK * RKD>>, kx: u32, kj: u32) {
    for (var r = 0u; r < BM; r++) {
        var part: array<f32, KK>;
        for (var c = 0u; c < RKD; c++) {
            let d4 = kx + c * TXK;
            if (d4 < D4) {
                let q = q_tile[r * D4 + d4];
                for (var u = 0u; u < KK; u++) {
                    let k = unpack4((*kreg)[u * RKD + c]);
                    var x = fma(q.x, k.x, part[u]);
                    x = fma(q.y, k.y, x);
                    x = fma(q.z, k.z, x);
                    part[u] = fma(q.w, k.w, x);
                }
            }
        }
        for (var u = 0u; u < KK; u++) {
            red[(r * BN + kj + u * KJ) * TXK + kx + r] = part[u];
        }
    }
}

// Softmax per (row, key group) of the tile at n0: finish the scores, update the group's running
// state, and leave the probabilities and the rescale factor for the P V phase.
fn tile_softmax(n0: u32, kv_end: u32, lid: u32, row0: u32, g: u32, diag_offset: i32,
                m_state: ptr<function, array<f32, SR>>, l_state: ptr<function, array<f32, SR>>) {
    for (var u = 0u; u < SR; u++) {
        let i = lid + u * WG;
        if (i < BM * KY) {
            let r = i / KY;
            let y = i % KY;
            let tok = (row0 + r) / g;
            var s: array<f32, KPT>;
            var m_tile = MASKED;
            for (var k = 0u; k < KPT; k++) {
                let j = y + k * KY;
                var x = 0.0;
                for (var t = 0u; t < TXK; t++) {
                    x += red[(r * BN + j) * TXK + t + r];
                }
                var visible = n0 + j < kv_end;
                if (CAUSAL) {
                    visible = visible && i32(n0 + j) <= i32(tok) + diag_offset;
                }
                x = select(MASKED, x * params.scale_log2, visible);
                s[k] = x;
                m_tile = max(m_tile, x);
            }
            let m_old = (*m_state)[u];
            // Lazy max: keep the old one (alpha exactly 1) unless this tile passes it by SLACK.
            let m_new = select(m_old, m_tile, m_tile > m_old + SLACK);
            let alpha = select(exp2(m_old - m_new), 0.0, m_old <= MASKED);
            var l = (*l_state)[u] * alpha;
            for (var k = 0u; k < KPT; k++) {
                let pr = select(0.0, exp2(s[k] - m_new), s[k] > MASKED);
                l += pr;
                p_tile[r * BN + y + k * KY] = pr;
            }
            (*m_state)[u] = m_new;
            (*l_state)[u] = l;
            alpha_tile[r * KY + y] = alpha;
        }
    }
}

// O += P V for this thread's key group and head_dim chunks.
fn tile_pv(vreg: ptr<function, array<Packed4, KPT * RVD>>, acc: ptr<function, array<vec4<f32>, BM * RVD>>, vy: u32) {
    for (var r = 0u; r < BM; r++) {
        let alpha = alpha_tile[r * KY + vy];
        if (alpha != 1.0) {
            for (var c = 0u; c < RVD; c++) {
                (*acc)[r * RVD + c] *= alpha;
            }
        }
        for (var u = 0u; u < KPT; u++) {
            let pr = p_tile[r * BN + vy + u * KY];
            for (var c = 0u; c < RVD; c++) {
                (*acc)[r * RVD + c] += pr * unpack4((*vreg)[u * RVD + c]);
            }
        }
    }
}

@compute @workgroup_size(WG)
fn decode(@builtin(workgroup_id) wid: vec3<u32>, @builtin(local_invocation_index) lid: u32) {
    // KV heads vary fastest, then splits: see the header.
    let head_kv = wid.x % params.heads_kv;
    let split = wid.x / params.heads_kv;
    let work = wid.y;
    let seq = seq_meta[params.work_offset + 2u * work];
    let block = seq_meta[params.work_offset + 2u * work + 1u];
    let q_tok0 = seq_meta[params.cu_offset + seq];
    let seq_q = seq_meta[params.cu_offset + seq + 1u] - q_tok0;
    var seq_kv = seq_meta[params.lens_offset + seq];
    if (params.append != 0u) {
        seq_kv += seq_q;
    }
    // Query token i's diagonal key is i + diag_offset (causal, aligned bottom-right).
    let diag_offset = i32(seq_kv) - i32(seq_q);
    let g = params.group;
    let row0 = block * BM;

    // The keys this block sees; this split takes every splits-th tile of them.
    var kv_end = seq_kv;
    if (CAUSAL) {
        let last_tok = min((row0 + BM - 1u) / g, seq_q - 1u);
        kv_end = u32(clamp(i32(last_tok) + diag_offset + 1, 0, i32(seq_kv)));
    }
    let stride = params.splits * BN;

    for (var u = 0u; u < QL; u++) {
        let i = lid + u * WG;
        if (i < BM * D4) {
            let r = i / D4;
            let pr = row0 + r;
            let tok = pr / g;
            let hq = head_kv * g + pr % g;
            var x = vec4<f32>(0.0);
            if (tok < seq_q) {
                x = unpack4(q_buf[params.q.x + (q_tok0 + tok) * params.q.z + hq * params.q.w + i % D4]);
            }
            q_tile[i] = x;
        }
    }
    workgroupBarrier();

    let kx = lid % TXK;
    let kj = lid / TXK;
    let vx = lid % TXV;
    let vy = lid / TXV;
    // Running max (log2 units) and sum of (row, key group) lid + u * WG, for u < SR.
    var m_state: array<f32, SR>;
    var l_state: array<f32, SR>;
    for (var u = 0u; u < SR; u++) {
        m_state[u] = MASKED;
        l_state[u] = 0.0;
    }
    var acc: array<vec4<f32>, BM * RVD>;
    for (var i = 0u; i < BM * RVD; i++) {
        acc[i] = vec4<f32>(0.0);
    }
    let k_head = params.k.x + head_kv * params.k.w;
    let v_head = params.v.x + head_kv * params.v.w;

    // K and V of the next tile load while a tile is computed; their rows (block table reads, when
    // paged) are found one tile earlier still, so that the loads never wait for them.
    var n0 = split * BN;
    var kreg = load_k(k_head, k_rows(seq, n0, kv_end, kj), n0, kv_end, kx, kj);
    var vreg = load_v(v_head, v_rows(seq, n0, kv_end, vy), n0, kv_end, vx, vy);
    var k_row = k_rows(seq, n0 + stride, kv_end, kj);
    var v_row = v_rows(seq, n0 + stride, kv_end, vy);
    for (; n0 < kv_end; n0 += stride) {
        let n1 = n0 + stride;
        var k_next: array<Packed4, KK * RKD>;
        var v_next: array<Packed4, KPT * RVD>;
        if (n1 < kv_end) {
            k_next = load_k(k_head, k_row, n1, kv_end, kx, kj);
            v_next = load_v(v_head, v_row, n1, kv_end, vx, vy);
            k_row = k_rows(seq, n1 + stride, kv_end, kj);
            v_row = v_rows(seq, n1 + stride, kv_end, vy);
        }
        tile_scores(&kreg, kx, kj);
        workgroupBarrier();
        tile_softmax(n0, kv_end, lid, row0, g, diag_offset, &m_state, &l_state);
        workgroupBarrier();
        tile_pv(&vreg, &acc, vy);
        kreg = k_next;
        vreg = v_next;
    }

    // Merge the KY key groups: the row's max and sum over groups, then the accumulators.
    for (var u = 0u; u < SR; u++) {
        let i = lid + u * WG;
        if (i < BM * KY) {
            let r = i / KY;
            let y = i % KY;
            ml[(y * BM + r) * 2u] = m_state[u];
            ml[(y * BM + r) * 2u + 1u] = l_state[u];
        }
    }
    workgroupBarrier();
    var m_all: array<f32, BM>;
    var l_all: array<f32, BM>;
    for (var r = 0u; r < BM; r++) {
        var m = MASKED;
        for (var y = 0u; y < KY; y++) {
            m = max(m, ml[(y * BM + r) * 2u]);
        }
        var l = 0.0;
        for (var y = 0u; y < KY; y++) {
            let my = ml[(y * BM + r) * 2u];
            l += select(ml[(y * BM + r) * 2u + 1u] * exp2(my - m), 0.0, my <= MASKED);
        }
        m_all[r] = m;
        l_all[r] = l;
        let mine = ml[(vy * BM + r) * 2u];
        let f = select(exp2(mine - m), 0.0, mine <= MASKED);
        for (var c = 0u; c < RVD; c++) {
            acc[r * RVD + c] *= f;
        }
    }
    // Groups 0 .. KY-2 add up in q_tile (Q is no longer read); the last group adds that sum to its
    // own and writes the result.
    for (var y = 0u; y < KY; y++) {
        if (vy == y && y + 1u < KY) {
            for (var r = 0u; r < BM; r++) {
                for (var c = 0u; c < RVD; c++) {
                    let d4 = vx + c * TXV;
                    if (d4 < D4) {
                        var x = acc[r * RVD + c];
                        if (y > 0u) {
                            x += q_tile[r * D4 + d4];
                        }
                        q_tile[r * D4 + d4] = x;
                    }
                }
            }
        }
        workgroupBarrier();
    }
    if (vy + 1u == KY) {
        let rows_total = params.part_tokens * params.heads_q;
        let part_tok0 = seq_meta[params.part_cu_offset + seq];
        for (var r = 0u; r < BM; r++) {
            let pr = row0 + r;
            let tok = pr / g;
            if (tok < seq_q) {
                let hq = head_kv * g + pr % g;
                let t = q_tok0 + tok;
                let l = l_all[r];
                // A row that sees no key (in this split) has l == 0: O = 0, LSE = -infinity.
                let inv = select(0.0, 1.0 / l, l > 0.0);
                let lse_bits = select(NEG_INF_BITS, bitcast<u32>((m_all[r] + log2(l)) * LN2), l > 0.0);
                let row = t * params.heads_q + hq;
                let part_row = (part_tok0 + tok) * params.heads_q + hq;
                for (var c = 0u; c < RVD; c++) {
                    let d4 = vx + c * TXV;
                    if (d4 < D4) {
                        var x = acc[r * RVD + c];
                        if (KY > 1u) {
                            x += q_tile[r * D4 + d4];
                        }
                        x *= inv;
                        if (SPLIT) {
                            let at = ((split * rows_total + part_row) * D4 + d4) * 4u;
                            part_buf[at] = bitcast<u32>(x.x);
                            part_buf[at + 1u] = bitcast<u32>(x.y);
                            part_buf[at + 2u] = bitcast<u32>(x.z);
                            part_buf[at + 3u] = bitcast<u32>(x.w);
                        } else {
                            o_buf[params.o.x + t * params.o.z + hq * params.o.w + d4] = pack4(x);
                        }
                    }
                }
                if (vx == 0u) {
                    if (SPLIT) {
                        part_buf[params.part_lse_offset + split * rows_total + part_row] = lse_bits;
                    } else if (WRITE_LSE) {
                        lse_buf[params.lse_offset + row] = lse_bits;
                    }
                }
            }
        }
    }
}
