# usage: make.py VARIANT  -- edits shaders/flash_fwd_coop.wgsl in place (ablation for timing only)
import sys
v = sys.argv[1]
p = '/work/main/shaders/flash_fwd_coop.wgsl'
s = open(p).read()
def rep(old, new):
    global s
    assert old in s, (v, old[:60])
    s = s.replace(old, new)
if v == 'nosoftmax':
    a = s.index("            // Score modifiers, the mask, and the row max of this tile")
    b = s.index("            l_part[rb] = l;\n") + len("            l_part[rb] = l;\n")
    s = s[:a] + """            // ABLATION: P = S as f16, no mask, max or exp.
            let s_row = (s_base + rr * SS + part * CPL) / 4u;
            let p_row = (p_base + rr * PS + part * CPL) / 4u;
            for (var j4 = 0u; j4 < CPL4; j4++) {
                p_tile[p_row + j4] = vec4<f16>(s_tile[s_row + j4]);
            }
""" + s[b:]
elif v == 'noqk':
    rep("""            for (var kd = 0u; kd < D16; kd++) {
                let at = nb * 16u * RS + kd * 16u;
                let k_frag = coopLoad<coop_mat16x16<f16, B>>(&kv_tile[at / 4u], RS / 4u);
                for (var rb = 0u; rb < R16; rb++) {
                    s_acc[rb] = coopMultiplyAdd(q_frag[rb * D16 + kd], k_frag, s_acc[rb]);
                }
            }
""", "            // ABLATION: no Q K^T products.\n")
elif v == 'nopv':
    a = s.index("        // O += P V: each V fragment")
    b = s.index("    // Row sums: add the LPR lanes' parts.")
    s = s[:a] + "        // ABLATION: no P V.\n    }\n\n" + s[b:]
elif v == 'noglobal':
    rep("""    if (i >= BN * D4 || key >= seq_kv) {
        return vec4<f16>(0.0h);
    }""", """    if (i >= BN * D4 || key >= seq_kv || true) {
        // ABLATION: no K/V reads from memory.
        return vec4<f16>(f16(i % 7u) * 0.125h);
    }""")
elif v == 'fewfrag':
    # K and V fragments read once per tile and reused for every product (8x fewer fragment loads).
    rep("""            for (var kd = 0u; kd < D16; kd++) {
                let at = nb * 16u * RS + kd * 16u;
                let k_frag = coopLoad<coop_mat16x16<f16, B>>(&kv_tile[at / 4u], RS / 4u);""",
        """            let at0 = nb * 16u * RS;
            let k_frag = coopLoad<coop_mat16x16<f16, B>>(&kv_tile[at0 / 4u], RS / 4u);
            for (var kd = 0u; kd < D16; kd++) {""")
    rep("""        for (var f = 0u; f < D16; f++) {
            for (var nb = 0u; nb < N16; nb++) {
                let at = (BN + nb * 16u) * RS + f * 16u;
                let v_frag = coopLoadT<coop_mat16x16<f16, B>>(&kv_tile[at / 4u], RS / 4u);""",
        """        var v_frags: array<coop_mat16x16<f16, B>, N16>;
        for (var nb = 0u; nb < N16; nb++) {
            let at = (BN + nb * 16u) * RS;
            v_frags[nb] = coopLoadT<coop_mat16x16<f16, B>>(&kv_tile[at / 4u], RS / 4u);
        }
        for (var f = 0u; f < D16; f++) {
            for (var nb = 0u; nb < N16; nb++) {
                let v_frag = v_frags[nb];""")
else:
    raise SystemExit('unknown variant')
open(p, 'w').write(s)
