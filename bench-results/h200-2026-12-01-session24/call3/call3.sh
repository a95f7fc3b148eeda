# Session 24, call 3 (the binaries of call 1, tree 7cd1fa4): a rule for the lanes of a row. Call 2
# found the plan's tiles slowest where the head dim's vec4s do not split evenly over threads_x = 8
# lanes; here, at head dims that are not multiples of 32, the plan's tile against the same tile with
# threads_x halved (and threads_y doubled) until it divides d / 4, and one other split.
source .device/gpu/prelude.sh; export WGPU_BACKEND=vulkan
tar xzf .device/bin.tgz -C .device
R=$OUT/r; mkdir -p $R; B=.device/bin
T0=$(date +%s); el() { echo "[$(( $(date +%s) - T0 )) s]"; }
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | tee $R/gpu.txt
show() { echo "$2 $(grep -E "^\| NVIDIA|rror|panic|SKIP|skip" $1 | cut -d"|" -f7,9,11,13 | tr -s ' ' | paste -sd';')"; }
S="--tokens 16384 --seqs 8192 --baseline off --runs 10 --warmup 3 --warmup-ms 300 --check-rows 8 --kernels subgroup --dtypes f32,f16 --causal off"
timeout 150 $B/attention $S --dims 16,24,40,48,56,72,80,88,104,112,120 --json $R/plan.json > $R/plan.txt 2>&1; show $R/plan.txt "plan $(el)"
run() { timeout 60 $B/attention $S --dims $1 --tiles $2 --json $R/d$1.json > $R/d$1.txt 2>&1; show $R/d$1.txt "d=$1 $(el)"; }
run 16 256x32x4x64
run 24 256x32x2x128,128x32x2x64
run 40 256x32x2x128,256x32x4x64
run 48 256x32x4x64,256x32x4x32
run 56 256x32x2x128,256x32x4x64
run 72 128x32x2x128,128x32x4x64
run 88 128x32x2x128,128x32x4x64
run 104 128x32x2x128,128x32x4x64
run 120 128x32x2x128,128x32x4x64
echo "== done $(el)"
tar czf $OUT/results.tgz -C $R . && rm -r $R
