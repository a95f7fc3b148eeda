#!/usr/bin/env python3
"""Markdown tables and an SVG plot from benchmark JSON files: ours (benches/attention.rs) and peers'
(benches/torch_sdpa.py), side by side. The JSON schema of both is in BENCHMARKS.md.

    python3 benches/report.py flash.json torch.json                 # Markdown on stdout
    python3 benches/report.py flash.json torch.json --md report.md --svg report.svg

The plot has one panel per (head_dim, causal) and one line per series: each kernel tier of ours
and our materialized baseline, each peer backend, per dtype; TFLOP/s against N on a log2 x axis
(y: log by default, --y linear). Where a file swept several tiles, a series takes the fastest
tile at each point (the tile tables show all of them). Standard library only.

A table of fixed costs follows the TFLOP/s tables: where a series ran non-causal at three or more
N with the same number of tokens (B N), so that each N launches the same number of workgroups,
its figures are fitted as E N / (X + N). E is the rate without a fixed cost, X the fixed cost of a
workgroup (a peer's thread block) in keys: the time outside the key loop, as keys of it.
"""
import argparse
import html
import json
import math
import os
import sys

PEER_BACKEND_NAMES = {
    "flash": "FlashAttention-2",
    "cudnn": "cuDNN",
    "efficient": "mem-efficient",
    "math": "math",
}


def load(paths):
    """Returns (ours, peers): lists of (path, document)."""
    ours, peers = [], []
    for path in paths:
        with open(path) as f:
            try:
                doc = json.load(f)
            except json.JSONDecodeError as e:
                sys.exit(f"{path}: not JSON: {e}")
        if "peer" in doc:
            peers.append((path, doc))
        elif "rows" in doc and "adapter" in doc:
            ours.append((path, doc))
        else:
            sys.exit(f"{path}: neither a benches/attention.rs nor a peer result (see BENCHMARKS.md)")
    return ours, peers


def stem(path):
    return os.path.splitext(os.path.basename(path))[0]


def points(ours, peers):
    """Every measurement as (series, dtype, head_dim, seq, causal, tflops, ms, extra, tokens), tokens
    being B N.

    Series names: "wgpu <tier>" and "wgpu materialized" for ours (suffixed with the file name when
    several of our files are given), "<peer> <backend>" for peers.
    """
    out = []
    for path, doc in ours:
        suffix = f" ({stem(path)})" if len(ours) > 1 else ""
        baseline_seen = set()
        for r in doc["rows"]:
            if r.get("flash_tflops") is None:
                continue
            kernel = r.get("kernel", "portable")  # files before tiers were named ran the portable kernel
            key = (r["head_dim"], r["seq"], r["causal"], r["dtype"])
            tokens = r["batch"] * r["seq"]
            out.append((f"wgpu {kernel}{suffix}", r["dtype"], r["head_dim"], r["seq"], r["causal"],
                        r["flash_tflops"], r["flash_ms"], r.get("tiles", "-"), tokens))
            if r.get("baseline_tflops") is not None and key not in baseline_seen:
                baseline_seen.add(key)
                out.append((f"wgpu materialized{suffix}", r["dtype"], r["head_dim"], r["seq"], r["causal"],
                            r["baseline_tflops"], r["baseline_ms"], "-", tokens))
    for path, doc in peers:
        peer = "torch" if doc["peer"] == "torch-sdpa" else doc["peer"]
        for r in doc["rows"]:
            if r.get("tflops") is None:
                continue
            out.append((f"{peer} {PEER_BACKEND_NAMES.get(r['backend'], r['backend'])}", r["dtype"],
                        r["head_dim"], r["seq"], r["causal"], r["tflops"], r["ms"], "-", r["batch"] * r["seq"]))
    return out


def best(pts):
    """The fastest measurement per (series, dtype, d, N, causal): a tile sweep keeps its best tile."""
    top = {}
    for p in pts:
        k = p[:5]
        if k not in top or p[5] > top[k][5]:
            top[k] = p
    return top


def series_order(names):
    """Ours first (tiers in tier order, then the baseline), then peers, each group sorted."""
    tier_rank = {"portable": 0, "subgroup": 1, "coop-matrix": 2, "auto": 3, "materialized": 4}

    peer_rank = {v: i for i, v in enumerate(PEER_BACKEND_NAMES.values())}

    def key(name):
        if name.startswith("wgpu "):
            tier = name.split()[1]
            return (0, tier_rank.get(tier, 5), name)
        backend = name.split(" ", 1)[-1]
        return (1, peer_rank.get(backend, len(peer_rank)), name)

    return sorted(names, key=key)


def fmt(x, prec=1):
    """Fixed precision, with more digits for small values (a software rasterizer's TFLOP/s)."""
    if x is None:
        return "-"
    if 0 < abs(x) < 10 ** -prec * 10:
        return f"{x:.2g}"
    return f"{x:.{prec}f}"


def tiles_label(r):
    """The tiles column: the tiles, then how Q is read and which loops ran unrolled."""
    notes = []
    if r.get("stream_q"):
        notes.append("Q streamed")
    if r.get("unroll_qk"):
        notes.append("Q K^T, P V unrolled" if r.get("unroll_pv") else "Q K^T unrolled")
    return f"{r['tiles']} ({'; '.join(notes)})" if notes else r["tiles"]


def fit_fixed_cost(at):
    """Least squares of 1 / TFLOP/s on 1 / N over {N: TFLOP/s}: (E, X, largest relative
    deviation of a measured figure from E N / (X + N)), or None where the fit has no positive E."""
    # 1 / TFLOP/s is linear in 1 / N: 1 / E + (X / E) / N.
    xs = [1.0 / n for n in at]
    ys = [1.0 / tf for tf in at.values()]
    mx, my = sum(xs) / len(xs), sum(ys) / len(ys)
    slope = sum((x - mx) * (y - my) for x, y in zip(xs, ys)) / sum((x - mx) ** 2 for x in xs)
    intercept = my - slope * mx
    if intercept <= 0:
        return None
    e, x = 1.0 / intercept, slope / intercept
    return e, x, max(abs(e * n / (x + n) / tf - 1.0) for n, tf in at.items())


def fixed_cost_rows(pts):
    """Per (series, dtype, d), non-causal, the fit E N / (X + N) of TFLOP/s against N:
    (series, dtype, d, E, X, largest relative deviation, N values, N left out). Only series
    measured at three or more N with one token count (B N), the fastest tile at each N. Where
    the fit misses a figure by more than 5% and five or more N ran, the one figure whose leaving
    out brings every other within 3% is left out, if it lies below that curve: a slow series
    (BENCHMARKS.md, twentieth round) drags every figure of the fit, and a slow figure is never
    faster than its kernel."""
    runs = {}  # (series, dtype, d) -> {N: (tokens, tflops)}
    for (series, dtype, d, n, causal), p in best(pts).items():
        # Materialized attention (ours, and PyTorch's math backend) runs other passes than a key
        # loop: no workgroup to fit.
        if not causal and p[5] > 0 and not series.startswith(("wgpu materialized", "torch math")):
            runs.setdefault((series, dtype, d), {})[n] = (p[8], p[5])
    out = []
    for (series, dtype, d), at in runs.items():
        if len(at) < 3 or len({tokens for tokens, _ in at.values()}) != 1:
            continue
        tflops = {n: tf for n, (_, tf) in at.items()}
        fit = fit_fixed_cost(tflops)
        if fit is None:
            continue
        left_out = []
        if fit[2] > 0.05 and len(tflops) >= 5:
            trials = []
            for n in tflops:
                rest = fit_fixed_cost({m: tf for m, tf in tflops.items() if m != n})
                if rest is not None and rest[2] < 0.03 and tflops[n] < rest[0] * n / (rest[1] + n):
                    trials.append((rest[2], n, rest))
            if trials:
                _, n, fit = min(trials)
                left_out = [n]
        e, x, dev = fit
        out.append((series, dtype, d, e, x, dev, sorted(n for n in tflops if n not in left_out), left_out))
    return out


def markdown(ours, peers, pts):
    lines = []
    for path, doc in ours:
        a = doc["adapter"]
        lines.append(f"Ours: {a['name']} ({a['backend']}, {a['driver']}); subgroups "
                     f"{a.get('subgroup_sizes')}; {doc['date']}; timing: {doc['timing']}  ")
        lines.append(f"Command: `{doc['command']}`\n")
    for path, doc in peers:
        lines.append(f"Peer: PyTorch {doc.get('torch', '?')} scaled_dot_product_attention on {doc.get('gpu', '?')}; "
                     f"{doc['date']}  ")
        lines.append(f"Command: `{doc['command']}`\n")

    top = best(pts)
    for dtype in sorted({p[1] for p in pts}):
        names = series_order({k[0] for k in top if k[1] == dtype})
        if not names:
            continue
        lines.append(f"### TFLOP/s, {dtype}\n")
        lines.append("| d | N | causal | " + " | ".join(names) + " |")
        lines.append("|---|---|---|" + "---|" * len(names))
        shapes = sorted({(k[2], k[3], k[4]) for k in top if k[1] == dtype})
        for d, n, c in shapes:
            cells = [fmt(top[(s, dtype, d, n, c)][5]) if (s, dtype, d, n, c) in top else "-" for s in names]
            lines.append(f"| {d} | {n} | {'yes' if c else 'no'} | " + " | ".join(cells) + " |")
        lines.append("")

    costs = fixed_cost_rows(pts)
    if costs:
        lines.append("### Fixed cost per workgroup (non-causal)\n")
        lines.append("TFLOP/s at N fitted as E N / (X + N), by least squares on 1 / TFLOP/s against 1 / N, "
                     "where every N ran the same number of tokens: E is the rate without a fixed cost, X the "
                     "fixed cost of a workgroup (a peer's thread block) in keys, \"fit\" the largest deviation "
                     "of a measured figure from the curve: a few percent or more means a figure off it (a slow "
                     "run, or a plan that changes with N), which the fit then misreads. Where one figure below "
                     "the curve was all that kept the others from fitting within 3%, it is left out and named.\n")
        lines.append("| series | dtype | d | E (TFLOP/s) | X (keys) | fit | N |")
        lines.append("|---|---|---|---|---|---|---|")
        order = {name: i for i, name in enumerate(series_order({c[0] for c in costs}))}
        for series, dtype, d, e, x, dev, ns, left_out in sorted(costs, key=lambda c: (c[1], c[2], order[c[0]])):
            dropped = "".join(f"; {n} left out" for n in left_out)
            lines.append(f"| {series} | {dtype} | {d} | {fmt(e)} | {x:.0f} | {100 * dev:.1f}% | "
                         f"{ns[0]}-{ns[-1]} ({len(ns)}{dropped}) |")
        lines.append("")

    for path, doc in ours:
        rows = doc["rows"]
        lines.append(f"### Every configuration of {os.path.basename(path)}\n")
        lines.append("| d | N | B x H | dtype | causal | kernel | tiles | flash ms | flash TFLOP/s | flash MB | "
                     "materialized ms | materialized TFLOP/s | materialized MB | flash / materialized | max err | ok |")
        lines.append("|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|")
        for r in rows:
            if r.get("baseline_ms") is not None:
                base = (f"{r['baseline_ms']:.2f} | {fmt(r['baseline_tflops'])} | "
                        f"{r['baseline_device_bytes'] / 1e6:.0f} | {r['speedup']:.2f}x")
            elif r.get("baseline_needed_bytes"):
                base = f"cannot allocate ({r['baseline_needed_bytes'] / 1e9:.1f} GB of scores per head) | - | - | -"
            else:
                base = "- | - | - | -"
            mb = r.get("flash_device_bytes")
            err = r.get("flash_max_err")
            lines.append(
                f"| {r['head_dim']} | {r['seq']} | {r['batch']} x {r['heads_q']} | {r['storage']} | "
                f"{'yes' if r['causal'] else 'no'} | {r.get('kernel', 'portable')} | {tiles_label(r)} | "
                f"{fmt(r.get('flash_ms'), 2)} | {fmt(r.get('flash_tflops'))} | {fmt(mb / 1e6 if mb else None, 0)} | "
                f"{base} | {'-' if err is None else f'{err:.1e}'} | {'yes' if r.get('ok') else 'NO: ' + str(r.get('error'))} |")
        lines.append("")
        skipped = doc.get("skipped") or []
        seen = set()
        for s in skipped:
            k = (s["kernel"], s.get("tiles"), s["reason"])
            if k in seen:
                continue
            seen.add(k)
            lines.append(f"- skipped: {s['kernel']} {s.get('tiles') or ''}: {s['reason']}")
        if skipped:
            lines.append("")
    return "\n".join(lines)


PALETTE = ["#1f77b4", "#d62728", "#2ca02c", "#9467bd", "#ff7f0e", "#8c564b", "#e377c2", "#17becf",
           "#7f7f7f", "#bcbd22"]


def svg(pts, log_y=True):
    """One panel per (head_dim, causal); lines per (series, dtype)."""
    top = best(pts)
    panels = sorted({(k[2], k[4]) for k in top})
    if not panels:
        return None
    lines_all = series_order({k[0] for k in top})
    dtypes = sorted({k[1] for k in top})
    series = [(s, dt) for s in lines_all for dt in dtypes if any(k[0] == s and k[1] == dt for k in top)]
    color = {s: PALETTE[i % len(PALETTE)] for i, s in enumerate(lines_all)}
    dash = {dt: d for dt, d in zip(dtypes, ["", "6,3", "2,3", "8,3,2,3"])}

    ns = sorted({k[3] for k in top})
    ys = [p[5] for p in top.values() if p[5] > 0]
    x0, x1 = math.log2(min(ns)), math.log2(max(ns))
    if x0 == x1:
        x0, x1 = x0 - 1, x1 + 1
    if log_y:
        y0 = math.floor(math.log10(min(ys)))
        y1 = math.ceil(math.log10(max(ys)))
        if y0 == y1:
            y1 += 1
    else:
        y0, y1 = 0.0, max(ys) * 1.08

    pw, ph = 420, 300  # panel plot area
    ml, mr, mt, mb = 62, 16, 34, 46
    cols = min(2, len(panels))
    rows = math.ceil(len(panels) / cols)
    legend_h = 22 * math.ceil(len(series) / 3) + 16
    width = cols * (ml + pw + mr)
    height = rows * (mt + ph + mb) + legend_h
    out = [f'<svg xmlns="http://www.w3.org/2000/svg" width="{width}" height="{height}" '
           f'viewBox="0 0 {width} {height}" font-family="sans-serif" font-size="12">',
           f'<rect width="{width}" height="{height}" fill="white"/>']

    def ymap(v):
        t = (math.log10(v) - y0) / (y1 - y0) if log_y else (v - y0) / (y1 - y0)
        return ph * (1 - t)

    for i, (d, causal) in enumerate(panels):
        ox = (i % cols) * (ml + pw + mr) + ml
        oy = (i // cols) * (mt + ph + mb) + mt
        out.append(f'<g transform="translate({ox},{oy})">')
        out.append(f'<text x="{pw / 2}" y="-12" text-anchor="middle" font-weight="bold">'
                   f'head_dim {d}, {"causal" if causal else "non-causal"}</text>')
        out.append(f'<rect width="{pw}" height="{ph}" fill="none" stroke="#444"/>')
        for n in ns:
            x = (math.log2(n) - x0) / (x1 - x0) * pw
            out.append(f'<line x1="{x:.1f}" y1="0" x2="{x:.1f}" y2="{ph}" stroke="#eee"/>')
            label = f"{n // 1024}k" if n >= 1024 and n % 1024 == 0 else str(n)
            out.append(f'<text x="{x:.1f}" y="{ph + 16}" text-anchor="middle">{label}</text>')
        if log_y:
            ticks = [10 ** e * m for e in range(int(y0), int(y1) + 1) for m in (1, 2, 5) if y0 <= e + math.log10(m) <= y1]
        else:
            step = 10 ** math.floor(math.log10(y1 / 5)) if y1 > 0 else 1
            step *= 2 if y1 / step > 10 else 1
            ticks = [k * step for k in range(int(y1 / step) + 1)]
        for t in ticks:
            y = ymap(t) if (t > 0 or not log_y) else None
            if y is None:
                continue
            out.append(f'<line x1="0" y1="{y:.1f}" x2="{pw}" y2="{y:.1f}" stroke="#eee"/>')
            out.append(f'<text x="-6" y="{y + 4:.1f}" text-anchor="end">{t:g}</text>')
        out.append(f'<text x="{pw / 2}" y="{ph + 34}" text-anchor="middle">sequence length N (log scale)</text>')
        out.append(f'<text transform="translate({-46},{ph / 2}) rotate(-90)" text-anchor="middle">'
                   f'TFLOP/s{" (log scale)" if log_y else ""}</text>')
        for s, dt in series:
            pts_line = sorted((k[3], p[5]) for k, p in top.items()
                              if k[0] == s and k[1] == dt and k[2] == d and k[4] == causal and p[5] > 0)
            if not pts_line:
                continue
            coords = [((math.log2(n) - x0) / (x1 - x0) * pw, ymap(v)) for n, v in pts_line]
            path = " ".join(f"{x:.1f},{y:.1f}" for x, y in coords)
            style = f' stroke-dasharray="{dash[dt]}"' if dash[dt] else ""
            out.append(f'<polyline points="{path}" fill="none" stroke="{color[s]}" stroke-width="2"{style}>'
                       f'<title>{html.escape(s)} {dt}</title></polyline>')
            for x, y in coords:
                out.append(f'<circle cx="{x:.1f}" cy="{y:.1f}" r="2.5" fill="{color[s]}"/>')
        out.append("</g>")

    ly = rows * (mt + ph + mb) + 8
    for j, (s, dt) in enumerate(series):
        lx = 16 + (j % 3) * (width - 32) / 3
        yy = ly + 22 * (j // 3)
        style = f' stroke-dasharray="{dash[dt]}"' if dash[dt] else ""
        out.append(f'<line x1="{lx:.0f}" y1="{yy + 6}" x2="{lx + 28:.0f}" y2="{yy + 6}" stroke="{color[s]}" '
                   f'stroke-width="2"{style}/>')
        out.append(f'<text x="{lx + 34:.0f}" y="{yy + 10}">{html.escape(s)} {dt}</text>')
    out.append("</svg>")
    return "\n".join(out) + "\n"


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("files", nargs="+", help="JSON files of benches/attention.rs and peer runners")
    ap.add_argument("--md", help="write the Markdown here instead of stdout")
    ap.add_argument("--svg", help="write the plot here")
    ap.add_argument("--y", choices=["log", "linear"], default="log", help="y axis scale of the plot")
    a = ap.parse_args()
    ours, peers = load(a.files)
    pts = points(ours, peers)
    text = markdown(ours, peers, pts)
    if a.md:
        with open(a.md, "w") as f:
            f.write(text + "\n")
    else:
        print(text)
    if a.svg:
        plot = svg(pts, log_y=a.y == "log")
        if plot is None:
            sys.exit("no measurements to plot")
        with open(a.svg, "w") as f:
            f.write(plot)
        print(f"wrote {a.svg}", file=sys.stderr)


if __name__ == "__main__":
    main()
