# Session 23, call 3: the tree as committed for this round (the second streamed-Q tile, P V unrolled
# by accumulators): the plan at d = 128, 192 and 256 (registers and speed); then the whole test
# suite on every tier the H200 offers (no FLASH_TEST_KERNELS), tiers in the background with a
# longer limit.
source .device/gpu/prelude.sh; export WGPU_BACKEND=vulkan
tar xzf .device/bin.tgz -C .device
R=$OUT/r; mkdir -p $R; B=.device/bin
T0=$(date +%s); el() { echo "[$(( $(date +%s) - T0 )) s]"; }
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | tee $R/gpu.txt
(timeout 480 $B/tiers --test-threads=8 > $R/test-tiers.txt 2>&1; echo "rc=$?" >> $R/test-tiers.txt) &
TIERS=$!
timeout 60 $B/kernel_stats --kernels subgroup --dims 128,192,256 --dtypes f32,f16 > $R/stats.txt 2>&1
echo "== stats: $(grep -iE "^==|register|local memory" $R/stats.txt | tr -s ' ' | paste -sd';' | cut -c1-1500)"
show() { echo "$2 $(grep -E "^\| NVIDIA|rror|panic|SKIP|skip" $1 | cut -d"|" -f7,8,9,10,11,12,13,19 | tr -s ' ' | paste -sd';')"; }
for t in forward variants materialized errors kvcache shader_dir autotune shader_checks shaders planning; do echo "== test $t $(el)"
  timeout 300 $B/$t --test-threads=8 > $R/test-$t.txt 2>&1; echo "rc=$?"; grep -E "test result|panicked|FAILED|failed" $R/test-$t.txt | head -6
done
wait $TIERS; echo "== test tiers $(el)"; grep -E "test result|panicked|FAILED|failed|rc=" $R/test-tiers.txt | head -8
S="--tokens 16384 --seqs 8192 --baseline off --runs 10 --warmup 3 --warmup-ms 300 --check-rows 8"
timeout 120 $B/attention $S --causal off --kernels subgroup --dtypes f32,f16 --dims 128,192,256 --json $R/plan.json > $R/plan.txt 2>&1; show $R/plan.txt "plan $(el)"
echo "== done $(el)"
tar czf $OUT/results.tgz -C $R . && rm -r $R
