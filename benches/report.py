#!/usr/bin/env python3
"""Markdown tables from the JSON of benches/attention.rs and, optionally, benches/torch_sdpa.py.

    python3 benches/report.py bench-results/h200-2026-11-30/flash.json [torch.json]
"""
import json
import sys


def main():
    flash = json.load(open(sys.argv[1]))
    torch = json.load(open(sys.argv[2])) if len(sys.argv) > 2 else None
    a = flash["adapter"]
    print(f"Adapter: {a['name']} ({a['backend']}, {a['driver']}); {flash['date']}; timing: {flash['timing']}")
    print(f"Command: `{flash['command']}`\n")
    print("| d | N | B x H | dtype | causal | tiles | flash ms | flash TFLOP/s | flash MB | materialized ms | materialized TFLOP/s | materialized MB | flash / materialized | max err |")
    print("|---|---|---|---|---|---|---|---|---|---|---|---|---|---|")
    for r in flash["rows"]:
        base = (f"{r['baseline_ms']:.2f} | {r['baseline_tflops']:.1f} | {r['baseline_device_bytes'] / 1e6:.0f} | {r['speedup']:.2f}x"
                if r.get("baseline_ms") else "cannot allocate | - | - | -")
        print(f"| {r['head_dim']} | {r['seq']} | {r['batch']} x {r['heads_q']} | {r['storage']} | {'yes' if r['causal'] else 'no'} | {r['tiles']} "
              f"| {r['flash_ms']:.2f} | {r['flash_tflops']:.1f} | {r['flash_device_bytes'] / 1e6:.0f} | {base} | {r['flash_max_err']:.1e} |")
    if torch:
        print(f"\nPeer: PyTorch {torch['torch']} scaled_dot_product_attention on {torch['gpu']}; {torch['date']}")
        print(f"Command: `{torch['command']}`\n")
        print("| d | N | B x H | dtype | causal | flash (FA2) | cuDNN | mem-efficient | math |")
        print("|---|---|---|---|---|---|---|---|---|")
        cells = {}
        for r in torch["rows"]:
            key = (r["head_dim"], r["seq"], r["batch"], r["heads"], r["dtype"], r["causal"])
            cells.setdefault(key, {})[r["backend"]] = f"{r['tflops']:.1f}" if "tflops" in r else "-"
        for (d, n, b, h, dt, c), v in cells.items():
            print(f"| {d} | {n} | {b} x {h} | {dt} | {'yes' if c else 'no'} | "
                  + " | ".join(v.get(k, "-") for k in ["flash", "cudnn", "efficient", "math"]) + " |")


if __name__ == "__main__":
    main()
