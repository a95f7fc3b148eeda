# Thirty-first round, call 7: do two workgroups of call 2's `hyb` (4 subgroups, 45.6 KB of
# workgroup memory, 255 registers) run on one SM at once? d = 128, N = 8k, one sequence, 1, 2 and
# 4 heads: 64, 128 and 256 workgroups on the H200's 132 SMs. Where a second workgroup shares an
# SM, 256 workgroups take well under twice the time of 128; where it waits, about twice. The
# plan's kernel (one workgroup of 8 subgroups fills an SM) for comparison. Non-causal.
source .device/gpu/prelude.sh; export WGPU_BACKEND=vulkan
R=$OUT/r; mkdir -p $R; B=.device/bin
for v in base hyb; do
  if [ $v = base ]; then unset WGPU_FLASH_ATTN_SHADER_DIR; T=128x64x32x8; else export WGPU_FLASH_ATTN_SHADER_DIR=.device/$v; T=128x32x32x4; fi
  for h in 1 2 4; do
    timeout 40 $B/attention --tokens 8192 --seqs 8192 --heads $h --dims 128 --dtypes f16 --kernels coop-matrix --baseline off --runs 10 --warmup 3 --warmup-ms 300 --check-rows 4 --causal off --tiles $T > $R/$v-h$h.txt 2>&1
    echo "$v heads=$h: $(grep -E "^\| NVIDIA|rror|panic" $R/$v-h$h.txt | cut -d"|" -f6,7,11,12,13,19 | tr -s ' ')"
  done
done
tar czf $OUT/results.tgz -C $R . && rm -r $R
