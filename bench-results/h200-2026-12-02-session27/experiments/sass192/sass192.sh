# Prepared in session 27, not run (the device time was spent). With binaries of 9392ce1 and
# .device/v4 = eb2919f's shaders/flash_fwd_coop.wgsl: the driver's machine code of the
# tensor-core kernel at d = 192 and 128, before (the binary's own kernel) and after (v4, through
# WGPU_FLASH_ATTN_SHADER_DIR), for reading why d = 192 runs 7% slower non-causal (call 4).
# scripts/nv_sass.py disassembles the pipeline caches kernel_stats writes (nvdisasm from Triton).
source .device/gpu/prelude.sh; export WGPU_BACKEND=vulkan
tar xzf .device/bin.tgz -C .device
R=$OUT/r; mkdir -p $R; B=.device/bin
T0=$(date +%s); el() { echo "[$(( $(date +%s) - T0 )) s]"; }
export NVDISASM=$(python3 -c "import triton,os;print(os.path.join(os.path.dirname(triton.__file__),'backends/nvidia/bin/nvdisasm'))")
for v in old v4; do
  if [ $v = old ]; then unset WGPU_FLASH_ATTN_SHADER_DIR; else export WGPU_FLASH_ATTN_SHADER_DIR=.device/v4; fi
  for c in off on; do
    timeout 60 $B/kernel_stats --kernels coop-matrix --dims 128,192 --dtypes f16 $([ $c = on ] && echo --causal) --cache $R/caches_${v}_$c > $R/stats_${v}_$c.txt 2>&1
    echo "== $v causal $c $(el): $(grep -iE "register" $R/stats_${v}_$c.txt | tr -s ' ' | paste -sd';')"
    PATH=$PWD/.device/tools:$PATH LD_LIBRARY_PATH=$PWD/.device/tools timeout 60 python3 scripts/nv_sass.py --sass $R/sass_${v}_$c $R/caches_${v}_$c/* 2>&1 | tail -4
    rm -r $R/caches_${v}_$c
  done
done
echo "== done $(el)"
tar czf $OUT/results.tgz -C $R . && rm -r $R
