# Session 22, call 7: d = 192, where call 6's unrolled f16 ran slower than the loops (18.9 against
# 25.0 TFLOP/s): registers and spills of the committed form (both products unrolled; kernel_stats
# had no --unroll then, so the loops' were not taken); attention_a is a build whose plan unrolls P V only up to d = 160 (Q K^T still unrolled).
# f32 and f16, N = 8k, non-causal, two rounds.
source .device/gpu/prelude.sh; export WGPU_BACKEND=vulkan
tar xzf .device/bin.tgz -C .device
R=$OUT/r; mkdir -p $R; B=.device/bin
T0=$(date +%s); el() { echo "[$(( $(date +%s) - T0 )) s]"; }
timeout 60 $B/kernel_stats --kernels subgroup --dims 192 --dtypes f32,f16 > $R/stats.txt 2>&1
echo "== stats: $(grep -iE "^==|register|local|spill" $R/stats.txt | tr -s ' ' | paste -sd';' | cut -c1-900)"
show() { echo "$2 $(grep -E "^\| NVIDIA|rror|panic|SKIP" $1 | cut -d"|" -f7,8,11,12,13 | tr -s ' ' | paste -sd';')"; }
S="--tokens 16384 --seqs 8192 --baseline off --runs 10 --warmup 3 --warmup-ms 300 --check-rows 8 --kernels subgroup --dtypes f32,f16 --causal off --dims 192"
for round in 1 2; do
  timeout 90 $B/attention $S --json $R/both_$round.json > $R/both_$round.txt 2>&1; show $R/both_$round.txt "both $round $(el)"
  timeout 90 $B/attention_a $S --json $R/qk_$round.json > $R/qk_$round.txt 2>&1; show $R/qk_$round.txt "qk-only $round $(el)"
  timeout 90 $B/attention $S --unroll off --json $R/off_$round.json > $R/off_$round.txt 2>&1; show $R/off_$round.txt "off $round $(el)"
done
echo "== done $(el)"
tar czf $OUT/results.tgz -C $R . && rm -r $R
