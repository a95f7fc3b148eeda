// Merges partial attention states by their log-sum-exp: for each row,
//   LSE = log(sum_s exp(lse_s)),  O = sum_s exp(lse_s - LSE) * O_s,
// where each O_s is normalised over its own keys. Used after split-KV decoding, and by callers
// that computed attention over disjoint key sets elsewhere (other devices, other caches).
//
// One workgroup per row: thread (part group py, chunk c) sums parts py, py + PG, ... of head_dim
// chunk c, so the many parts of a long split-KV decode are read by many threads at once; the PG
// sums then meet in workgroup memory. Partial states are f32: O_s laid out [part][row][head_dim],
// lse_s [part][row] (natural log; -infinity for a part without keys). Row r of the output goes to
// token r / heads, head r % heads of O; with TOKEN_MAP, to token token_map[r / heads] instead (a
// KV-cache step whose prefill chunks run through the forward kernels packs the partial states of
// the other sequences).
//
// The block between the HEADER markers is replaced by constants generated from the plan
// (src/kernels/decode.rs); the defaults below keep this file valid WGSL on its own.

// HEADER BEGIN
const D4: u32 = 32u;      // head_dim / 4 (at most WG)
const WG: u32 = 128u;
const WRITE_LSE: bool = true;
const TOKEN_MAP: bool = false;
alias Packed4 = vec4<f32>;
fn unpack4(x: Packed4) -> vec4<f32> { return x; }
fn pack4(x: vec4<f32>) -> Packed4 { return x; }
// HEADER END

const PG: u32 = WG / D4;   // part groups
const MASKED: f32 = -3.0e38;
const NEG_INF_BITS: u32 = 0xff800000u;

struct Params {
    parts: u32,
    rows: u32,
    heads: u32,           // rows per output token
    groups_x: u32,        // workgroups in x (the grid is 2-D when there are many rows)
    o_part_offset: u32,   // in vec4 units
    lse_part_offset: u32, // in f32 elements
    lse_offset: u32,      // in f32 elements
    map_offset: u32,      // TOKEN_MAP: where the token map starts in token_map
    o: vec4<u32>,         // offset, unused, token stride, head stride (vec4 units)
}

@group(0) @binding(0) var<uniform> params: Params;
@group(0) @binding(1) var<storage, read> o_parts: array<vec4<f32>>;
@group(0) @binding(2) var<storage, read> lse_parts: array<f32>;
@group(0) @binding(3) var<storage, read_write> o_buf: array<Packed4>;
@group(0) @binding(4) var<storage, read_write> lse_buf: array<u32>;
@group(0) @binding(5) var<storage, read> token_map: array<u32>;

var<workgroup> o_sum: array<vec4<f32>, PG * D4>;
var<workgroup> w_sum: array<f32, PG>;

@compute @workgroup_size(WG)
fn combine(@builtin(workgroup_id) wid: vec3<u32>, @builtin(local_invocation_index) lid: u32) {
    let row = wid.y * params.groups_x + wid.x;
    // The whole workgroup leaves together (it meets at barriers below).
    if (row >= params.rows) {
        return;
    }
    let c = lid % D4;
    let py = lid / D4;
    // The row's largest LSE (every thread reads the same values: broadcast loads).
    // -infinity (and anything below MASKED) counts as a part without keys.
    var m = MASKED;
    for (var s = 0u; s < params.parts; s++) {
        m = max(m, lse_parts[params.lse_part_offset + s * params.rows + row]);
    }
    var sum = 0.0;
    var o = vec4<f32>(0.0);
    if (py < PG) {
        for (var s = py; s < params.parts; s += PG) {
            let x = lse_parts[params.lse_part_offset + s * params.rows + row];
            if (x > MASKED) {
                let w = exp(x - m);
                sum += w;
                o += w * o_parts[params.o_part_offset + (s * params.rows + row) * D4 + c];
            }
        }
        o_sum[py * D4 + c] = o;
        if (c == 0u) {
            w_sum[py] = sum;
        }
    }
    workgroupBarrier();
    if (py == 0u) {
        for (var y = 1u; y < PG; y++) {
            o += o_sum[y * D4 + c];
            sum += w_sum[y];
        }
        o *= select(0.0, 1.0 / sum, sum > 0.0);
        var t = row / params.heads;
        let h = row % params.heads;
        if (TOKEN_MAP) {
            t = token_map[params.map_offset + t];
        }
        o_buf[params.o.x + t * params.o.z + h * params.o.w + c] = pack4(o);
        if (WRITE_LSE && c == 0u) {
            lse_buf[params.lse_offset + t * params.heads + h] = select(NEG_INF_BITS, bitcast<u32>(m + log(sum)), sum > 0.0);
        }
    }
}
