// Arithmetic rate through wgpu (benches/arith.rs): every invocation runs 8 independent
// multiply-add chains x = x * mul + add on values of type T (a vector of f32 or f16), so the rate
// of the multiply-adds alone decides the time. Each of `iters` loop trips runs the block between
// the STEP markers, which the host writes out several times so that the loop's own instructions
// count little. mul and add come from the params, so the compiler cannot fold the chains, and
// the start values differ between invocations and lanes; invocation 0 stores its chains' sum and
// the steps it ran, which the host checks, and no other invocation writes. The chains converge
// (to add / (1 - mul)), so the sum shows that the arithmetic is right, the count that all of it ran.
//
// The block between the HEADER markers is replaced by the benchmark (`enable f16;` goes before
// it where T holds f16); the defaults keep this file valid WGSL on its own.

// HEADER BEGIN
const WG: u32 = 256u;
alias T = vec4<f32>;
alias S = f32;
alias F = vec4<f32>; // T's shape in f32, for the sum
const FUSED: bool = false; // fma() instead of x * mul + add
const LANES: T = T(0.0, 0.25, 0.5, 0.75); // added to each chain's start: the lanes differ
// HEADER END

struct Params {
    iters: u32,
    mul: f32,
    add: f32,
    _pad: u32,
}

@group(0) @binding(0) var<uniform> params: Params;
// Invocation 0's sum of its chains (f32 bits), then the steps it ran.
@group(0) @binding(1) var<storage, read_write> sink: array<u32, 2>;

fn mad(x: T, m: T, a: T) -> T {
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
    // Counted once per written-out step (the compiler folds it into the loop counter), so that the
    // host can tell that every step ran.
    var steps = 0u;
    for (var i = 0u; i < params.iters; i++) {
        // STEP BEGIN
        x0 = mad(x0, m, a);
        x1 = mad(x1, m, a);
        x2 = mad(x2, m, a);
        x3 = mad(x3, m, a);
        x4 = mad(x4, m, a);
        x5 = mad(x5, m, a);
        x6 = mad(x6, m, a);
        x7 = mad(x7, m, a);
        steps += 1u;
        // STEP END
    }
    if (gid.x == 0u) {
        let s = ((F(x0) + F(x1)) + (F(x2) + F(x3))) + ((F(x4) + F(x5)) + (F(x6) + F(x7)));
        sink[0] = bitcast<u32>(dot(s, F(1.0)));
        sink[1] = steps;
    }
}
