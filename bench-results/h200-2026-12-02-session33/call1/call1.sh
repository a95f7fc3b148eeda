# Thirty-third round, call 1: the thirty-second round's prepared call
# (session32/experiments/next.sh, whose header says how its binaries were built), and the
# machine code of the tensor-core kernel at d = 256 for f16, f32 and bf16 (the last two with f16
# products): where bf16's spills are (kernel_stats --cache, scripts/nv_sass.py).
source .device/gpu/prelude.sh; export WGPU_BACKEND=vulkan
R=$OUT/r; mkdir -p $R; B=.device/bin
T0=$(date +%s); el() { echo "[$(( $(date +%s) - T0 )) s]"; }
OUT=$R bash bench-results/h200-2026-12-02-session32/experiments/next.sh 2>&1 | tail -40; mv $R/results.tgz $R/next.tgz
export NVDISASM=$(python3 -c "import triton,os;print(os.path.join(os.path.dirname(triton.__file__),'backends/nvidia/bin/nvdisasm'))")
for t in f16 f32 bf16; do
  timeout 60 $B/kernel_stats --kernels coop-matrix --dims 256 --dtypes $t --f16-products --cache $R/caches_$t > $R/stats_$t.txt 2>&1
  echo "== $t $(el): $(grep -iE "register|local" $R/stats_$t.txt | tr -s ' ' | paste -sd';')"
  PATH=$PWD/.device/tools:$PATH LD_LIBRARY_PATH=$PWD/.device/tools timeout 60 python3 scripts/nv_sass.py --sass $R/sass_$t $R/caches_$t/* 2>&1 | tail -4
  rm -r $R/caches_$t
done
echo "== done $(el)"
tar czf $OUT/results.tgz -C $R . && rm -r $R
