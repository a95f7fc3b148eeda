# Session 27, call 1 (tree 9392ce1): the prepared fixed-cost experiments of session 26.
# 1. qburst / qburst2 (session26/experiments/qburst): the tensor-core kernel's Q block loaded
#    with every load issued before any store (qburst2: also subgroup barriers in the write-out).
#    Driver statistics at d = 32-256, then N = 1k and 8k at d = 64 and 128, causal and not, two
#    rounds alternating with the unchanged kernel, then the other head dims at N = 8k.
# 2. qheld (session26/experiments/qheld): the same for held-Q plans of flash_fwd.wgsl, two rounds.
# The variant shaders were made on the build machine with
#   E=bench-results/h200-2026-12-02-session26/experiments
#   patch shaders/flash_fwd_coop.wgsl -o .device/qburst/flash_fwd_coop.wgsl < $E/qburst/qburst.diff
#   patch .device/qburst/flash_fwd_coop.wgsl -o .device/qburst2/flash_fwd_coop.wgsl < $E/qburst/qburst2.diff
#   patch shaders/flash_fwd.wgsl -o .device/qheld/flash_fwd.wgsl < $E/qheld/qheld.diff
source .device/gpu/prelude.sh; export WGPU_BACKEND=vulkan
tar xzf .device/bin.tgz -C .device
R=$OUT/r; mkdir -p $R; B=.device/bin
for v in qburst qburst2 qheld; do cp .device/$v/*.wgsl $R/$v-$(ls .device/$v); done
T0=$(date +%s); el() { echo "[$(( $(date +%s) - T0 )) s]"; }
show() { echo "$2 $(grep -E "^\| NVIDIA|rror|panic|SKIP|skip" $1 | cut -d"|" -f6,7,8,9,10,13 | tr -s ' ' | paste -sd';')"; }
run() { # name, timeout, args... (env from the caller)
  local n=$1 t=$2; shift 2
  [ $(( $(date +%s) - T0 )) -gt 470 ] && { echo "skip $n $(el)"; return; }
  timeout $t $B/attention "$@" --json $R/$n.json > $R/$n.txt 2>&1; show $R/$n.txt "$n $(el)"
}
S="--kernels coop-matrix --dims 32,64,96,128,160,192,256 --dtypes f16"
timeout 90 $B/kernel_stats $S > $R/stats-base.txt 2>&1; echo "stats base rc=$? $(el)"
for v in qburst qburst2; do
  WGPU_FLASH_ATTN_SHADER_DIR=.device/$v timeout 90 $B/kernel_stats $S > $R/stats-$v.txt 2>&1; echo "stats $v rc=$? $(el)"
done
for v in base qburst qburst2; do echo "== $v"; grep -iE "regist|spill|local" $R/stats-$v.txt | head -20; done
A="--tokens 16384 --seqs 1024,8192 --dtypes f16 --kernels coop-matrix --baseline off --runs 10 --warmup 3 --warmup-ms 300 --check-rows 8 --causal both --dims 64,128"
for r in 1 2; do
  order="base qburst qburst2"; [ $r = 2 ] && order="qburst2 qburst base"
  for v in $order; do
    if [ $v = base ]; then run $v-r$r 90 $A; else WGPU_FLASH_ATTN_SHADER_DIR=.device/$v run $v-r$r 90 $A; fi
  done
done
O="--tokens 16384 --seqs 8192 --dtypes f16 --kernels coop-matrix --baseline off --runs 10 --warmup 3 --warmup-ms 300 --check-rows 8 --causal both --dims 32,96,160,192,256"
run base-dims 90 $O
WGPU_FLASH_ATTN_SHADER_DIR=.device/qburst run qburst-dims 90 $O
WGPU_FLASH_ATTN_SHADER_DIR=.device/qburst2 run qburst2-dims 90 $O
H="--tokens 16384 --seqs 1024,8192 --dtypes f32,f16 --causal off --baseline off --runs 10 --warmup 3 --warmup-ms 300 --check-rows 8 --kernels portable,subgroup --tiles 64x32x8x16 --dims 32,64"
for r in 1 2; do
  if [ $r = 1 ]; then run hbase-r1 60 $H; WGPU_FLASH_ATTN_SHADER_DIR=.device/qheld run qheld-r1 60 $H
  else WGPU_FLASH_ATTN_SHADER_DIR=.device/qheld run qheld-r2 60 $H; run hbase-r2 60 $H; fi
done
echo "== done $(el)"
tar czf $OUT/results.tgz -C $R . && rm -r $R
