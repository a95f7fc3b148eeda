#!/usr/bin/env python3
"""PyTorch peers of benches/decode.rs: decoding against a KV cache, same shapes, same JSON fields.

q is (batch, seq_q, heads, d), the caches (batch, kv, heads_kv, d) like ours, viewed as SDPA's
(B, H, N, d) without a copy; grouped-query attention through enable_gqa=True (each K/V head read
once). Backends: FlashAttention-2 and cuDNN through torch.nn.attention.sdpa_kernel, and, when the
flash_attn package is installed, flash_attn_with_kvcache on a contiguous and a paged cache (its page
size must be a multiple of 256). Time: median of the runs triton.testing.do_bench times (CUDA
events; return_mode="all" needs Triton 3.1 or later), which it takes after 25 ms of warm-up and
5 runs that size the series; --all-runs also keeps those runs in the JSON (ms_runs).
GB/s counts the K and V bytes a step must read: 2 * batch * kv * heads_kv * d * bytes.

    python3 benches/torch_decode.py --batch 8 --heads 32 --heads-kv 8 --dim 128 \
        --kv 32768,131072 --json torch_decode.json
"""
import argparse
import datetime
import json
import statistics
import sys

import torch
import triton.testing
from torch.nn.attention import SDPBackend, sdpa_kernel

BACKENDS = {
    "flash": SDPBackend.FLASH_ATTENTION,
    "cudnn": SDPBackend.CUDNN_ATTENTION,
    "efficient": SDPBackend.EFFICIENT_ATTENTION,
}


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--batch", type=int, default=8)
    ap.add_argument("--heads", type=int, default=32)
    ap.add_argument("--heads-kv", type=int, default=8)
    ap.add_argument("--dim", type=int, default=128)
    ap.add_argument("--dtype", default="f16", choices=["f16", "bf16"])
    ap.add_argument("--kv", default="32768,131072")
    ap.add_argument("--seq-q", type=int, default=1)
    ap.add_argument("--backends", default="flash,cudnn")
    ap.add_argument("--flash-attn-page-size", type=int, default=256)
    ap.add_argument("--all-runs", action="store_true",
                    help="also keep every run do_bench timed (ms_runs); do_bench picks their number")
    ap.add_argument("--json")
    a = ap.parse_args()
    dtype = {"f16": torch.float16, "bf16": torch.bfloat16}[a.dtype]
    b, hq, hkv, d, sq = a.batch, a.heads, a.heads_kv, a.dim, a.seq_q
    rows = []

    def record(row, f, kv):
        try:
            f()
            runs = triton.testing.do_bench(f, warmup=25, rep=200, return_mode="all")
            # The median as benches/decode.rs takes it (the mean of the middle two of an even count).
            ms = statistics.median(runs)
            if a.all_runs:
                row["ms_runs"] = runs
        except (RuntimeError, torch.OutOfMemoryError, ValueError, TypeError) as e:
            row["error"] = str(e).splitlines()[0][:160]
            rows.append(row)
            torch.cuda.empty_cache()
            print(f"{row['backend']:16} {row['layout']:10} kv={kv}: {row['error']}", flush=True)
            return
        kv_bytes = 2 * b * kv * hkv * d * q_bytes
        row.update(ms=ms, gbps=kv_bytes / ms / 1e6)
        rows.append(row)
        print(f"{row['backend']:16} {row['layout']:10} kv={kv}: {ms:.4f} ms {row['gbps']:.0f} GB/s", flush=True)

    for kv in map(int, a.kv.split(",")):
        gen = torch.Generator(device="cuda").manual_seed(0)
        q = torch.randn(b, sq, hq, d, device="cuda", dtype=dtype, generator=gen)
        k = torch.randn(b, kv, hkv, d, device="cuda", dtype=dtype, generator=gen)
        v = torch.randn(b, kv, hkv, d, device="cuda", dtype=dtype, generator=gen)
        q_bytes = q.element_size()
        base = dict(peer="torch", dtype=a.dtype, batch=b, heads=hq, heads_kv=hkv, kv_len=kv, seq_q=sq, head_dim=d)
        qt, kt, vt = q.transpose(1, 2), k.transpose(1, 2), v.transpose(1, 2)
        # Causal with seq_q > 1 needs the bottom-right mask SDPA's is_causal does not give; the
        # decode step (seq_q = 1) sees every key.
        for name in a.backends.split(","):
            row = dict(base, backend=f"sdpa-{name}", layout="contiguous", page_size=None)
            if sq != 1:
                row["error"] = "SDPA's is_causal aligns top-left: only seq_q = 1 is comparable"
                rows.append(row)
                continue

            def f(name=name):
                with sdpa_kernel([BACKENDS[name]]):
                    return torch.nn.functional.scaled_dot_product_attention(qt, kt, vt, enable_gqa=True)

            record(row, f, kv)
        try:
            from flash_attn import flash_attn_with_kvcache
        except ImportError:
            flash_attn_with_kvcache = None
        if flash_attn_with_kvcache is not None:
            lens = torch.full((b,), kv, dtype=torch.int32, device="cuda")
            row = dict(base, backend="flash_attn_with_kvcache", layout="contiguous", page_size=None)
            record(row, lambda: flash_attn_with_kvcache(q, k, v, cache_seqlens=lens, causal=True), kv)
            ps = a.flash_attn_page_size
            if kv % ps == 0:
                per_seq = kv // ps
                perm = torch.randperm(b * per_seq, device="cuda", generator=gen).view(b, per_seq).int()
                kp = k.view(b * per_seq, ps, hkv, d)
                vp = v.view(b * per_seq, ps, hkv, d)
                row = dict(base, backend="flash_attn_with_kvcache", layout="paged", page_size=ps)
                record(
                    row,
                    lambda: flash_attn_with_kvcache(q, kp, vp, cache_seqlens=lens, block_table=perm, causal=True),
                    kv,
                )
        del q, k, v, qt, kt, vt
        torch.cuda.empty_cache()
    out = dict(
        peer="torch",
        torch=torch.__version__,
        gpu=torch.cuda.get_device_name(),
        cuda=torch.version.cuda,
        date=datetime.datetime.now(datetime.timezone.utc).isoformat(),
        command=" ".join(sys.argv),
        rows=rows,
    )
    if a.json:
        with open(a.json, "w") as f:
            json.dump(out, f, indent=1)


if __name__ == "__main__":
    main()
