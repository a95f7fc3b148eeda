#!/usr/bin/env python3
"""PyTorch scaled_dot_product_attention on the same shapes as benches/attention.rs, as the peer.

Shapes follow the FlashAttention papers: total tokens fixed (batch = tokens / N), hidden fixed
(heads = hidden / d). Layout (batch, seq, heads, d) like ours, transposed to SDPA's (B, H, N, d)
view without a copy. Time: median of triton.testing.do_bench (CUDA events) after its warm-up.
TFLOP/s = 4*B*H*N*N*d / t, halved when causal.

    python3 benches/torch_sdpa.py --seqs 1024,2048,4096,8192,16384 --dims 64,128 --json out.json
"""
import argparse
import datetime
import json
import sys

import torch
import triton.testing
from torch.nn.attention import SDPBackend, sdpa_kernel

BACKENDS = {
    "flash": SDPBackend.FLASH_ATTENTION,
    "cudnn": SDPBackend.CUDNN_ATTENTION,
    "efficient": SDPBackend.EFFICIENT_ATTENTION,
    "math": SDPBackend.MATH,
}


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--seqs", default="1024,2048,4096,8192,16384")
    ap.add_argument("--dims", default="64,128")
    ap.add_argument("--dtypes", default="f16,f32")
    ap.add_argument("--tokens", type=int, default=16384)
    ap.add_argument("--hidden", type=int, default=2048)
    ap.add_argument("--causal", default="both", choices=["both", "on", "off"])
    ap.add_argument("--backends", default="flash,cudnn,efficient,math")
    ap.add_argument("--tf32", action="store_true",
                    help="let f32 matmuls use TF32 tensor cores (torch.backends.cuda.matmul.allow_tf32)")
    ap.add_argument("--json")
    a = ap.parse_args()
    torch.backends.cuda.matmul.allow_tf32 = a.tf32
    causals = {"both": [False, True], "on": [True], "off": [False]}[a.causal]
    rows = []
    for d in map(int, a.dims.split(",")):
        for n in map(int, a.seqs.split(",")):
            for dt in a.dtypes.split(","):
                dtype = {"f16": torch.float16, "bf16": torch.bfloat16, "f32": torch.float32}[dt]
                b, h = max(1, a.tokens // n), a.hidden // d
                gen = torch.Generator(device="cuda").manual_seed(0)
                q, k, v = (torch.randn(b, n, h, d, device="cuda", dtype=dtype, generator=gen).transpose(1, 2) for _ in range(3))
                for causal in causals:
                    for name in a.backends.split(","):
                        row = dict(peer="torch-sdpa", backend=name, dtype=dt, tf32=a.tf32, batch=b, heads=h, seq=n, head_dim=d, causal=causal)
                        if name == "math" and b * h * n * n * 4 * 2 > 40e9:
                            row["skipped"] = "score matrix over 40 GB"
                            rows.append(row)
                            continue
                        try:
                            with sdpa_kernel([BACKENDS[name]]):
                                f = lambda: torch.nn.functional.scaled_dot_product_attention(q, k, v, is_causal=causal)
                                f()
                                ms = triton.testing.do_bench(f, warmup=25, rep=100, return_mode="median")
                        except (RuntimeError, torch.OutOfMemoryError) as e:
                            row["skipped"] = str(e).splitlines()[0][:120]
                            rows.append(row)
                            torch.cuda.empty_cache()
                            continue
                        flops = 4 * b * h * n * n * d / (2 if causal else 1)
                        row.update(ms=ms, tflops=flops / ms / 1e9)
                        rows.append(row)
                        print(f"{name:9} {dt}{' tf32' if a.tf32 and dt == 'f32' else ''} d={d} N={n} B={b} H={h} causal={causal}: {ms:.3f} ms {row['tflops']:.1f} TFLOP/s", flush=True)
                del q, k, v
                torch.cuda.empty_cache()
    out = dict(
        peer="torch-sdpa",
        torch=torch.__version__,
        gpu=torch.cuda.get_device_name(),
        driver=torch.version.cuda,
        date=datetime.datetime.now(datetime.timezone.utc).isoformat(),
        command=" ".join(sys.argv),
        rows=rows,
    )
    if a.json:
        with open(a.json, "w") as f:
            json.dump(out, f, indent=1)


if __name__ == "__main__":
    main()
