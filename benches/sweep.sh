#!/usr/bin/env bash
# The full comparison in one call: every kernel tier over the FlashAttention papers' shapes, a
# tile sweep at N=8k, PyTorch SDPA's backends on the same GPU (where PyTorch is installed), and
# the report (Markdown + SVG) of all of them. About five minutes on an H200.
#
#   bash benches/sweep.sh OUT_DIR            # builds the benchmark with cargo if ATTENTION is unset
#   ATTENTION=/path/to/attention-binary bash benches/sweep.sh OUT_DIR   # a machine without Rust
#
# Writes OUT_DIR/flash.json, tiles.json, coop_tiles.json, f16_products.json, torch.json (if PyTorch runs), report.md, report.svg,
# clocks.csv (where nvidia-smi exists) and the logs of each step.
set -euo pipefail
cd "$(dirname "$0")/.."
out="${1:?usage: benches/sweep.sh OUT_DIR}"
mkdir -p "$out"
if [ -z "${ATTENTION:-}" ]; then
  cargo bench --bench attention --no-run
  ATTENTION=$(ls -t target/release/deps/attention-* | grep -v '\.d$' | head -1)
fi
echo "benchmark binary: $ATTENTION"
# Where nvidia-smi exists, the GPU's clocks, temperature and power between the
# steps go to clocks.csv: a step that ran slow can then be told apart from a slow kernel.
clocks() {
  if command -v nvidia-smi > /dev/null; then
    echo "$1,$(nvidia-smi --query-gpu=clocks.sm,clocks.mem,temperature.gpu,power.draw --format=csv,noheader 2>&1 || true)" >> "$out/clocks.csv"
  fi
}
rm -f "$out/clocks.csv"
clocks start
# A configuration over its error tolerance makes the benchmark exit nonzero: the report is still
# written (the rows say which failed), and so is this script's exit status.
failed=""

"$ATTENTION" --tokens 16384 --seqs 1024,2048,4096,8192,16384 --dims 64,128 --dtypes f32,f16 \
  --causal both --kernels portable,subgroup,coop-matrix --runs 10 --warmup 5 \
  --json "$out/flash.json" | tee "$out/flash.txt" || failed="flash.json"
clocks after-flash
"$ATTENTION" --tokens 16384 --seqs 8192 --dims 64,128 --dtypes f32,f16 --causal off --baseline off \
  --kernels portable,subgroup \
  --tiles 32x32x16x16,64x16x8x16,32x32x16x8,64x32x8x16,128x32x8x32,128x32x16x16 \
  --runs 5 --warmup 3 --check-rows 8 --json "$out/tiles.json" | tee "$out/tiles.txt" || failed="${failed:+$failed, }tiles.json"
clocks after-tiles
inputs=("$out/flash.json" "$out/tiles.json")
# The tensor-core tier's tiles, where the adapter has that tier (the benchmark writes no JSON
# when none of the requested tiers can run).
rm -f "$out/coop_tiles.json"
if "$ATTENTION" --tokens 16384 --seqs 8192 --dims 64,128 --dtypes f16 --causal both --baseline off \
  --kernels coop-matrix --tiles 128x128x32x8,128x64x32x8,128x32x32x8,128x16x32x4,64x16x32x4,128x32x32x4 \
  --runs 10 --warmup 5 --check-rows 8 --json "$out/coop_tiles.json" > "$out/coop_tiles.txt" 2>&1; then
  inputs+=("$out/coop_tiles.json")
elif [ -f "$out/coop_tiles.json" ]; then
  inputs+=("$out/coop_tiles.json")
  failed="${failed:+$failed, }coop_tiles.json"
else
  echo "SKIPPED: tensor-core tiles (see $out/coop_tiles.txt)"
fi
cat "$out/coop_tiles.txt"
clocks after-coop-tiles
# f32 and bf16 on the tensor-core tier (Attention::allow_f16_products), where the adapter has it.
rm -f "$out/f16_products.json"
if "$ATTENTION" --tokens 16384 --seqs 1024,2048,4096,8192,16384 --dims 64,128 --dtypes f32,bf16 \
  --f16-products --causal both --kernels coop-matrix --baseline off --runs 10 --warmup 5 \
  --json "$out/f16_products.json" > "$out/f16_products.txt" 2>&1; then
  inputs+=("$out/f16_products.json")
elif [ -f "$out/f16_products.json" ]; then
  inputs+=("$out/f16_products.json")
  failed="${failed:+$failed, }f16_products.json"
else
  echo "SKIPPED: f32 and bf16 on the tensor cores (see $out/f16_products.txt)"
fi
grep -E "^\|" "$out/f16_products.txt" || true
clocks after-f16-products
if python3 -c "import torch, triton; assert torch.cuda.is_available()" 2>/dev/null; then
  python3 benches/torch_sdpa.py --dtypes f16,bf16,f32 --json "$out/torch.json" | tee "$out/torch.txt"
  inputs+=("$out/torch.json")
  clocks after-torch
else
  echo "SKIPPED: PyTorch SDPA (no torch with CUDA and triton here)"
fi
python3 benches/report.py "${inputs[@]}" --md "$out/report.md" --svg "$out/report.svg"
echo "wrote $out/report.md and $out/report.svg"
if [ -n "$failed" ]; then
  echo "FAILED: some configurations of $failed failed or exceeded their error tolerance (see the report)"
  exit 1
fi
