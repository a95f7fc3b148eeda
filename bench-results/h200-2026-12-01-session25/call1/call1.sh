# Session 25, call 1: the whole forward, variants and tiers suites on every tier with ff7a5fd
# (the final tree of the twenty-fourth round, not yet run on the H200); then, at head dims with
# an odd number of vec4s (d = 20, 28, 36, 44), the plan's 8 lanes against 4, 2 and 1 lane.
source .device/gpu/prelude.sh; export WGPU_BACKEND=vulkan
tar xzf .device/bin.tgz -C .device
R=$OUT/r; mkdir -p $R; B=.device/bin
T0=$(date +%s); el() { echo "[$(( $(date +%s) - T0 )) s]"; }
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | tee $R/gpu.txt
show() { echo "$2 $(grep -E "^\| NVIDIA|rror|panic|SKIP|skip" $1 | cut -d"|" -f7,8,9,11,13,19 | tr -s ' ' | paste -sd';')"; }
(timeout 420 $B/tiers --test-threads=8 > $R/test-tiers.txt 2>&1; echo "tiers rc=$? $(el)" > $R/tiers-rc.txt) &
TP=$!
timeout 170 $B/forward --test-threads=8 > $R/test-forward.txt 2>&1; echo "forward rc=$? $(el)"; grep -E "test result|panicked|FAILED|failed" $R/test-forward.txt | head -6
timeout 220 $B/variants --test-threads=8 > $R/test-variants.txt 2>&1; echo "variants rc=$? $(el)"; grep -E "test result|panicked|FAILED|failed" $R/test-variants.txt | head -6
wait $TP; cat $R/tiers-rc.txt; grep -E "test result|panicked|FAILED|failed" $R/test-tiers.txt | head -6
S="--tokens 16384 --seqs 8192 --baseline off --runs 10 --warmup 3 --warmup-ms 300 --check-rows 8 --kernels subgroup --dtypes f32,f16 --causal off"
for d in 20 28 36 44; do
  [ $(( $(date +%s) - T0 )) -gt 470 ] && { echo "skip d=$d $(el)"; continue; }
  timeout 60 $B/attention $S --dims $d --tiles 256x32x8x32,256x32x4x64,256x32x2x128,256x32x1x256 --json $R/lanes$d.json > $R/lanes$d.txt 2>&1; show $R/lanes$d.txt "lanes d=$d $(el)"
done
echo "== done $(el)"
tar czf $OUT/results.tgz -C $R . && rm -r $R
