// Attention over a KV cache (decode, chunked prefill, or both in one dispatch), subgroup tier:
// f32 accumulation, split-KV (flash-decoding), and no workgroup barrier in the key loop.
//
// Same grid, bindings, work items and outputs as flash_decode.wgsl (the portable tier), which
// passes every tile through workgroup memory between three phases. Here each key is owned by TXK
// adjacent lanes of one subgroup from its scores to its share of P V:
//   lane (stream, kx) keeps Q's head_dim chunks (of 4 elements) chunk(kx, 0), chunk(kx, 1), ... of
//   the BM packed rows in registers (pre-scaled by softmax_scale * log2(e)): kx, kx + TXK, ... or,
//   where K and V are read 16 bytes at a time (KV_PER = 2), the pairs 2 kx, 2 kx + 1, then
//   2 (kx + TXK), ... It loads the same chunks of its keys' K and V
//   (stream s takes keys s KK .. s KK + KK - 1 of each tile of BN = S * KK keys) and dots Q with K. The
//   BM x TXK partial dot products of a key meet in a reduce-scatter through subgroup shuffles
//   (each step halves the rows a lane carries), which leaves lane kx the whole score of row
//   kx / LPR (LPR = TXK / BM lanes per row). That lane runs the row's online softmax for its
//   stream (running max and sum) and takes the exponentials; the probabilities (and, when the max
//   moves, the rescale factors) go to the key's other lanes by shuffles, and every lane
//   accumulates P V into its chunks of O for all BM rows.
// The running max only moves when a tile passes it by more than SLACK (log2 units), so almost
// every tile skips rescaling. Each lane loads all KK keys' K and V of a tile at its top (all of
// those loads in flight at once), and (PAGED) the block table is read one tile before that. One
// register set, not two taking turns (the next tile loading while this one computes): on the
// H200 that fits 128 registers, so 8 workgroups share an SM instead of 6, and with 8 keys per
// lane the step is 12-14% faster than with two sets of 4 keys (bench-results/
// h200-2026-11-30-session8). The S streams merge once, at the end, through workgroup memory.
//
// With one split the result is O (and LSE); with more, each split writes a normalised partial O
// and its LSE (f32) to `part_buf`, merged by LSE either by decode_combine.wgsl after this dispatch
// or (MERGE) here, by the last workgroup of each work item and KV head to finish: each counts in
// on a counter after writing, and the one that completes the count reads the others' states (see
// merge_splits), which saves a dispatch and the barrier before it. K/V rows are found as in
// flash_decode.wgsl (block table when PAGED; caches bound from entry `page_base` on).
//
// The TXK lanes of a key must be adjacent lanes of one subgroup: TXK is a power of two no larger
// than the device's smallest subgroup size (BM no larger than TXK), and the host writes
// `row_sums` with shuffle offsets below TXK. The block between the HEADER markers is replaced by constants generated from the plan
// (src/kernels/decode.rs); the defaults below keep this file valid WGSL on its own.

// HEADER BEGIN
const D4: u32 = 32u;      // head_dim / 4
const BM: u32 = 4u;       // packed query rows per workgroup
const WG: u32 = 128u;     // invocations
const TXK: u32 = 16u;     // lanes per key
const KK: u32 = 2u;       // keys per stream and tile
const PAGED: bool = false;
const PAGE: u32 = 16u;    // PAGED: keys per page (a constant, so / and % are cheap)
const CAUSAL: bool = false;
const SPLIT: bool = false;     // write partial states (merged by a combine pass, or MERGE)
const MERGE: bool = false;     // SPLIT: the last workgroup of a work item and KV head merges them
const MS: u32 = 8u;             // MERGE: splits read at once
// The words of part_buf and their access: atomic when MERGE (plain u32 otherwise, where
// part_count_in is never called).
alias PartWord = atomic<u32>;
fn part_load(at: u32) -> u32 { return atomicLoad(&part_buf[at]); }
fn part_store(at: u32, x: u32) { atomicStore(&part_buf[at], x); }
fn part_count_in(at: u32) -> u32 { return atomicAdd(&part_buf[at], 1u); }
const WRITE_LSE: bool = true;
alias Packed4 = vec4<f32>;
fn unpack4(x: Packed4) -> vec4<f32> { return x; }
fn pack4(x: vec4<f32>) -> Packed4 { return x; }
// How K and V are read: KV_PER consecutive head_dim chunks per load (16 bytes for 2-byte types
// where the plan can, otherwise one Packed4); chunk i of a load as f32.
alias KvVec = Packed4;
const KV_PER: u32 = 1u;
fn kv_chunk(x: KvVec, i: u32) -> vec4<f32> { return unpack4(x); }
// The BM rows' partial dot products of lane kx -> row kx / LPR's score, summed over the TXK lanes
// of the key: a step with offset o pairs the lanes that differ in bit o; the one with that bit
// set keeps the upper half of the rows it carries and sends the lower half, its partner the
// reverse. Once one row is left, plain butterfly steps finish the sum.
fn row_sums(x: array<f32, BM>, kx: u32) -> f32 {
    let h0 = (kx & 8u) != 0u;
    let a0 = select(x[0], x[2], h0) + subgroupShuffleXor(select(x[2], x[0], h0), 8u);
    let a1 = select(x[1], x[3], h0) + subgroupShuffleXor(select(x[3], x[1], h0), 8u);
    let h1 = (kx & 4u) != 0u;
    var r = select(a0, a1, h1) + subgroupShuffleXor(select(a1, a0, h1), 4u);
    r += subgroupShuffleXor(r, 2u);
    r += subgroupShuffleXor(r, 1u);
    return r;
}
// HEADER END

const S: u32 = WG / TXK;                  // key streams per workgroup
const BN: u32 = S * KK;                   // keys per tile
const RKD: u32 = (D4 + TXK - 1u) / TXK;   // head_dim chunks per lane
const KVR: u32 = RKD / KV_PER;            // K (and V) loads per lane and key
const LPR: u32 = TXK / BM;                // lanes of a key that finish the same row
const TPR: u32 = WG / BM;                 // MERGE: threads per row
const CPR: u32 = (D4 + TPR - 1u) / TPR;   // MERGE: head_dim chunks per thread
const STALE_ROUNDS: u32 = 65536u;        // MERGE: reads of a batch before giving up
const NAN_BITS: u32 = 0x7fc00000u;
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
@group(0) @binding(2) var<storage, read> k_buf: array<KvVec>;
@group(0) @binding(3) var<storage, read> v_buf: array<KvVec>;
@group(0) @binding(4) var<storage, read_write> o_buf: array<Packed4>;
// LSE is written as raw bits so that -infinity (a row that sees no key) needs no float infinity.
@group(0) @binding(5) var<storage, read_write> lse_buf: array<u32>;
@group(0) @binding(6) var<storage, read> seq_meta: array<u32>;
// SPLIT: partial O (f32, [split][row][head_dim]) then partial LSE ([split][row]), as raw bits;
// rows count the query tokens of the sequences run here only (from part_cu_offset). MERGE: then
// one arrival counter per work item and KV head, and every word is atomic (PartWord), so that the
// merging workgroup may read what the others wrote (see merge_splits).
@group(0) @binding(7) var<storage, read_write> part_buf: array<PartWord>;

// The streams' sums of P V, added up one stream after the other at the end.
var<workgroup> o_tile: array<vec4<f32>, BM * D4>;
// Each stream's running max and sum per row, for the merge.
var<workgroup> ml: array<f32, 2u * S * BM>;
// MERGE: this step's tag, and 1 in the workgroup that arrived last.
var<workgroup> step_tag: u32;
var<workgroup> merging: u32;

// (cache entry, row in it) of key `key` of sequence `seq`, relative to the bound window; (0, 0)
// for a key at or past kv_end (its loads are masked, and the block table is not read past the end).
fn key_slot(seq: u32, key: u32, kv_end: u32) -> vec2<u32> {
    if (key >= kv_end) {
        return vec2<u32>(0u);
    }
    if (PAGED) {
        let page = seq_meta[params.table_offset + seq * params.pages_per_seq + key / PAGE];
        return vec2<u32>(page - params.page_base, key % PAGE);
    }
    return vec2<u32>(seq - params.page_base, key);
}

// Slots of this stream's keys of the tile at n0: keys n0 + stream * KK + u. Tiles start at
// multiples of KK, so when KK divides the page size a stream's keys share one page, and one
// block-table read serves them all.
fn key_slots(seq: u32, n0: u32, kv_end: u32, stream: u32) -> array<vec2<u32>, KK> {
    var slots: array<vec2<u32>, KK>;
    let k0 = n0 + stream * KK;
    if (!PAGED || PAGE % KK == 0u) {
        // Rows past kv_end are never loaded.
        let first = key_slot(seq, k0, kv_end);
        for (var u = 0u; u < KK; u++) {
            slots[u] = first + vec2<u32>(0u, u);
        }
    } else {
        for (var u = 0u; u < KK; u++) {
            slots[u] = key_slot(seq, k0 + u, kv_end);
        }
    }
    return slots;
}

// The c-th head_dim chunk (of 4 elements) of lane kx: loads of KV_PER adjacent chunks, the lanes of
// a key side by side.
fn chunk(kx: u32, c: u32) -> u32 {
    return (kx + (c / KV_PER) * TXK) * KV_PER + c % KV_PER;
}

// This lane's head_dim chunks of its keys of the tile at n0 from one cache (`t`: offset,
// entry stride, row stride, head stride; `head`: the KV head's first element), zero past kv_end,
// as stored: half the registers of f32 for f16.
fn load_keys(from_v: bool, t: vec4<u32>, head: u32, slots: array<vec2<u32>, KK>, n0: u32,
             kv_end: u32, stream: u32, kx: u32) -> array<KvVec, KK * KVR> {
    var regs: array<KvVec, KK * KVR>;
    for (var u = 0u; u < KK; u++) {
        let valid = n0 + stream * KK + u < kv_end;
        let base = head + slots[u].x * t.y + slots[u].y * t.z;
        for (var c = 0u; c < KVR; c++) {
            let d4 = chunk(kx, c * KV_PER);
            var x = KvVec();
            if (valid && d4 < D4) {
                if (from_v) {
                    x = v_buf[(base + d4) / KV_PER];
                } else {
                    x = k_buf[(base + d4) / KV_PER];
                }
            }
            regs[u * KVR + c] = x;
        }
    }
    return regs;
}

@compute @workgroup_size(WG)
fn decode(@builtin(workgroup_id) wid: vec3<u32>, @builtin(local_invocation_index) lid: u32,
          @builtin(subgroup_invocation_id) sg_lane: u32) {
    // KV heads vary fastest, then splits (as in flash_decode.wgsl).
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
    // MERGE: this step's tag (bit 0 of every partial word it writes; see merge_splits). The
    // counter holds arrivals of the step before (0 or splits) plus those of this one so far. Read
    // here by the invocation that counts in later, so that the read comes before its own count;
    // the others take the tag from workgroup memory at the end (written there, not here, so that
    // nothing waits for this read before the key loop).
    // The counters follow the partial LSEs; a merging step is one dispatch, so its work items
    // count from 0.
    let counter_at = params.part_lse_offset + params.splits * params.part_tokens * params.heads_q
        + work * params.heads_kv + head_kv;
    var arrived = 0u;
    if (MERGE && lid == 0u) {
        arrived = part_load(counter_at);
    }

    // The keys this block sees; this split takes every splits-th tile of them.
    var kv_end = seq_kv;
    if (CAUSAL) {
        let last_tok = min((row0 + BM - 1u) / g, seq_q - 1u);
        kv_end = u32(clamp(i32(last_tok) + diag_offset + 1, 0, i32(seq_kv)));
    }
    let stride = params.splits * BN;

    let kx = lid % TXK;
    let stream = lid / TXK;
    // The row whose softmax this lane runs, the lane of the key that runs row 0's (the key's
    // lanes are adjacent in the subgroup: lid and sg_lane agree modulo TXK), and the row's last
    // visible key (causal).
    let my_row = kx / LPR;
    let lane0 = sg_lane - kx;
    let my_last = i32((row0 + my_row) / g) + diag_offset;

    // Q chunks of this lane, pre-scaled.
    var q: array<vec4<f32>, BM * RKD>;
    for (var r = 0u; r < BM; r++) {
        let pr = row0 + r;
        let tok = pr / g;
        let hq = head_kv * g + pr % g;
        for (var c = 0u; c < RKD; c++) {
            let d4 = chunk(kx, c);
            var x = vec4<f32>(0.0);
            if (tok < seq_q && d4 < D4) {
                x = unpack4(q_buf[params.q.x + (q_tok0 + tok) * params.q.z + hq * params.q.w + d4]);
            }
            q[r * RKD + c] = x * params.scale_log2;
        }
    }

    // Running max (log2 units) and sum of row my_row over this stream's keys.
    var m = MASKED;
    var l = 0.0;
    var acc: array<vec4<f32>, BM * RKD>;
    for (var i = 0u; i < BM * RKD; i++) {
        acc[i] = vec4<f32>(0.0);
    }
    let k_head = params.k.x + head_kv * params.k.w;
    let v_head = params.v.x + head_kv * params.v.w;

    // K and V of a tile load at its top, all at once; their slots (block table reads, when
    // paged) are found a tile ahead, so that the loads never wait for them.
    var n0 = split * BN;
    var slots = key_slots(seq, n0, kv_end, stream);
    for (; n0 < kv_end; n0 += stride) {
        let kreg = load_keys(false, params.k, k_head, slots, n0, kv_end, stream, kx);
        let vreg = load_keys(true, params.v, v_head, slots, n0, kv_end, stream, kx);
        slots = key_slots(seq, n0 + stride, kv_end, stream);
        // Row my_row's scores (log2 units) of this stream's keys. Each row's part is one chain of
        // fma: dot() and then + compile to one instruction more per row, key and head_dim chunk
        // after a lane's first (a multiply and an add where the chain has a multiply-add). On the
        // H200 (d = 128: two chunks per lane) the step ran 1.7% faster at KV 32k and 0.8% at 128k
        // (medians; bench-results/h200-2026-12-01-session21, call 6).
        var sc: array<f32, KK>;
        for (var u = 0u; u < KK; u++) {
            var kf: array<vec4<f32>, RKD>;
            for (var c = 0u; c < RKD; c++) {
                kf[c] = kv_chunk(kreg[u * KVR + c / KV_PER], c % KV_PER);
            }
            var x: array<f32, BM>;
            for (var r = 0u; r < BM; r++) {
                var d = 0.0;
                for (var c = 0u; c < RKD; c++) {
                    let qc = q[r * RKD + c];
                    let kc = kf[c];
                    d = fma(qc.x, kc.x, d);
                    d = fma(qc.y, kc.y, d);
                    d = fma(qc.z, kc.z, d);
                    d = fma(qc.w, kc.w, d);
                }
                x[r] = d;
            }
            let key = n0 + stream * KK + u;
            var visible = key < kv_end;
            if (CAUSAL) {
                visible = visible && i32(key) <= my_last;
            }
            sc[u] = select(MASKED, row_sums(x, kx), visible);
        }
        // Lazy max: keep the old one (rescale factor exactly 1) unless this tile passes it by SLACK.
        var m_tile = MASKED;
        for (var u = 0u; u < KK; u++) {
            m_tile = max(m_tile, sc[u]);
        }
        var alpha = 1.0;
        if (m_tile > m + SLACK) {
            alpha = select(exp2(m - m_tile), 0.0, m <= MASKED);
            l *= alpha;
            m = m_tile;
        }
        for (var r = 0u; r < BM; r++) {
            let a = subgroupShuffle(alpha, lane0 + r * LPR);
            if (a != 1.0) {
                for (var c = 0u; c < RKD; c++) {
                    acc[r * RKD + c] *= a;
                }
            }
        }
        var p: array<f32, KK>;
        for (var u = 0u; u < KK; u++) {
            p[u] = select(0.0, exp2(sc[u] - m), sc[u] > MASKED);
            l += p[u];
        }
        // O += P V over this lane's chunks, for every row.
        for (var u = 0u; u < KK; u++) {
            var vf: array<vec4<f32>, RKD>;
            for (var c = 0u; c < RKD; c++) {
                vf[c] = kv_chunk(vreg[u * KVR + c / KV_PER], c % KV_PER);
            }
            for (var r = 0u; r < BM; r++) {
                let pr = subgroupShuffle(p[u], lane0 + r * LPR);
                for (var c = 0u; c < RKD; c++) {
                    acc[r * RKD + c] += pr * vf[c];
                }
            }
        }
    }

    // Merge the streams: each row's max and sum over streams, then the accumulators, added up in
    // o_tile one stream after the other; the last stream writes the result.
    if (kx % LPR == 0u) {
        ml[(stream * BM + my_row) * 2u] = m;
        ml[(stream * BM + my_row) * 2u + 1u] = l;
    }
    if (MERGE && lid == 0u) {
        step_tag = select(1u, 0u, arrived >= params.splits);
    }
    workgroupBarrier();
    let tag = step_tag;
    var m_all: array<f32, BM>;
    var l_all: array<f32, BM>;
    for (var r = 0u; r < BM; r++) {
        var m_row = MASKED;
        for (var y = 0u; y < S; y++) {
            m_row = max(m_row, ml[(y * BM + r) * 2u]);
        }
        var l_row = 0.0;
        for (var y = 0u; y < S; y++) {
            let my = ml[(y * BM + r) * 2u];
            l_row += select(ml[(y * BM + r) * 2u + 1u] * exp2(my - m_row), 0.0, my <= MASKED);
        }
        m_all[r] = m_row;
        l_all[r] = l_row;
        let mine = ml[(stream * BM + r) * 2u];
        let f = select(exp2(mine - m_row), 0.0, mine <= MASKED);
        for (var c = 0u; c < RKD; c++) {
            acc[r * RKD + c] *= f;
        }
    }
    for (var y = 0u; y + 1u < S; y++) {
        if (stream == y) {
            for (var r = 0u; r < BM; r++) {
                for (var c = 0u; c < RKD; c++) {
                    let d4 = chunk(kx, c);
                    if (d4 < D4) {
                        var x = acc[r * RKD + c];
                        if (y > 0u) {
                            x += o_tile[r * D4 + d4];
                        }
                        o_tile[r * D4 + d4] = x;
                    }
                }
            }
        }
        workgroupBarrier();
    }
    if (stream + 1u == S) {
        let rows_total = params.part_tokens * params.heads_q;
        let part_tok0 = seq_meta[params.part_cu_offset + seq];
        for (var r = 0u; r < BM; r++) {
            let pr = row0 + r;
            let tok = pr / g;
            if (tok < seq_q) {
                let hq = head_kv * g + pr % g;
                let t = q_tok0 + tok;
                let l_row = l_all[r];
                // A row that sees no key (in this split) has l == 0: O = 0, LSE = -infinity.
                let inv = select(0.0, 1.0 / l_row, l_row > 0.0);
                let lse_bits = select(NEG_INF_BITS, bitcast<u32>((m_all[r] + log2(l_row)) * LN2), l_row > 0.0);
                let row = t * params.heads_q + hq;
                let part_row = (part_tok0 + tok) * params.heads_q + hq;
                for (var c = 0u; c < RKD; c++) {
                    let d4 = chunk(kx, c);
                    if (d4 < D4) {
                        var x = acc[r * RKD + c];
                        if (S > 1u) {
                            x += o_tile[r * D4 + d4];
                        }
                        x *= inv;
                        if (SPLIT) {
                            let at = ((split * rows_total + part_row) * D4 + d4) * 4u;
                            part_store(at, tagged(bitcast<u32>(x.x), tag));
                            part_store(at + 1u, tagged(bitcast<u32>(x.y), tag));
                            part_store(at + 2u, tagged(bitcast<u32>(x.z), tag));
                            part_store(at + 3u, tagged(bitcast<u32>(x.w), tag));
                        } else {
                            o_buf[params.o.x + t * params.o.z + hq * params.o.w + d4] = pack4(x);
                        }
                    }
                }
                if (kx == 0u) {
                    if (SPLIT) {
                        part_store(params.part_lse_offset + split * rows_total + part_row, tagged(lse_bits, tag));
                    } else if (WRITE_LSE) {
                        lse_buf[params.lse_offset + row] = lse_bits;
                    }
                }
            }
        }
    }
    // MERGE: count this workgroup in; the last of the step's splits merges their states, and
    // the last of every second step sets the counter back to 0.
    if (MERGE) {
        workgroupBarrier();
        if (lid == 0u) {
            let before = part_count_in(counter_at);
            merging = select(0u, 1u, (before + 1u) % params.splits == 0u);
            if (before + 1u == 2u * params.splits) {
                part_store(counter_at, 0u);
            }
        }
        if (workgroupUniformLoad(&merging) != 0u) {
            merge_splits(seq, row0, seq_q, q_tok0, head_kv, lid, tag);
        }
    }
}

// MERGE: a partial word with bit 0 set to this step's tag (1 on the first step, then 0, 1, ...,
// so that the zeros of a new buffer are never taken for a first step's words). Costs the f32
// partials their last bit.
fn tagged(bits: u32, tag: u32) -> u32 {
    if (!MERGE) {
        return bits;
    }
    return (bits & ~1u) | tag;
}

// MERGE: the partial states of every split of this work item and KV head, merged by LSE into O
// (and LSE), as decode_combine.wgsl does. WGSL orders memory across workgroups only per atomic
// word, so a word another workgroup wrote before it counted in may not be visible yet: each is
// read atomically, and a batch of MS splits is read again until every word in it carries this
// step's tag; after STALE_ROUNDS reads of a batch the row is given up and its O and LSE are NaN,
// so that a broken promise of visibility shows rather than hangs. TPR threads share a row:
// thread u of row r takes its head_dim chunks u, u + TPR, ... (CPR of them).
fn merge_splits(seq: u32, row0: u32, seq_q: u32, q_tok0: u32, head_kv: u32, lid: u32, tag: u32) {
    let g = params.group;
    let r = lid / TPR;
    let u = lid % TPR;
    let pr = row0 + r;
    let tok = pr / g;
    if (r >= BM || tok >= seq_q) {
        return;
    }
    let rows_total = params.part_tokens * params.heads_q;
    let hq = head_kv * g + pr % g;
    let part_row = (seq_meta[params.part_cu_offset + seq] + tok) * params.heads_q + hq;
    var m = MASKED;
    var sum = 0.0;
    var o: array<vec4<f32>, CPR>;
    for (var k = 0u; k < CPR; k++) {
        o[k] = vec4<f32>(0.0);
    }
    var stale = false;
    for (var s0 = 0u; s0 < params.splits; s0 += MS) {
        // Past the last split, the last again (read, not used); past head_dim, the last chunk.
        var lse_w: array<u32, MS>;
        var o_w: array<vec4<u32>, MS * CPR>;
        var rounds = 0u;
        loop {
            for (var j = 0u; j < MS; j++) {
                let s = min(s0 + j, params.splits - 1u);
                lse_w[j] = part_load(params.part_lse_offset + s * rows_total + part_row);
                for (var k = 0u; k < CPR; k++) {
                    let at = ((s * rows_total + part_row) * D4 + min(u + k * TPR, D4 - 1u)) * 4u;
                    o_w[j * CPR + k] = vec4<u32>(part_load(at), part_load(at + 1u),
                                                 part_load(at + 2u), part_load(at + 3u));
                }
            }
            var fresh = true;
            for (var j = 0u; j < MS; j++) {
                fresh = fresh && (lse_w[j] & 1u) == tag;
                for (var k = 0u; k < CPR; k++) {
                    fresh = fresh && all((o_w[j * CPR + k] & vec4<u32>(1u)) == vec4<u32>(tag));
                }
            }
            rounds += 1u;
            // Once a batch was given up, the others are read once.
            if (fresh || stale || rounds == STALE_ROUNDS) {
                stale = stale || !fresh;
                break;
            }
        }
        for (var j = 0u; j < MS; j++) {
            // -infinity (a split without keys) and anything below MASKED add nothing.
            let lse = bitcast<f32>(lse_w[j] & ~1u);
            if (s0 + j < params.splits && lse > MASKED) {
                if (lse > m) {
                    let f = exp(m - lse);
                    sum *= f;
                    for (var k = 0u; k < CPR; k++) {
                        o[k] *= f;
                    }
                    m = lse;
                }
                let wt = exp(lse - m);
                sum += wt;
                for (var k = 0u; k < CPR; k++) {
                    o[k] += wt * bitcast<vec4<f32>>(o_w[j * CPR + k] & vec4<u32>(~1u));
                }
            }
        }
    }
    let inv = select(0.0, 1.0 / sum, sum > 0.0);
    var lse_bits = select(NEG_INF_BITS, bitcast<u32>(m + log(sum)), sum > 0.0);
    if (stale) {
        lse_bits = NAN_BITS;
    }
    let t = q_tok0 + tok;
    for (var k = 0u; k < CPR; k++) {
        let d4 = u + k * TPR;
        if (d4 < D4) {
            var x = o[k] * inv;
            if (stale) {
                x = vec4<f32>(bitcast<f32>(NAN_BITS));
            }
            o_buf[params.o.x + t * params.o.z + hq * params.o.w + d4] = pack4(x);
        }
    }
    if (WRITE_LSE && u == 0u) {
        lse_buf[params.lse_offset + t * params.heads_q + hq] = lse_bits;
    }
}
