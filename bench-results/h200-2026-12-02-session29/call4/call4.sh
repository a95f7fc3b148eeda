# Session 29, call 4 (binaries of 622af07; call 1's `pipe` through WGPU_FLASH_ATTN_SHADER_DIR):
# the machine code at d = 128, non-causal, of the plan's tiles (128x64x32x8), of 128x32x32x8 and
# of pipe at 128x32x32x8 (kernel_stats --cache, scripts/nv_sass.py): whether the driver's
# compiler interleaves the next tile's products with this tile's softmax.
source .device/gpu/prelude.sh; export WGPU_BACKEND=vulkan
R=$OUT; B=.device/bin
export NVDISASM=$(python3 -c "import triton,os;print(os.path.join(os.path.dirname(triton.__file__),'backends/nvidia/bin/nvdisasm'))")
for v in plan:none: t32:none:128x32x32x8 pipe:pipe:128x32x32x8; do
  IFS=: read n d t <<< "$v"
  if [ $d = none ]; then unset WGPU_FLASH_ATTN_SHADER_DIR; else export WGPU_FLASH_ATTN_SHADER_DIR=.device/$d; fi
  timeout 60 $B/kernel_stats --kernels coop-matrix --dims 128 --dtypes f16 ${t:+--tiles $t} --cache $R/caches_$n > $R/stats_$n.txt 2>&1
  echo "== $n: $(grep -iE "register" $R/stats_$n.txt | tr -s ' ' | paste -sd';')"
  PATH=$PWD/.device/tools:$PATH LD_LIBRARY_PATH=$PWD/.device/tools timeout 60 python3 scripts/nv_sass.py --sass $R/sass_$n $R/caches_$n/* 2>&1 | tail -4
  rm -r $R/caches_$n
done
