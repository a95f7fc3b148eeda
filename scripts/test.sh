#!/usr/bin/env bash
# The whole test suite: on Vulkan (a GPU driver, or Mesa's lavapipe), then again on wgpu's GL
# backend (llvmpipe when no GPU driver is present), short runs of the benchmarks with their own
# checks, a check that the library and its test targets build for wasm32, then in headless Chromium through WebGPU (scripts/test-web.sh), plus docs
# without warnings.
# A machine without any adapter fails here: the GPU tests never skip for lack of a device.
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/setup.sh

echo "== tests on Vulkan"
WGPU_BACKEND=vulkan cargo test --release

echo "== tests on GL"
# wgpu's GL backend runs all work on one GL context: run the tests one at a time.
WGPU_BACKEND=gl cargo test --release --tests -- --test-threads=1

echo "== benchmark report (benches/report.py on the stored H200 results)"
report_dir="$(mktemp -d)"
python3 benches/report.py bench-results/h200-2026-11-30/flash.json bench-results/h200-2026-11-30/torch.json \
  --md "$report_dir/report.md" --svg "$report_dir/report.svg"
python3 -c "import sys, xml.dom.minidom; xml.dom.minidom.parse(sys.argv[1])" "$report_dir/report.svg"
grep -q "torch FlashAttention-2" "$report_dir/report.md"
grep -q "Fixed cost per workgroup" "$report_dir/report.md"
# The fixed-cost fit recovers a rate and a cost it is given: E = 100 TFLOP/s, X = 50 keys.
python3 - <<'PY'
import sys
sys.dont_write_bytecode = True
sys.path.insert(0, "benches")
import report
def fit(seqs, slow=None, factor=1.0):
    """The fit of E = 100, X = 50 measured at seqs, the figure at `slow` times factor."""
    rows = [{"causal": False, "flash_tflops": 100.0 * n / (50 + n) * (factor if n == slow else 1.0),
             "kernel": "portable", "dtype": "f16", "head_dim": 64, "seq": n, "batch": 16384 // n,
             "flash_ms": 1.0} for n in seqs]
    (row,) = report.fixed_cost_rows(report.points([("f.json", {"rows": rows})], []))
    return row[3:]
e, x, dev, ns, out = fit((1024, 2048, 4096))
assert abs(e - 100) < 1e-6 and abs(x - 50) < 1e-6 and dev < 1e-9 and ns == [1024, 2048, 4096], (e, x, dev)
assert out == [], out
# One figure of five three times too slow (a slow series) is left out, and the rest fit exactly;
# one too fast is not.
for factor, left in ((1 / 3, [2048]), (3, [])):
    e, x, dev, ns, out = fit((1024, 2048, 4096, 8192, 16384), 2048, factor)
    assert out == left and len(ns) == 5 - len(left), (factor, out, ns)
    assert (abs(e - 100) < 1e-6 and abs(x - 50) < 1e-6) == bool(left), (factor, e, x)
PY
rm -r "$report_dir"

echo "== the benchmarks run and pass their own checks (small defaults, on Vulkan)"
# decode checks sampled rows against an f64 oracle and arith its sums and step counts; each exits
# nonzero on a mismatch. The second decode run takes the other paths: caches written on the GPU,
# and all runs in one submission (GpuTimer::with_pairs).
WGPU_BACKEND=vulkan cargo bench --bench decode
WGPU_BACKEND=vulkan cargo bench --bench decode -- --fill gpu --timing queued --kv 1024 --runs 4
WGPU_BACKEND=vulkan cargo bench --bench arith
WGPU_BACKEND=vulkan cargo bench --bench bandwidth

echo "== the library and its test targets build for wasm32"
# The native-only test files compile to nothing there; a native-only item used outside them fails.
cargo check --release --target wasm32-unknown-unknown --lib --tests

echo "== tests in a browser"
# Headless Chromium, WebGPU on SwiftShader where there is no GPU; installs what it needs once.
bash scripts/test-web.sh

echo "== docs"
RUSTDOCFLAGS="-D warnings" cargo doc --no-deps --quiet
echo "all tests passed"
