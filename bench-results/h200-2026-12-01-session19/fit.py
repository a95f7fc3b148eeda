"""Least-squares line through call2's KV sweep (16 splits): the step's time against the K/V bytes
it reads, for the lengths whose medians were fast runs (24k and 40k timed slow throughout).
Prints the read rate (the slope) and the fixed time (the line at KV 0).

    python3 bench-results/h200-2026-12-01-session19/fit.py
"""
import json
import os

here = os.path.dirname(os.path.abspath(__file__))
rows = json.load(open(os.path.join(here, "call2", "sweep.json")))["rows"]
fast = [r for r in rows if r["kv_len"] not in (24576, 40960)]
for first in (0, 1):  # all five lengths, then without 16k
    pts = [(r["kv_len"] * 2 * r["batch"] * r["heads_kv"] * r["head_dim"] * 2, r["ms"]) for r in fast[first:]]
    n = len(pts)
    mx = sum(x for x, _ in pts) / n
    my = sum(y for _, y in pts) / n
    a = sum((x - mx) * (y - my) for x, y in pts) / sum((x - mx) ** 2 for x, _ in pts)
    b = my - a * mx
    lens = ", ".join(str(r["kv_len"]) for r in fast[first:])
    print(f"KV {lens}: {1e-9 / a:.2f} TB/s, {b * 1e3:.1f} us at KV 0")
