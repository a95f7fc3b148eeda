# Session 24, call 2 (the binaries of call 1, tree 7cd1fa4): tiles for the head dims where the plan
# is weakest. At d = 16 and 24 the plan falls to 8x8x4x8 (no family tile has threads_x <= d / 4),
# at 48, 80 and 112 the head dim's vec4s do not split evenly over 8 lanes.
source .device/gpu/prelude.sh; export WGPU_BACKEND=vulkan
tar xzf .device/bin.tgz -C .device
R=$OUT/r; mkdir -p $R; B=.device/bin
T0=$(date +%s); el() { echo "[$(( $(date +%s) - T0 )) s]"; }
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | tee $R/gpu.txt
show() { echo "$2 $(grep -E "^\| NVIDIA|rror|panic|SKIP|skip" $1 | cut -d"|" -f7,10,11,13 | tr -s ' ' | paste -sd';')"; }
S="--tokens 16384 --seqs 8192 --baseline off --runs 10 --warmup 3 --warmup-ms 300 --check-rows 8 --kernels subgroup --dtypes f32,f16 --causal off"
timeout 150 $B/attention $S --dims 16,24 --tiles 128x32x4x32,256x32x4x32,128x64x4x32,256x64x4x32,128x32x2x64,256x32x4x64,64x32x4x16 --json $R/small.json > $R/small.txt 2>&1; show $R/small.txt "small $(el)"
timeout 100 $B/attention $S --dims 48 --tiles 256x32x8x32,256x32x4x32,128x32x4x32,256x64x4x32,128x32x4x64 --json $R/d48.json > $R/d48.txt 2>&1; show $R/d48.txt "d48 $(el)"
timeout 100 $B/attention $S --dims 80,112 --tiles 128x32x8x32,128x32x4x32,256x32x4x32,128x32x4x64 --json $R/d80.json > $R/d80.txt 2>&1; show $R/d80.txt "d80 $(el)"
timeout 60 $B/kernel_stats --kernels subgroup --dims 16,48,80 --dtypes f32 --tiles 128x32x4x32,256x32x4x32,256x64x4x32 > $R/stats.txt 2>&1
echo "== stats: $(grep -iE "^==|register" $R/stats.txt | tr -s ' ' | paste -sd';' | cut -c1-1500)"
echo "== done $(el)"
tar czf $OUT/results.tgz -C $R . && rm -r $R
