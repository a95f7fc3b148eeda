# Session 25, call 3: the tree with odd numbers of vec4s on 1 lane a row below 11 vec4s and on 2
# from there (tuning::lanes_fitted). The plan at every odd count from d = 20 to 124; the tile
# before (8 lanes) at the odd counts not yet measured; 256-row tiles, fitted, against the plan's
# 128-row tiles at d = 68-88 (where they fit 48 KiB); causal at 20 and 68; the forward suite.
source .device/gpu/prelude.sh; export WGPU_BACKEND=vulkan
tar xzf .device/bin.tgz -C .device
R=$OUT/r; mkdir -p $R; B=.device/bin
T0=$(date +%s); el() { echo "[$(( $(date +%s) - T0 )) s]"; }
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | tee $R/gpu.txt
show() { echo "$2 $(grep -E "^\| NVIDIA|rror|panic|SKIP|skip" $1 | cut -d"|" -f7,8,9,11,13,19 | tr -s ' ' | sed 's/(Q streamed; Q K^T, P V unrolled)/s/; s/(Q streamed; Q K^T unrolled)/sq/' | paste -sd';')"; }
S="--tokens 16384 --seqs 8192 --baseline off --runs 10 --warmup 3 --warmup-ms 300 --check-rows 8 --kernels subgroup --dtypes f32,f16"
run() { # name, timeout, args...
  local n=$1 t=$2; shift 2
  [ $(( $(date +%s) - T0 )) -gt 420 ] && { echo "skip $n $(el)"; return; }
  timeout $t $B/attention $S "$@" --json $R/$n.json > $R/$n.txt 2>&1; show $R/$n.txt "$n $(el)"
}
run plan_odd_small 60 --causal off --dims 20,28,36,44,52,60
run plan_odd_large 90 --causal off --dims 68,76,84,92,100,108,116,124
run before_odd 60 --causal off --dims 68,84,92,108,116 --tiles 128x32x8x32
run plan_even 40 --causal off --dims 72,80,88
run rows256_2 60 --causal off --dims 68,72,84,88 --tiles 256x32x2x128
run rows256_4 30 --causal off --dims 80 --tiles 256x32x4x64
run plan_causal 40 --causal on --dims 20,68
run before_causal 30 --causal on --dims 68 --tiles 128x32x8x32
timeout 170 $B/forward --test-threads=8 > $R/test-forward.txt 2>&1; echo "forward rc=$? $(el)"; grep -E "test result|panicked|FAILED|failed" $R/test-forward.txt | head -6
echo "== done $(el)"
tar czf $OUT/results.tgz -C $R . && rm -r $R
