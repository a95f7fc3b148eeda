# Session 23, call 5: call 3's build; at d = 32 and 64 the plan holds Q (64x32x8x16; the table
# streams Q only above d = 64, a rule measured before the products were unrolled): streamed and
# other tiles against it, two rounds alternating.
source .device/gpu/prelude.sh; export WGPU_BACKEND=vulkan
tar xzf .device/bin.tgz -C .device
R=$OUT/r; mkdir -p $R; B=.device/bin
T0=$(date +%s); el() { echo "[$(( $(date +%s) - T0 )) s]"; }
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | tee $R/gpu.txt
timeout 60 $B/kernel_stats --kernels subgroup --dims 64 --dtypes f32 --tiles 64x32x8x16,128x32x8x32,256x32x8x32,128x32x4x32,64x32x4x16,64x64x8x16 > $R/stats.txt 2>&1
echo "== stats: $(grep -iE "^==|register" $R/stats.txt | tr -s ' ' | paste -sd';' | cut -c1-1500)"
show() { echo "$2 $(grep -E "^\| NVIDIA|rror|panic|SKIP|skip" $1 | cut -d"|" -f7,8,9,10,11,12,13,19 | tr -s ' ' | paste -sd';')"; }
S="--tokens 16384 --seqs 8192 --baseline off --runs 10 --warmup 3 --warmup-ms 300 --check-rows 8 --kernels subgroup --dtypes f32,f16 --dims 32,64"
for round in 1 2; do
  timeout 90 $B/attention $S --causal off --json $R/plan_$round.json > $R/plan_$round.txt 2>&1; show $R/plan_$round.txt "plan $round $(el)"
  timeout 200 $B/attention $S --causal off --tiles 128x32x8x32,256x32x8x32,128x32x4x32,64x32x4x16,64x64x8x16 --json $R/tiles_$round.json > $R/tiles_$round.txt 2>&1; show $R/tiles_$round.txt "tiles $round $(el)"
done
timeout 150 $B/attention $S --causal on --tiles 64x32x8x16,128x32x8x32,128x32x4x32 --json $R/causal.json > $R/causal.txt 2>&1; show $R/causal.txt "causal $(el)"
echo "== done $(el)"
tar czf $OUT/results.tgz -C $R . && rm -r $R
