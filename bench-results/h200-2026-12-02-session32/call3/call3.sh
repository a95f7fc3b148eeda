# Thirty-second round, call 3 (call 1's binaries; `.device/hyb` made from c049b58's shader by
# bench-results/h200-2026-12-02-session31/call2/mkhyb.py ... inloop).
# 1. d = 256 with f16 products: bf16 spills 544 bytes at the plan's 128x32x32x8 (f32 224, f16
#    144) and runs 95 / 88 TFLOP/s; 16-key tiles (128x16x32x8) halve the registers the loads
#    take. f16, f32 and bf16 at both tiles, two rounds alternating.
# 2. The thirty-first round's prepared call, bench-results/h200-2026-12-02-session31/experiments/
#    next.sh: which tensor-core configurations run two workgroups per SM.
source .device/gpu/prelude.sh; export WGPU_BACKEND=vulkan
R=$OUT/r; mkdir -p $R; B=.device/bin
T0=$(date +%s); el() { echo "[$(( $(date +%s) - T0 )) s]"; }
show() { echo "$2 $(grep -E "^\| NVIDIA|rror|panic|SKIP|skip" $1 | cut -d"|" -f6,7,8,9,11,13,19 | tr -s ' ' | paste -sd';')"; }
timeout 60 $B/kernel_stats --kernels coop-matrix --dims 256 --dtypes f16,f32,bf16 --f16-products --tiles 128x16x32x8 > $R/stats16.txt 2>&1
echo "== stats 16-key: $(grep -iE "^==|register|local|rror|panic" $R/stats16.txt | tr -s ' ' | paste -sd';')"
A="--tokens 16384 --kernels coop-matrix --baseline off --runs 10 --warmup 3 --warmup-ms 300 --check-rows 8 --causal both --seqs 8192 --f16-products --dims 256 --tiles 128x32x32x8,128x16x32x8"
for r in 1 2; do
  order="bf16 f32 f16"; [ $r = 2 ] && order="f16 f32 bf16"
  for t in $order; do
    timeout 100 $B/attention $A --dtypes $t --json $R/$t-r$r.json > $R/$t-r$r.txt 2>&1
    show $R/$t-r$r.txt "$t-r$r $(el)"
  done
done
mkdir -p $R/next; OUT_SAVED=$OUT; OUT=$R/next
timeout 400 bash bench-results/h200-2026-12-02-session31/experiments/next.sh
OUT=$OUT_SAVED
echo "== done $(el)"
tar czf $OUT/results.tgz -C $R . && rm -r $R
