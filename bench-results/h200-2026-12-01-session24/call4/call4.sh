# Session 24, call 4: the tree with the streamed-Q tiles' lanes fitted to the head dim (and the
# 256-row range from d = 16). The plan at head dims 16-80, non-causal, with the tile the plan
# took before at d = 20 and 28 (odd numbers of vec4s, where the lanes stay at 8); causal at 24,
# 48 and 80, and at 48 and 80 with the tiles before; then the forward suite.
source .device/gpu/prelude.sh; export WGPU_BACKEND=vulkan
tar xzf .device/bin.tgz -C .device
R=$OUT/r; mkdir -p $R; B=.device/bin
T0=$(date +%s); el() { echo "[$(( $(date +%s) - T0 )) s]"; }
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | tee $R/gpu.txt
show() { echo "$2 $(grep -E "^\| NVIDIA|rror|panic|SKIP|skip" $1 | cut -d"|" -f7,8,9,11,13,19 | tr -s ' ' | paste -sd';')"; }
S="--tokens 16384 --seqs 8192 --baseline off --runs 10 --warmup 3 --warmup-ms 300 --check-rows 8 --kernels subgroup --dtypes f32,f16"
timeout 150 $B/attention $S --causal off --dims 16,20,24,28,40,48,80 --json $R/plan.json > $R/plan.txt 2>&1; show $R/plan.txt "plan $(el)"
timeout 40 $B/attention $S --causal off --dims 20,28 --tiles 8x8x4x8 --json $R/before.json > $R/before.txt 2>&1; show $R/before.txt "before $(el)"
timeout 50 $B/attention $S --causal on --dims 24,48,80 --json $R/causal.json > $R/causal.txt 2>&1; show $R/causal.txt "causal $(el)"
timeout 30 $B/attention $S --causal on --dims 48 --tiles 256x32x8x32 --json $R/causal_before48.json > $R/causal_before48.txt 2>&1; show $R/causal_before48.txt "causal before 48 $(el)"
timeout 30 $B/attention $S --causal on --dims 80 --tiles 128x32x8x32 --json $R/causal_before80.json > $R/causal_before80.txt 2>&1; show $R/causal_before80.txt "causal before 80 $(el)"
timeout 150 $B/forward --test-threads=8 > $R/test-forward.txt 2>&1; echo "rc=$?"; grep -E "test result|panicked|FAILED|failed" $R/test-forward.txt | head -6
echo "== done $(el)"
tar czf $OUT/results.tgz -C $R . && rm -r $R
