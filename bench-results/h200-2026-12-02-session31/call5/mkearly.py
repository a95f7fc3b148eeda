# Makes the `early` variant of shaders/flash_fwd_coop.wgsl: the first K/V tile's loads are
# issued before the Q block's, into registers of their own, so that the two waits on device
# memory at a workgroup's start overlap instead of following each other; the PREFETCH block
# then only copies them. For head dims that keep the PREFETCH block (d <= 192).
#   python3 mkearly.py SRC OUT
import sys
src = open(sys.argv[1]).read()
def cut(begin, end):
    global src
    i = src.index(begin); j = src.index(end, i)
    text = src[i:j]; src = src[:i] + src[j:]
    return text
# The key range (it does not depend on Q) moves before the Q block.
keys = cut("    // Keys outside [kv_start, kv_end)", "    var slope = 0.0;")
first = """    // The first K/V tile's loads, issued before Q's so that both waits overlap.
    var k_first: array<vec4<f16>, LOADS>;
    var v_first: array<vec4<f16>, LOADS>;
    for (var u = 0u; u < LOADS; u++) {
        k_first[u] = fetch(false, k_base, batch, kv_start, seq_kv, lid + u * WG);
        v_first[u] = fetch(true, v_base, batch, kv_start, seq_kv, lid + u * WG);
    }

"""
anchor = "    // Q block -> workgroup memory"
assert src.count(anchor) == 1
src = src.replace(anchor, keys + first + anchor)
old = """    // PREFETCH BEGIN
    for (var u = 0u; u < LOADS; u++) {
        k_staged[u] = fetch(false, k_base, batch, kv_start, seq_kv, lid + u * WG);
        v_staged[u] = fetch(true, v_base, batch, kv_start, seq_kv, lid + u * WG);
    }
    // PREFETCH END"""
assert src.count(old) == 1
src = src.replace(old, """    // PREFETCH BEGIN
    for (var u = 0u; u < LOADS; u++) {
        k_staged[u] = k_first[u];
        v_staged[u] = v_first[u];
    }
    // PREFETCH END""")
open(sys.argv[2], "w").write(src)
