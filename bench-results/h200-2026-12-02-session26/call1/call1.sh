# Session 26, call 1 (tree 7680ac7, the twenty-fifth round's final tree, not yet run on the H200):
# 1. the qshared experiment (session25/experiments/qshared: Q in workgroup memory in the
#    tensor-core kernel, 32 rows a subgroup): driver statistics, then timed beside the unchanged
#    kernel at d = 128, non-causal and causal, scores in registers;
# 2. the subgroup tier's plan at d = 68-88 (the 256-row tile), non-causal and causal;
# 3. the forward, variants and tiers suites on every tier.
# .device/qshared/flash_fwd_coop.wgsl was made on the build machine with
#   patch shaders/flash_fwd_coop.wgsl -o .device/qshared/flash_fwd_coop.wgsl \
#     < bench-results/h200-2026-12-01-session25/experiments/qshared/qshared.diff
# and .device/qshared1/ from it with every TWO_KV after the HEADER block turned into false (one
# K/V tile whatever the plan says, so that 64x32x32x2 fits 48 KiB: 22848 + 17408 bytes):
#   awk 'BEGIN{h=0} /HEADER END/{h=1; print; next} { if(h) gsub(/TWO_KV/,"false"); print }' \
#     .device/qshared/flash_fwd_coop.wgsl > .device/qshared1/flash_fwd_coop.wgsl
source .device/gpu/prelude.sh; export WGPU_BACKEND=vulkan
tar xzf .device/bin.tgz -C .device
R=$OUT/r; mkdir -p $R; B=.device/bin; QD=.device/qshared; Q1=.device/qshared1
cp $QD/flash_fwd_coop.wgsl $R/qshared-flash_fwd_coop.wgsl; cp $Q1/flash_fwd_coop.wgsl $R/qshared1-flash_fwd_coop.wgsl
T0=$(date +%s); el() { echo "[$(( $(date +%s) - T0 )) s]"; }
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | tee $R/gpu.txt
show() { echo "$2 $(grep -E "^\| NVIDIA|rror|panic|SKIP|skip" $1 | cut -d"|" -f7,8,9,11,13,19 | tr -s ' ' | sed 's/(Q streamed; Q K^T, P V unrolled)/s/; s/(Q streamed; Q K^T unrolled)/sq/' | paste -sd';')"; }
run() { # name, timeout, args... (env from the caller)
  local n=$1 t=$2; shift 2
  [ $(( $(date +%s) - T0 )) -gt 230 ] && { echo "skip $n $(el)"; return; }
  timeout $t $B/attention "$@" --json $R/$n.json > $R/$n.txt 2>&1; show $R/$n.txt "$n $(el)"
}
timeout 60 $B/kernel_stats --kernels coop-matrix --dims 128 --dtypes f16 --tiles 128x64x32x8,64x32x32x2,64x16x32x2,32x32x32x1,32x64x32x1 > $R/stats-base.txt 2>&1; echo "stats base rc=$? $(el)"
WGPU_FLASH_ATTN_SHADER_DIR=$QD timeout 60 $B/kernel_stats --kernels coop-matrix --dims 128 --dtypes f16 --tiles 64x16x32x2,32x32x32x1,32x64x32x1 > $R/stats-qshared.txt 2>&1; echo "stats qshared rc=$? $(el)"
WGPU_FLASH_ATTN_SHADER_DIR=$Q1 timeout 60 $B/kernel_stats --kernels coop-matrix --dims 128 --dtypes f16 --tiles 64x32x32x2,64x16x32x2 > $R/stats-qshared1.txt 2>&1; echo "stats qshared1 rc=$? $(el)"
grep -iE "tiles|regist|local|spill" $R/stats-*.txt | head -40
A="--tokens 16384 --seqs 8192 --dims 128 --dtypes f16 --kernels coop-matrix --baseline off --runs 10 --warmup 3 --warmup-ms 300 --check-rows 8"
for c in off on; do
  run base-c$c 45 $A --causal $c --tiles 128x64x32x8,64x16x32x2,32x32x32x1,32x64x32x1
  WGPU_FLASH_ATTN_SHADER_DIR=$QD run qshared-c$c 45 $A --causal $c --tiles 64x16x32x2,32x32x32x1,32x64x32x1
  WGPU_FLASH_ATTN_SHADER_DIR=$Q1 run qshared1-c$c 30 $A --causal $c --tiles 64x32x32x2,64x16x32x2
done
S="--tokens 16384 --seqs 8192 --baseline off --runs 10 --warmup 3 --warmup-ms 300 --check-rows 8 --kernels subgroup --dtypes f32,f16"
run plan68_88-coff 60 $S --causal off --dims 68,72,76,80,84,88
run plan68_88-con 60 $S --causal on --dims 68,72,76,80,84,88
echo "== tests $(el)"
# All three at once (the GPU shared): correctness only, no timings.
for t in tiers forward variants; do
  (timeout 330 $B/$t --test-threads=8 > $R/test-$t.txt 2>&1; echo "$t rc=$? $(el)" > $R/$t-rc.txt) &
done
wait
for t in forward variants tiers; do cat $R/$t-rc.txt; grep -E "test result|panicked|FAILED|failed" $R/test-$t.txt | head -6; done
echo "== done $(el)"
tar czf $OUT/results.tgz -C $R . && rm -r $R
