// Seeded cache values written on the GPU (benches/decode.rs, `--fill gpu`), so that a cache
// reaches device memory without passing through a staging copy. Element e holds k / 1024 with
// k = (hash(e + seed) >> 21) - 1024 (f32, f16), or k / 64 with k = (hash(e + seed) >> 25) - 64
// (bf16): values in [-1, 1) that the storage type holds exactly, so the host computes the same
// ones for its oracle (decode.rs, `element`). One invocation writes one 32-bit word (one f32 or
// two 16-bit values) of the bound window at a time, in a grid-stride loop.
//
// The block between the HEADER markers is replaced by the benchmark; the defaults keep this
// file valid WGSL on its own.

// HEADER BEGIN
const KIND: u32 = 1u; // 0: f32, 1: f16, 2: bf16
// HEADER END

const WG: u32 = 256u;

struct Params {
    first: u32,  // element index of the window's first element
    words: u32,  // 32-bit words in the window
    seed: u32,   // hashed seed, added to the element index
    _pad: u32,
}

@group(0) @binding(0) var<uniform> params: Params;
@group(0) @binding(1) var<storage, read_write> out: array<u32>;

// A PCG output permutation: consecutive indices give unrelated words.
fn hash(x: u32) -> u32 {
    let s = x * 747796405u + 2891336453u;
    let w = ((s >> ((s >> 28u) + 4u)) ^ s) * 277803737u;
    return (w >> 22u) ^ w;
}

fn value(e: u32) -> f32 {
    let h = hash(e + params.seed);
    if (KIND == 2u) {
        return f32(i32(h >> 25u) - 64) / 64.0;
    }
    return f32(i32(h >> 21u) - 1024) / 1024.0;
}

@compute @workgroup_size(WG)
fn fill(@builtin(global_invocation_id) gid: vec3<u32>, @builtin(num_workgroups) groups: vec3<u32>) {
    for (var w = gid.x; w < params.words; w += groups.x * WG) {
        if (KIND == 0u) {
            out[w] = bitcast<u32>(value(params.first + w));
        } else {
            let e = params.first + 2u * w;
            let lo = value(e);
            let hi = value(e + 1u);
            if (KIND == 1u) {
                out[w] = pack2x16float(vec2<f32>(lo, hi));
            } else {
                out[w] = (bitcast<u32>(lo) >> 16u) | (bitcast<u32>(hi) & 0xffff0000u);
            }
        }
    }
}
