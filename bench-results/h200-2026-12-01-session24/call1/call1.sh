# Session 24, call 1: the tree as committed at 7cd1fa4 (no H200 call ran it before). The whole test
# suite on every tier (tiers in the background), then the plan at head dims 16-96 with the tiles
# the twenty-third round did not time: held-Q 256x32x8x32 and 128x32x8x32 below d = 32, and other
# streamed tiles at d = 80 and 96; the plan causal at d = 32 and 64.
source .device/gpu/prelude.sh; export WGPU_BACKEND=vulkan
tar xzf .device/bin.tgz -C .device
R=$OUT/r; mkdir -p $R; B=.device/bin
T0=$(date +%s); el() { echo "[$(( $(date +%s) - T0 )) s]"; }
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | tee $R/gpu.txt
(timeout 480 $B/tiers --test-threads=8 > $R/test-tiers.txt 2>&1; echo "rc=$?" >> $R/test-tiers.txt) &
TIERS=$!
timeout 60 $B/kernel_stats --kernels subgroup --dims 16,24,32,64,80,96 --dtypes f32 > $R/stats.txt 2>&1
echo "== stats: $(grep -iE "^==|register|local memory" $R/stats.txt | tr -s ' ' | paste -sd';' | cut -c1-1500)"
for t in forward variants materialized errors kvcache shader_dir autotune shader_checks shaders planning; do echo "== test $t $(el)"
  timeout 300 $B/$t --test-threads=8 > $R/test-$t.txt 2>&1; echo "rc=$?"; grep -E "test result|panicked|FAILED|failed" $R/test-$t.txt | head -6
done
wait $TIERS; echo "== test tiers $(el)"; grep -E "test result|panicked|FAILED|failed|rc=" $R/test-tiers.txt | head -8
show() { echo "$2 $(grep -E "^\| NVIDIA|rror|panic|SKIP|skip" $1 | cut -d"|" -f7,8,9,10,11,12,13,19 | tr -s ' ' | paste -sd';')"; }
S="--tokens 16384 --seqs 8192 --baseline off --runs 10 --warmup 3 --warmup-ms 300 --check-rows 8 --kernels subgroup --dtypes f32,f16"
timeout 120 $B/attention $S --causal off --dims 16,24,32,48,64,80,96 --json $R/plan.json > $R/plan.txt 2>&1; show $R/plan.txt "plan $(el)"
timeout 60 $B/attention $S --causal on --dims 32,64 --json $R/plan_causal.json > $R/plan_causal.txt 2>&1; show $R/plan_causal.txt "plan causal $(el)"
timeout 120 $B/attention $S --causal off --dims 16,24 --tiles 256x32x8x32,128x32x8x32,128x32x4x32 --json $R/small.json > $R/small.txt 2>&1; show $R/small.txt "small $(el)"
timeout 120 $B/attention $S --causal off --dims 80,96 --tiles 128x32x4x32,64x32x8x16,64x32x16x16 --json $R/mid.json > $R/mid.txt 2>&1; show $R/mid.txt "mid $(el)"
echo "== done $(el)"
tar czf $OUT/results.tgz -C $R . && rm -r $R
