// Arithmetic rate through wgpu (benches/arith.rs): every invocation runs CHAINS independent
// multiply-add chains x = x * mul + add over `iters` steps, on values of type T (a vector of
// f32 or f16), so the rate of the multiply-adds alone decides the time. mul and add come from
// the params, so the compiler cannot fold the chains, and the start values differ between
// invocations; invocation 0 stores its chains' sum, which the host checks, and no other
// invocation writes.
//
// The block between the HEADER markers is replaced by the benchmark (`enable f16;` goes before
// it where T holds f16); the defaults keep this file valid WGSL on its own.

const WG: u32 = 256u;
alias T = vec2<f32>;
alias S = f32;
const FUSED: bool = true;
const LANES: T = T(0.0, 0.5);
// HEADER END

const CHAINS: u32 = 8u;

struct Params {
    iters: u32,
    mul: f32,
    add: f32,
    _pad: u32,
}

@group(0) @binding(0) var<uniform> params: Params;
@group(0) @binding(1) var<storage, read_write> sink: array<f32>;

fn step(x: T, m: T, a: T) -> T {
    if (FUSED) {
        return fma(x, m, a);
    }
    return x * m + a;
}

@compute @workgroup_size(WG)
fn run(@builtin(global_invocation_id) gid: vec3<u32>) {
    let m = T(S(params.mul));
    let a = T(S(params.add));
    // Start values that differ between invocations (invocation 0: 1 to 8, plus LANES), so that
    // the compiler cannot hold a chain once for a whole subgroup (in its uniform registers).
    let b = f32(gid.x & 7u);
    var x0 = T(S(b + 1.0)) + LANES;
    var x1 = T(S(b + 2.0)) + LANES;
    var x2 = T(S(b + 3.0)) + LANES;
    var x3 = T(S(b + 4.0)) + LANES;
    var x4 = T(S(b + 5.0)) + LANES;
    var x5 = T(S(b + 6.0)) + LANES;
    var x6 = T(S(b + 7.0)) + LANES;
    var x7 = T(S(b + 8.0)) + LANES;
    for (var i = 0u; i < params.iters; i++) {
        x0 = step(x0, m, a);
        x1 = step(x1, m, a);
        x2 = step(x2, m, a);
        x3 = step(x3, m, a);
        x4 = step(x4, m, a);
        x5 = step(x5, m, a);
        x6 = step(x6, m, a);
        x7 = step(x7, m, a);
    }
    if (gid.x == 0u) {
        let s = ((x0 + x1) + (x2 + x3)) + ((x4 + x5) + (x6 + x7));
        sink[0] = f32(dot(s, T(S(1.0))));
    }
}
