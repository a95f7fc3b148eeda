# Session 25, call 2: the tree of call 1 (ff7a5fd). Lanes per row against the plan's: odd
# numbers of vec4s above d = 64 (76, 100, 124) and at 52 and 60; 1 and 2 lanes at even counts
# (16, 24, 40); lanes fitted above d = 128 (136, 144, 176, 200), where the plan does not fit
# them; causal at d = 28 with 1 lane.
source .device/gpu/prelude.sh; export WGPU_BACKEND=vulkan
tar xzf .device/bin.tgz -C .device
R=$OUT/r; mkdir -p $R; B=.device/bin
T0=$(date +%s); el() { echo "[$(( $(date +%s) - T0 )) s]"; }
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | tee $R/gpu.txt
show() { echo "$2 $(grep -E "^\| NVIDIA|rror|panic|SKIP|skip" $1 | cut -d"|" -f7,8,9,11,13,19 | tr -s ' ' | sed 's/(Q streamed; Q K^T, P V unrolled)/s/; s/(Q streamed; Q K^T unrolled)/sq/' | paste -sd';')"; }
S="--tokens 16384 --seqs 8192 --baseline off --runs 10 --warmup 3 --warmup-ms 300 --check-rows 8 --kernels subgroup --dtypes f32,f16"
run() { # name, timeout, args...
  local n=$1 t=$2; shift 2
  [ $(( $(date +%s) - T0 )) -gt 500 ] && { echo "skip $n $(el)"; return; }
  timeout $t $B/attention $S "$@" --json $R/$n.json > $R/$n.txt 2>&1; show $R/$n.txt "$n $(el)"
}
for d in 76 100 124; do run odd$d 70 --causal off --dims $d --tiles 128x32x8x32,128x32x4x64,128x32x2x128,256x32x2x128,256x32x1x256; done
for d in 52 60; do run odd$d 50 --causal off --dims $d --tiles 256x32x8x32,256x32x2x128,256x32x1x256; done
run even16 40 --causal off --dims 16 --tiles 256x32x4x64,256x32x2x128,256x32x1x256
run even24_40 50 --causal off --dims 24,40 --tiles 256x32x2x128,256x32x1x256
run causal28 40 --causal on --dims 28 --tiles 256x32x8x32,256x32x1x256
run big136_200 60 --causal off --dims 136,200 --tiles 128x32x8x32,128x32x2x128
run big144_176 60 --causal off --dims 144,176 --tiles 128x32x8x32,128x32x4x64
echo "== done $(el)"
tar czf $OUT/results.tgz -C $R . && rm -r $R
