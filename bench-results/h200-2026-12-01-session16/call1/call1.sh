# Session 16, call 1: the committed tree (1eb9f1f) with shader copies through
# WGPU_FLASH_ATTN_SHADER_DIR, at d = 128 (and 64): 32 query rows per subgroup without the K/V
# registers (vD: each tile loaded and stored between its two barriers), with Q's fragments read
# from q_buf every tile (vQ: vD plus that; vR: that with the K/V registers kept), and the old
# staging behind a wrapper (vW) at the plan's tiles; base beside each; PyTorch after them.
source .device/gpu/prelude.sh; export WGPU_BACKEND=vulkan
tar xzf .device/bin.tgz -C .device
R=$OUT/r; mkdir -p $R; B=.device/bin
T0=$(date +%s); el() { echo "[$(( $(date +%s) - T0 )) s]"; }
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | tee $R/gpu.txt
nvidia-smi --query-gpu=timestamp,clocks.sm,clocks.mem,power.draw,temperature.gpu --format=csv -lms 250 > $R/clocks.csv 2>&1 &
CLK=$!
declare -A T
T[base]=128x64x32x8,128x32x32x4
T[vW]=128x64x32x8
T[vD]=128x64x32x8,128x32x32x4,128x64x32x4,64x32x32x2,256x32x32x8
T[vQ]=128x64x32x8,128x32x32x4,128x64x32x4,64x64x32x2,256x64x32x8,256x32x32x8
T[vR]=128x32x32x4,256x32x32x8,64x32x32x2
T64=128x128x32x8,128x64x32x4,256x64x32x8,128x128x32x4
run() { # variant dims tiles out
  if [ $1 = base ]; then unset WGPU_FLASH_ATTN_SHADER_DIR; else export WGPU_FLASH_ATTN_SHADER_DIR=.device/$1; fi
  timeout 120 $B/attention $A --dims $2 --tiles $3 --json $R/$4.json > $R/$4.txt 2>&1
  grep -E "^\| NVIDIA|rror|panic|skip" $R/$4.txt | cut -d'|' -f7,9,11,13,19 | tr -s ' ' | sed "s/^/$1 /"
}
echo "== stats $(el)"
for v in base vW vD vQ vR; do
  if [ $v = base ]; then unset WGPU_FLASH_ATTN_SHADER_DIR; else export WGPU_FLASH_ATTN_SHADER_DIR=.device/$v; fi
  timeout 90 $B/kernel_stats --kernels coop-matrix --dims 128 --dtypes f16 --tiles ${T[$v]} > $R/stats128_$v.txt 2>&1
  echo "$v $(grep -E "Register|[Ss]pill|rror" $R/stats128_$v.txt | tr -s ' ' | paste -sd';')"
done
for v in base vQ vD; do
  if [ $v = base ]; then unset WGPU_FLASH_ATTN_SHADER_DIR; else export WGPU_FLASH_ATTN_SHADER_DIR=.device/$v; fi
  timeout 90 $B/kernel_stats --kernels coop-matrix --dims 64 --dtypes f16 --tiles $T64 > $R/stats64_$v.txt 2>&1
  echo "$v d64 $(grep -E "Register|[Ss]pill|rror" $R/stats64_$v.txt | tr -s ' ' | paste -sd';')"
done
A="--tokens 16384 --seqs 8192 --dtypes f16 --baseline off --kernels coop-matrix --runs 20 --warmup 5 --warmup-ms 300 --check-rows 8 --causal both"
for round in 1 2; do echo "== round $round $(el)"
  for v in base vW vD vQ vR; do run $v 128 ${T[$v]} d128_${v}_$round; done
done
echo "== d64 $(el)"
for v in base vQ vD; do run $v 64 $T64 d64_$v; done
unset WGPU_FLASH_ATTN_SHADER_DIR
echo "== torch $(el)"; timeout 90 python3 .device/py/torch_sdpa.py --seqs 8192 --dims 128,64 --dtypes f16 --causal both --backends flash,cudnn --json $R/torch_sdpa.json > $R/torch_sdpa.txt 2>&1; tail -6 $R/torch_sdpa.txt
kill $CLK
echo "== done $(el)"
tar czf $OUT/results.tgz -C $R . && rm -r $R
