# Makes the `hyb` variants of shaders/flash_fwd_coop.wgsl: subgroups of 32 rows (R16 = 2) whose
# second row block's Q stays in workgroup memory (q_tile), read as A fragments once per kd in
# every key tile; one K/V tile. `hyb`: each tile loaded in its own pass; `hyba`: the tile ahead.
import sys
src = open(sys.argv[1]).read()
inloop = sys.argv[3] == "inloop"
def rep(old, new, count=1):
    global src
    n = src.count(old)
    assert n == count, (old, n)
    src = src.replace(old, new)
# one K/V tile whatever the host's header says
rep("const KV_BUFS: u32 = select(1u, 2u, TWO_KV);", "const KV_BUFS: u32 = 1u;\nconst ONE_KV: bool = true;")
src = src.replace("if (TWO_KV)", "if (!ONE_KV)")
# the Q rows of each subgroup's second row block
rep("var<workgroup> row_scale: array<f32, BM>;",
    "var<workgroup> row_scale: array<f32, BM>;\n// Row block 1 of each subgroup's Q rows (16 rows a subgroup).\nvar<workgroup> q_tile: array<vec4<f16>, NS * 16u * RS / 4u>;")
rep("var q_frag: array<coop_mat16x16<f16, A>, R16 * D16>;", "var q_frag: array<coop_mat16x16<f16, A>, D16>;")
rep("""            if (first >= r0 && first < r0 + QROWS) {
                for (var kd = 0u; kd < D16; kd++) {
                    let at = (first - r0) * RS + kd * 16u;
                    q_frag[rb * D16 + kd] = coopLoadT<coop_mat16x16<f16, A>>(&kv_tile[at / 4u], RS / 4u);
                }
            }""",
"""            if (first >= r0 && first < r0 + QROWS) {
                if (rb == 0u) {
                    for (var kd = 0u; kd < D16; kd++) {
                        let at = (first - r0) * RS + kd * 16u;
                        q_frag[kd] = coopLoadT<coop_mat16x16<f16, A>>(&kv_tile[at / 4u], RS / 4u);
                    }
                } else {
                    for (var e = lane; e < 16u * D4; e += SG) {
                        q_tile[(sg * 16u + e / D4) * (RS / 4u) + e % D4] = kv_tile[((first - r0) + e / D4) * (RS / 4u) + e % D4];
                    }
                }
            }""")
# S = Q K^T: kd outer, each K fragment read once for both row blocks, Q's block 1 once per kd
rep("""        for (var nb = 0u; nb < N16; nb++) {
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
            if (!ELEMENTS) {""",
"""        for (var nb = 0u; nb < N16; nb++) {
            s_acc[nb] = zero_frag;
            s_acc[N16 + nb] = zero_frag;
        }
        for (var kd = 0u; kd < D16; kd++) {
            let q_hi = coopLoadT<coop_mat16x16<f16, A>>(&q_tile[(sg * 16u * RS + kd * 16u) / 4u], RS / 4u);
            for (var nb = 0u; nb < N16; nb++) {
                let at = kv_off + nb * 16u * RS + kd * 16u;
                let k_frag = coopLoad<coop_mat16x16<f16, B>>(&kv_tile[at / 4u], RS / 4u);
                s_acc[nb] = coopMultiplyAdd(q_frag[kd], k_frag, s_acc[nb]);
                s_acc[N16 + nb] = coopMultiplyAdd(q_hi, k_frag, s_acc[N16 + nb]);
            }
        }
        for (var nb = 0u; nb < N16; nb++) {
            if (!ELEMENTS) {""")
if inloop:
    pre = src.index("    // PREFETCH BEGIN\n"); pend = src.index("    // PREFETCH END\n")
    src = src[:pre + len("    // PREFETCH BEGIN\n")] + src[pend:]
    a0 = src.index("        // AHEAD BEGIN\n"); a1 = src.index("        // AHEAD END\n")
    load = src[src.index("            // LOAD BEGIN\n"):src.index("            // LOAD END\n") + len("            // LOAD END\n")]
    src = src[:a0 + len("        // AHEAD BEGIN\n")] + src[a1:]
    rep("            // LOAD_HERE BEGIN\n", "            // LOAD_HERE BEGIN\n            let ahead = n0;\n" + load)
open(sys.argv[2], "w").write(src)
