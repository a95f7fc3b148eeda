# Session 23, call 6: call 3's build; 256x32x8x32 with Q streamed (call 5's fastest at d = 32 and
# 64) causal at d = 32 and 64, and non-causal at d = 48, against the plan.
source .device/gpu/prelude.sh; export WGPU_BACKEND=vulkan
tar xzf .device/bin.tgz -C .device
R=$OUT/r; mkdir -p $R; B=.device/bin
T0=$(date +%s); el() { echo "[$(( $(date +%s) - T0 )) s]"; }
show() { echo "$2 $(grep -E "^\| NVIDIA|rror|panic|SKIP|skip" $1 | cut -d"|" -f7,8,9,10,11,12,13,19 | tr -s ' ' | paste -sd';')"; }
S="--tokens 16384 --seqs 8192 --baseline off --runs 10 --warmup 3 --warmup-ms 300 --check-rows 8 --kernels subgroup --dtypes f32,f16"
timeout 60 $B/attention $S --causal on --dims 32,64 --tiles 256x32x8x32 --json $R/causal.json > $R/causal.txt 2>&1; show $R/causal.txt "causal $(el)"
timeout 60 $B/attention $S --causal off --dims 48 --json $R/d48_plan.json > $R/d48_plan.txt 2>&1; show $R/d48_plan.txt "d48 plan $(el)"
timeout 60 $B/attention $S --causal off --dims 48 --tiles 256x32x8x32 --json $R/d48.json > $R/d48.txt 2>&1; show $R/d48.txt "d48 $(el)"
echo "== done $(el)"
tar czf $OUT/results.tgz -C $R . && rm -r $R
