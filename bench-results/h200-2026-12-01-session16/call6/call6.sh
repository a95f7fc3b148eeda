# Session 16, call 6: call 1's vQ and vR again, mended. Their score accumulators were zeroed by a
# loop (`f < R16 * N16`) that the host does not unroll, so the fragments went to local memory
# (call 5's vQo, the same loop order with Q in registers, ran at 50-59 TFLOP/s everywhere).
# Now zeroed by the unrolled rb/nb loops: Q fragments from q_buf every tile with K/V stored
# directly (vQ2) or through registers (vR2), and Q K^T with the head-dim blocks outermost (vQo2),
# at d = 128, against the final tree's plan; two rounds.
source .device/gpu/prelude.sh; export WGPU_BACKEND=vulkan
tar xzf .device/bin.tgz -C .device
R=$OUT/r; mkdir -p $R; B=.device/bin
T0=$(date +%s); el() { echo "[$(( $(date +%s) - T0 )) s]"; }
declare -A T
T[base]=128x64x32x8
T[vQ2]=128x64x32x8,128x64x32x4,128x32x32x4,256x64x32x8,256x32x32x8
T[vR2]=128x64x32x8,128x32x32x4,256x32x32x8
T[vQo2]=128x64x32x8
A="--tokens 16384 --seqs 8192 --dtypes f16 --baseline off --kernels coop-matrix --runs 20 --warmup 5 --warmup-ms 300 --check-rows 8 --causal both --dims 128"
sd() { if [ $1 = base ]; then unset WGPU_FLASH_ATTN_SHADER_DIR; else export WGPU_FLASH_ATTN_SHADER_DIR=.device/$1; fi; }
for round in 1 2; do echo "== round $round $(el)"
  for v in base vQ2 vR2 vQo2; do sd $v
    timeout 60 $B/attention $A --tiles ${T[$v]} --json $R/${v}_$round.json > $R/${v}_$round.txt 2>&1
    echo "$v $(grep -E "^\| NVIDIA|rror|panic|skip" $R/${v}_$round.txt | cut -d'|' -f9,11,13,19 | tr -s ' ' | paste -sd';')"
  done
done
echo "== done $(el)"
tar czf $OUT/results.tgz -C $R . && rm -r $R
