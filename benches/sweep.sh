#!/usr/bin/env bash
# The full comparison in one call: every kernel tier over the FlashAttention papers' shapes, a
# tile sweep at N=8k, PyTorch SDPA's backends on the same GPU (where PyTorch is installed), and
# the report (Markdown + SVG) of all of them. About six minutes on an H200.
#
#   bash benches/sweep.sh OUT_DIR            # builds the benchmark with cargo if ATTENTION is unset
#   ATTENTION=/path/to/attention-binary bash benches/sweep.sh OUT_DIR   # a machine without Rust
#
# Writes OUT_DIR/flash.json, tiles.json, coop_tiles.json, f16_products.json, head_dims.json, torch.json and
# torch_head_dims.json (if PyTorch runs), report.md, report.svg,
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
# A step on the tensor-core tier only, where the adapter has it: NAME, WHAT (for the skip
# message), then the benchmark's arguments. The benchmark writes no JSON when none of the
# requested tiers can run, and exits nonzero (after writing it) when a row failed.
coop_step() {
  local name=$1 what=$2
  shift 2
  rm -f "$out/$name.json"
  if "$ATTENTION" "$@" --kernels coop-matrix --baseline off --json "$out/$name.json" > "$out/$name.txt" 2>&1; then
    inputs+=("$out/$name.json")
  elif [ -f "$out/$name.json" ]; then
    inputs+=("$out/$name.json")
    failed="${failed:+$failed, }$name.json"
  else
    echo "SKIPPED: $what (see $out/$name.txt)"
  fi
  grep -E "^\|" "$out/$name.txt" || true
  clocks "after-$name"
}
# The tensor-core tier's tiles.
coop_step coop_tiles "tensor-core tiles" --tokens 16384 --seqs 8192 --dims 64,128 --dtypes f16 \
  --causal both --tiles 128x128x32x8,128x64x32x8,128x32x32x8,128x16x32x4,64x16x32x4,128x32x32x4 \
  --runs 10 --warmup 5 --check-rows 8
# f32 and bf16 on the tensor cores (Attention::allow_f16_products).
coop_step f16_products "f32 and bf16 on the tensor cores" --tokens 16384 \
  --seqs 1024,2048,4096,8192,16384 --dims 64,128 --dtypes f32,bf16 --f16-products --causal both \
  --runs 10 --warmup 5
# The tensor-core tier at the other head dims the tables tune, N = 8k, beside PyTorch's
# FlashAttention-2 and cuDNN at the same ones (below).
head_dims=32,96,160,192,224,256
coop_step head_dims "tensor-core head dims" --tokens 16384 --seqs 8192 --dims "$head_dims" \
  --dtypes f16 --causal both --runs 10 --warmup 5 --check-rows 8
if python3 -c "import torch, triton; assert torch.cuda.is_available()" 2>/dev/null; then
  python3 benches/torch_sdpa.py --dtypes f16,bf16,f32 --json "$out/torch.json" | tee "$out/torch.txt"
  python3 benches/torch_sdpa.py --seqs 8192 --dims "$head_dims" --dtypes f16 --backends flash,cudnn \
    --json "$out/torch_head_dims.json" | tee "$out/torch_head_dims.txt"
  inputs+=("$out/torch.json" "$out/torch_head_dims.json")
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
