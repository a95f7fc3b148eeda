// Read bandwidth of device memory through wgpu (benches/bandwidth.rs): every invocation reads
// vec4<u32>s and folds them into one value, which is stored only when it equals a value from the
// params (one in 2^32 for random data; a store would be harmless), so the loads cannot be dropped
// and almost nothing is written.
//
// Two access patterns over the same buffer:
//   FLAT:  a grid-stride loop; each step, an invocation issues LOADS loads (1, 2, 4 or 8), WG *
//          groups vec4s apart, so that a subgroup's load covers one contiguous run.
//   !FLAT: the buffer is rows of HEADS segments of SEG vec4s, like a KV cache of (tokens, KV
//          heads, head_dim); workgroup (head, part) reads segment `head` of a contiguous run of
//          rows, SEG lanes per row and WG / SEG rows at a time, LOADS rows per lane in flight: the
//          pattern of the KV-cache kernel's reads of one KV head.
//
// The block between the HEADER markers is replaced by constants from the benchmark; the defaults
// keep this file valid WGSL on its own.

// HEADER BEGIN
const WG: u32 = 256u;
const LOADS: u32 = 4u;
const FLAT: bool = true;
const HEADS: u32 = 8u;
const SEG: u32 = 16u;
// HEADER END

struct Params {
    vec4s: u32,       // vec4s in the buffer (a multiple of HEADS * SEG when !FLAT)
    parts: u32,       // !FLAT: workgroups per head
    never: u32,       // compared with each invocation's fold
    _pad: u32,
}

@group(0) @binding(0) var<uniform> params: Params;
@group(0) @binding(1) var<storage, read> src: array<vec4<u32>>;
@group(0) @binding(2) var<storage, read_write> sink: array<u32>;

fn fold(x: vec4<u32>) -> u32 {
    return (x.x ^ x.y) + (x.z ^ x.w);
}

// The u-th of this invocation's loads (u < LOADS) from `first`, `step` vec4s apart, clamped to
// `last` (the loop's final round may reach past the end: it rereads `last`).
fn load(first: u32, step: u32, u: u32, last: u32) -> u32 {
    return fold(src[min(first + u * step, last)]);
}

// LOADS loads, written out (not a loop over an array, which a driver may keep in memory instead
// of registers), all issued before any is used.
fn load_all(first: u32, step: u32, last: u32) -> u32 {
    let a0 = load(first, step, 0u, last);
    var a1 = 0u;
    var a2 = 0u;
    var a3 = 0u;
    var a4 = 0u;
    var a5 = 0u;
    var a6 = 0u;
    var a7 = 0u;
    if (LOADS > 1u) {
        a1 = load(first, step, 1u, last);
    }
    if (LOADS > 2u) {
        a2 = load(first, step, 2u, last);
        a3 = load(first, step, 3u, last);
    }
    if (LOADS > 4u) {
        a4 = load(first, step, 4u, last);
        a5 = load(first, step, 5u, last);
        a6 = load(first, step, 6u, last);
        a7 = load(first, step, 7u, last);
    }
    return ((a0 + a1) + (a2 + a3)) + ((a4 + a5) + (a6 + a7));
}

@compute @workgroup_size(WG)
fn read_all(@builtin(workgroup_id) wid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>,
            @builtin(local_invocation_index) lid: u32) {
    var acc = 0u;
    if (FLAT) {
        let threads = nwg.x * WG;
        let last = params.vec4s - 1u;
        for (var base = wid.x * WG + lid; base < params.vec4s; base += threads * LOADS) {
            acc += load_all(base, threads, last);
        }
    } else {
        let head = wid.x % HEADS;
        let part = wid.x / HEADS;
        let rows = params.vec4s / (HEADS * SEG);
        let per_part = (rows + params.parts - 1u) / params.parts;
        let first = min(part * per_part, rows);
        let end = min(first + per_part, rows);
        let streams = WG / SEG;
        // Row r of this head's segments starts at (r * HEADS + head) * SEG.
        let lane = (lid % SEG) + head * SEG;
        let last = ((end - 1u) * HEADS) * SEG + lane;
        for (var r0 = first + lid / SEG; r0 < end; r0 += streams * LOADS) {
            acc += load_all(r0 * HEADS * SEG + lane, streams * HEADS * SEG, last);
        }
    }
    if (acc == params.never) {
        sink[wid.x * WG + lid] = acc;
    }
}
