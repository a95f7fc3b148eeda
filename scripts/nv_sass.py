#!/usr/bin/env python3
"""Disassemble the NVIDIA machine code (SASS) in the pipeline cache data that
`kernel_stats --cache DIR` writes, and count the instructions of the kernel's main loop.

    python3 scripts/nv_sass.py [--sass OUT_DIR] CACHE.bin...

Needs `zstd` (the apt package) and `nvdisasm` (CUDA's, or the copy in Triton's wheel under
triton/backends/nvidia/bin; set NVDISASM to its path if it is not on PATH).

What NVIDIA's driver 580 writes, as read off these files (not a documented format): a header
of 100 bytes, then a zstd frame. Inside the frame, a record starting "NVDANVVMNVuc" whose u32 at
0x4c is the code's size in bytes and whose u32 at 0x50, plus 8, is where the code starts; the code
is raw sm_90 instructions, 16 bytes each, which `nvdisasm -b SM90` reads. A file that does not
look like that is reported and skipped.

A file ending in .sass is taken as a disassembly already made (by --sass).

For each file one line: all instructions, then those of the main loop (the backward branch that
spans the most HMMA, or in a kernel without HMMA the most non-atomic global loads), by kind:
moves (MOV, IMAD.MOV), HMMA, LDSM, LDG, STS, spills (STL/LDL, whole kernel), barriers, FSEL,
FMUL, ISETP; spills in the loop among them.
With --sass, the full disassembly goes to OUT_DIR.
"""
import collections
import os
import re
import shutil
import struct
import subprocess
import sys
import tempfile

INSTRUCTION = re.compile(r"\s*/\*([0-9a-f]+)\*/\s+(?:@!?U?P\w+\s+)?([A-Z0-9_.]+)([^;]*);")


def machine_code(path):
    data = open(path, "rb").read()
    frame = data.find(b"\x28\xb5\x2f\xfd")  # zstd magic
    if frame < 0:
        raise ValueError("no zstd frame")
    raw = subprocess.run(["zstd", "-d", "-c"], input=data[frame:], capture_output=True, check=True).stdout
    if not raw.startswith(b"NVDANVVMNVuc"):
        raise ValueError("not an NVIDIA record")
    size = struct.unpack_from("<I", raw, 0x4C)[0]
    start = struct.unpack_from("<I", raw, 0x50)[0] + 8
    if size % 16 or start + size > len(raw):
        raise ValueError(f"code at {start:#x} of {size} bytes does not fit the record")
    return raw[start:start + size]


def disassemble(code, nvdisasm):
    with tempfile.NamedTemporaryFile(suffix=".bin") as scratch:
        scratch.write(code)
        scratch.flush()
        out = subprocess.run([nvdisasm, "-b", "SM90", scratch.name], capture_output=True, text=True, check=True)
    return out.stdout


def plain_global_load(op):
    """A global load that is not atomic (LDG.E..., without .STRONG)."""
    return op.startswith("LDG.E") and ".STRONG" not in op


def main_loop(instructions, counts=None):
    """The loop (a backward branch's range, the first of equals) holding the most instructions
    for which `counts(op)` holds: by default HMMA, or in a kernel without HMMA plain global loads
    (atomic loads left out: the KV-cache kernel's merge loop has more of them than its key loop
    has loads)."""
    if counts is None:
        if any(op.startswith("HMMA") for _, op, _ in instructions):
            counts = lambda op: op.startswith("HMMA")  # noqa: E731
        else:
            counts = plain_global_load
    best = None
    for at, op, rest in instructions:
        target = re.search(r"0x([0-9a-f]+)", rest)
        if op == "BRA" and target and int(target.group(1), 16) < at:
            lo = int(target.group(1), 16)
            n = sum(1 for a, o, _ in instructions if lo <= a <= at and counts(o))
            if best is None or n > best[2]:
                best = (lo, at, n)
    if best is None:
        return []
    return [i for i in instructions if best[0] <= i[0] <= best[1]]


def summary(text):
    instructions = [(int(m.group(1), 16), m.group(2), m.group(3)) for m in map(INSTRUCTION.match, text.splitlines()) if m]
    loop = main_loop(instructions)
    kinds = collections.Counter(op for _, op, _ in loop)

    def count(*prefixes):
        return sum(n for op, n in kinds.items() if op.startswith(prefixes))

    spills = sum(1 for _, op, _ in instructions if op.startswith(("STL", "LDL")))
    return (f"all {len(instructions)} | loop {len(loop)}: moves {kinds['MOV'] + kinds['IMAD.MOV.U32']} "
            f"HMMA {count('HMMA')} LDSM {count('LDSM')} LDG {count('LDG')} STS {count('STS')} "
            f"BAR {count('BAR')} FSEL {count('FSEL')} FMUL {count('FMUL')} ISETP {count('ISETP')} | "
            f"spills {spills} ({count('STL', 'LDL')} in the loop)")


def main(argv):
    out_dir = None
    if argv[:1] == ["--sass"]:
        out_dir, argv = argv[1], argv[2:]
        os.makedirs(out_dir, exist_ok=True)
    if not argv:
        print(__doc__)
        return 2
    nvdisasm = os.environ.get("NVDISASM") or shutil.which("nvdisasm")
    if not nvdisasm and not all(path.endswith(".sass") for path in argv):
        print("nvdisasm not found: set NVDISASM", file=sys.stderr)
        return 1
    for path in argv:
        name = os.path.basename(path)
        try:
            if path.endswith(".sass"):
                text = open(path).read()
            else:
                text = disassemble(machine_code(path), nvdisasm)
        except (ValueError, subprocess.CalledProcessError) as e:
            print(f"{name}: skipped ({e})")
            continue
        if out_dir:
            open(os.path.join(out_dir, os.path.splitext(name)[0] + ".sass"), "w").write(text)
        print(f"{name}: {summary(text)}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
