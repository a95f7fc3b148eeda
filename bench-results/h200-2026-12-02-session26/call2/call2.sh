# Session 26, call 2 (call 1's binaries, tree 7680ac7):
# 1. kvsplit: the tensor-core kernel with one K/V tile staged in two halves, K of the next tile
#    after this tile's Q K^T and V after its P V (each behind its own barrier), instead of both
#    between two back-to-back barriers at the top of the tile. Same barrier count, same
#    registers held; timed beside the unchanged kernel (plan tiles), d = 64-192, two rounds at
#    d = 128; driver statistics; then the forward suite on the tensor-core tier with it.
# 2. The subgroup tier's plan at d = 84 and 88, which call 1's step timeout cut.
# The variant is session26/experiments/kvsplit/kvsplit.diff applied to shaders/flash_fwd_coop.wgsl
# (carried as .device/kvsplit/flash_fwd_coop.wgsl).
source .device/gpu/prelude.sh; export WGPU_BACKEND=vulkan
tar xzf .device/bin.tgz -C .device
R=$OUT/r; mkdir -p $R; B=.device/bin; KS=.device/kvsplit
cp $KS/flash_fwd_coop.wgsl $R/kvsplit-flash_fwd_coop.wgsl
T0=$(date +%s); el() { echo "[$(( $(date +%s) - T0 )) s]"; }
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | tee $R/gpu.txt
show() { echo "$2 $(grep -E "^\| NVIDIA|rror|panic|SKIP|skip" $1 | cut -d"|" -f7,8,9,11,13,19 | tr -s ' ' | sed 's/(Q streamed; Q K^T, P V unrolled)/s/; s/(Q streamed; Q K^T unrolled)/sq/' | paste -sd';')"; }
run() { # name, timeout, args... (env from the caller)
  local n=$1 t=$2; shift 2
  [ $(( $(date +%s) - T0 )) -gt 300 ] && { echo "skip $n $(el)"; return; }
  timeout $t $B/attention "$@" --json $R/$n.json > $R/$n.txt 2>&1; show $R/$n.txt "$n $(el)"
}
timeout 60 $B/kernel_stats --kernels coop-matrix --dims 64,128,192 --dtypes f16 > $R/stats-base.txt 2>&1; echo "stats base rc=$? $(el)"
WGPU_FLASH_ATTN_SHADER_DIR=$KS timeout 60 $B/kernel_stats --kernels coop-matrix --dims 64,128,192 --dtypes f16 > $R/stats-kvsplit.txt 2>&1; echo "stats kvsplit rc=$? $(el)"
grep -E "Register Count|Local Memory" $R/stats-*.txt | head -24
A="--tokens 16384 --seqs 8192 --dtypes f16 --kernels coop-matrix --baseline off --runs 10 --warmup 3 --warmup-ms 300 --check-rows 8"
for c in off on; do
  run base-c$c 50 $A --causal $c --dims 64,96,128,160,192
  WGPU_FLASH_ATTN_SHADER_DIR=$KS run kvsplit-c$c 50 $A --causal $c --dims 64,96,128,160,192
done
for c in off on; do
  run base2-c$c 20 $A --causal $c --dims 128
  WGPU_FLASH_ATTN_SHADER_DIR=$KS run kvsplit2-c$c 20 $A --causal $c --dims 128
done
S="--tokens 16384 --seqs 8192 --baseline off --runs 10 --warmup 3 --warmup-ms 300 --check-rows 8 --kernels subgroup --dtypes f32,f16"
run plan84_88-coff 60 $S --causal off --dims 84,88
run plan84_88-con 60 $S --causal on --dims 84,88
echo "== tests $(el)"
WGPU_FLASH_ATTN_SHADER_DIR=$KS FLASH_TEST_KERNELS=coop-matrix timeout 200 $B/forward --test-threads=8 > $R/test-forward-kvsplit.txt 2>&1; echo "forward (kvsplit, coop-matrix) rc=$? $(el)"; grep -E "test result|panicked|FAILED|failed" $R/test-forward-kvsplit.txt | head -6
echo "== done $(el)"
tar czf $OUT/results.tgz -C $R . && rm -r $R
