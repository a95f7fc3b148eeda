# Thirty-first round, call 6: the machine code (kernel_stats --cache, scripts/nv_sass.py) of the
# plan's kernel at d = 128 (128x64x32x8, and 128x32x32x4, where it spills) and of call 2's `hyb`
# (128x32x32x4; in .device/hyb, made by call2/mkhyb.py ... inloop), non-causal: what the 32-row
# form without spills spends its issue slots on.
source .device/gpu/prelude.sh; export WGPU_BACKEND=vulkan
R=$OUT/r; mkdir -p $R; B=.device/bin
T0=$(date +%s); el() { echo "[$(( $(date +%s) - T0 )) s]"; }
export NVDISASM=$(python3 -c "import triton,os;print(os.path.join(os.path.dirname(triton.__file__),'backends/nvidia/bin/nvdisasm'))")
for v in base hyb; do
  if [ $v = base ]; then unset WGPU_FLASH_ATTN_SHADER_DIR; T=128x64x32x8,128x32x32x4; else export WGPU_FLASH_ATTN_SHADER_DIR=.device/$v; T=128x32x32x4; fi
  timeout 60 $B/kernel_stats --kernels coop-matrix --dims 128 --dtypes f16 --tiles $T --cache $R/caches_$v > $R/stats_$v.txt 2>&1
  echo "== $v $(el): $(grep -iE "register" $R/stats_$v.txt | tr -s ' ' | paste -sd';')"
  PATH=$PWD/.device/tools:$PATH LD_LIBRARY_PATH=$PWD/.device/tools timeout 60 python3 scripts/nv_sass.py --sass $R/sass_$v $R/caches_$v/* 2>&1 | tail -4
  rm -r $R/caches_$v
done
unset WGPU_FLASH_ATTN_SHADER_DIR
echo "== done $(el)"
tar czf $OUT/results.tgz -C $R . && rm -r $R
