// KV-cache append with optional rotary embedding (RoPE), the pre-pass of a KV-cache attention.
//
// Query token t of sequence b (position p = cached_len[b] + t - cu_seqlens_q[b]) brings one new
// key and value per KV head: they are written to the cache at position p (through the block table
// when PAGED), the key rotated. The token's queries are rotated into q_out, which the attention
// pass then reads. One invocation per (token, head row, vec4 of head_dim); head rows are the
// heads_q query heads followed by the heads_kv key/value heads.
//
// Rotary pairs: ROTARY == 1 interleaved (elements 2i, 2i+1), ROTARY == 2 half-split (elements i,
// i + rot_dim / 2), with angle p * theta^(-2i / rot_dim), or cos/sin read from a table
// [positions][rot_dim / 2] (cos) followed by the same for sin, when ROT_TABLE. Elements past
// rot_dim are copied.
//
// The block between the HEADER markers is replaced by constants generated from the plan
// (src/kernels/decode.rs); the defaults below keep this file valid WGSL on its own.

// HEADER BEGIN
const D4: u32 = 32u;
const WG: u32 = 64u;
const PAGED: bool = false;
const ROTARY: u32 = 0u;
const ROT_TABLE: bool = false;
alias Packed4 = vec4<f32>;
fn unpack4(x: Packed4) -> vec4<f32> { return x; }
fn pack4(x: vec4<f32>) -> Packed4 { return x; }
// HEADER END

struct Params {
    total_q: u32,
    heads_q: u32,        // query heads rotated into q_out (0 without rotary)
    heads_kv: u32,
    batch: u32,
    rot4: u32,           // rotary dim / 4
    rot_log2_theta: f32, // log2(theta), without a table
    table_half: u32,     // rot_dim / 2: table row length
    sin_offset: u32,     // where the sin table starts, in f32 elements (after the cos table)
    cu_offset: u32,
    lens_offset: u32,
    table_offset: u32,   // block table
    page_size: u32,
    pages_per_seq: u32,
    groups_x: u32,
    cos_offset: u32,     // in f32 elements
    token_base: u32,     // this dispatch appends tokens token_base .. token_end
    token_end: u32,
    page_base: u32,      // first page (cache entry) of the window the caches are bound from
    _pad0: u32,
    _pad1: u32,
    // offset, batch-or-page stride, token stride, head stride (vec4 units)
    q: vec4<u32>,
    k_new: vec4<u32>,
    v_new: vec4<u32>,
    q_out: vec4<u32>,
    k_cache: vec4<u32>,
    v_cache: vec4<u32>,
}

@group(0) @binding(0) var<uniform> params: Params;
@group(0) @binding(1) var<storage, read> q_buf: array<Packed4>;
@group(0) @binding(2) var<storage, read> k_new: array<Packed4>;
@group(0) @binding(3) var<storage, read> v_new: array<Packed4>;
@group(0) @binding(4) var<storage, read_write> k_cache: array<Packed4>;
@group(0) @binding(5) var<storage, read_write> v_cache: array<Packed4>;
@group(0) @binding(6) var<storage, read_write> q_out: array<Packed4>;
@group(0) @binding(7) var<storage, read> seq_meta: array<u32>;
@group(0) @binding(8) var<storage, read> rot_table: array<f32>;

// cos and sin of the angle of rotary pair `i` at position `pos`.
fn angle(pos: u32, i: u32) -> vec2<f32> {
    if (ROT_TABLE) {
        let at = pos * params.table_half + i;
        return vec2<f32>(rot_table[params.cos_offset + at], rot_table[params.sin_offset + at]);
    }
    // theta^(-2i / rot_dim), in f32 as the usual host-side tables are computed.
    let inv_freq = exp2(-f32(2u * i) / f32(params.rot4 * 4u) * params.rot_log2_theta);
    let a = f32(pos) * inv_freq;
    return vec2<f32>(cos(a), sin(a));
}

fn rotate(x1: f32, x2: f32, cs: vec2<f32>) -> vec2<f32> {
    return vec2<f32>(x1 * cs.x - x2 * cs.y, x1 * cs.y + x2 * cs.x);
}

// Reads vec4 `c` of a head row and, when it belongs to the rotary part, rotates it. For the
// half-split form the partner vec4 (c +- rot_dim / 8) is read too.
fn rotated(c: u32, pos: u32, t: u32, h: u32, is_q: bool, is_k: bool) -> vec4<f32> {
    let x = load(t, h, c, is_q, is_k);
    if (ROTARY == 0u || c >= params.rot4 || !(is_q || is_k)) {
        return x;
    }
    if (ROTARY == 1u) {
        let a = rotate(x.x, x.y, angle(pos, 2u * c));
        let b = rotate(x.z, x.w, angle(pos, 2u * c + 1u));
        return vec4<f32>(a, b);
    }
    let half4 = params.rot4 / 2u;
    if (c < half4) {
        let y = load(t, h, c + half4, is_q, is_k);
        var out: vec4<f32>;
        for (var e = 0u; e < 4u; e++) {
            out[e] = rotate(x[e], y[e], angle(pos, 4u * c + e)).x;
        }
        return out;
    }
    let y = load(t, h, c - half4, is_q, is_k);
    var out: vec4<f32>;
    for (var e = 0u; e < 4u; e++) {
        out[e] = rotate(y[e], x[e], angle(pos, 4u * (c - half4) + e)).y;
    }
    return out;
}

// Vec4 `c` of head row h (query heads first, then key/value heads) of token t.
fn load(t: u32, h: u32, c: u32, is_q: bool, is_k: bool) -> vec4<f32> {
    if (is_q) {
        return unpack4(q_buf[params.q.x + t * params.q.z + h * params.q.w + c]);
    }
    let hk = h - params.heads_q;
    if (is_k) {
        return unpack4(k_new[params.k_new.x + t * params.k_new.z + hk * params.k_new.w + c]);
    }
    return unpack4(v_new[params.v_new.x + t * params.v_new.z + hk * params.v_new.w + c]);
}

@compute @workgroup_size(WG)
fn append(@builtin(workgroup_id) wid: vec3<u32>, @builtin(local_invocation_index) lid: u32) {
    let at = (wid.y * params.groups_x + wid.x) * WG + lid;
    let heads = params.heads_q + params.heads_kv;
    let row = at / D4;
    let c = at % D4;
    let t = params.token_base + row / heads;
    let h = row % heads;
    if (t >= params.token_end) {
        return;
    }
    // The token's sequence: the last b with cu_seqlens_q[b] <= t (binary search).
    var lo = 0u;
    var hi = params.batch;
    while (hi - lo > 1u) {
        let mid = (lo + hi) / 2u;
        if (seq_meta[params.cu_offset + mid] <= t) {
            lo = mid;
        } else {
            hi = mid;
        }
    }
    let b = lo;
    let pos = seq_meta[params.lens_offset + b] + t - seq_meta[params.cu_offset + b];
    if (h < params.heads_q) {
        q_out[params.q_out.x + t * params.q_out.z + h * params.q_out.w + c] = pack4(rotated(c, pos, t, h, true, false));
        return;
    }
    let hk = h - params.heads_q;
    var page = b - params.page_base;
    var slot = pos;
    if (PAGED) {
        page = seq_meta[params.table_offset + b * params.pages_per_seq + pos / params.page_size] - params.page_base;
        slot = pos % params.page_size;
    }
    let kc = params.k_cache;
    k_cache[kc.x + page * kc.y + slot * kc.z + hk * kc.w + c] = pack4(rotated(c, pos, t, h, false, true));
    let vc = params.v_cache;
    v_cache[vc.x + page * vc.y + slot * vc.z + hk * vc.w + c] = pack4(rotated(c, pos, t, h, false, false));
}
