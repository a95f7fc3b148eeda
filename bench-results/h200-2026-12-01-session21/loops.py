#!/usr/bin/env python3
"""The KV-cache kernel's key loop in each disassembly (nvdisasm -b SM90 of the pipeline caches
that kernel_stats --cache wrote, through scripts/nv_sass.py --sass): the loop holding the most
16-byte K/V loads (LDG.E.128). Prints its length in instructions, the positions of its global
loads (0 = its first instruction), and counts of the main kinds.

    python3 loops.py call*/sass_*/*.sass
"""
import collections
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "scripts"))
from nv_sass import INSTRUCTION, main_loop  # noqa: E402

for path in sys.argv[1:]:
    text = open(path).read().splitlines()
    instructions = [(int(m.group(1), 16), m.group(2), m.group(3)) for m in map(INSTRUCTION.match, text) if m]
    loop = main_loop(instructions, lambda op: op.startswith("LDG.E.128"))
    kinds = collections.Counter(op.split(".")[0] for _, op, _ in loop)
    loads = [k for k, (_, op, _) in enumerate(loop) if op.startswith("LDG")]
    counts = " ".join(f"{k} {kinds[k]}" for k in ("FFMA", "FMUL", "FADD", "HADD2", "SHFL", "FSEL", "CS2R", "LDS", "STS"))
    print(f"{os.path.dirname(path)}: loop {len(loop)} | loads at {loads} | {counts}")
