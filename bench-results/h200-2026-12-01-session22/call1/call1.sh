# Session 22, call 1: where the subgroup tier's time goes at d = 128, N = 8k (f32 and f16, 128x32x8x32,
# Q streamed). Variants of shaders/flash_fwd.wgsl through WGPU_FLASH_ATTN_SHADER_DIR, each dropping
# one part (outputs wrong, only times count): q1 (the four Q rows a subgroup reads collapse to one
# cache line), halfqk / halfpv (half the head dim in Q K^T / half the keys in P V), noexp (no exp2 on
# the scores), nobar (two of four barriers a tile), nostage (no K/V reads from memory after the
# first tile). Registers and machine code of main; then tiles with fewer registers per thread;
# PyTorch's f32 backends beside.
source .device/gpu/prelude.sh; export WGPU_BACKEND=vulkan
tar xzf .device/bin.tgz -C .device
R=$OUT/r; mkdir -p $R; B=.device/bin
T0=$(date +%s); el() { echo "[$(( $(date +%s) - T0 )) s]"; }
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | tee $R/gpu.txt
nvidia-smi --query-gpu=timestamp,clocks.sm,clocks.mem,power.draw,temperature.gpu --format=csv -lms 250 > $R/clocks.csv 2>&1 &
CLK=$!
VARS="main q1 halfqk halfpv noexp nobar nostage"
use() { [ $1 = main ] && unset WGPU_FLASH_ATTN_SHADER_DIR || export WGPU_FLASH_ATTN_SHADER_DIR=.device/var/$1; }
export NVDISASM=$(python3 -c "import triton,os;print(os.path.join(os.path.dirname(triton.__file__),'backends/nvidia/bin/nvdisasm'))")
for v in main q1; do use $v
  timeout 60 $B/kernel_stats --kernels subgroup --dims 128 --dtypes f32,f16 --tiles 128x32x8x32 --cache $R/caches_$v > $R/stats_$v.txt 2>&1
  echo "== stats $v: $(grep -iE "register|spill" $R/stats_$v.txt | tr -s ' ' | paste -sd';' | cut -c1-300)"
  PATH=$PWD/.device/tools:$PATH LD_LIBRARY_PATH=$PWD/.device/tools python3 .device/tools/nv_sass.py --sass $R/sass_$v $R/caches_$v/* 2>&1 | tail -4
  rm -r $R/caches_$v
done
show() { echo "$2 $(grep -E "^\| NVIDIA|rror|panic|SKIP" $1 | cut -d"|" -f8,11,12,13 | tr -s ' ' | paste -sd';')"; }
S="--tokens 16384 --seqs 8192 --dims 128 --dtypes f32,f16 --baseline off --kernels subgroup --runs 10 --warmup 3 --warmup-ms 300 --check-rows 4 --causal off"
for round in 1 2; do
  for v in $VARS; do use $v
    timeout 90 $B/attention $S --tiles 128x32x8x32 --json $R/${v}_$round.json > $R/${v}_$round.txt 2>&1; show $R/${v}_$round.txt "$v $round $(el)"
  done
done
unset WGPU_FLASH_ATTN_SHADER_DIR
echo "== tiles $(el)"
timeout 150 $B/attention $S --tiles 128x32x8x32,128x32x16x16,64x32x8x32,64x32x16x16,128x16x8x32 --json $R/tiles.json > $R/tiles.txt 2>&1; show $R/tiles.txt tiles
timeout 60 $B/kernel_stats --kernels subgroup --dims 128 --dtypes f32 --tiles 128x32x8x32,128x32x16x16,64x32x8x32,64x32x16x16,128x16x8x32 > $R/stats_tiles.txt 2>&1
echo "$(grep -iE "tiles|register" $R/stats_tiles.txt | tr -s ' ' | paste -sd';' | cut -c1-600)"
echo "== torch $(el)"; timeout 120 python3 .device/py/torch_sdpa.py --seqs 8192 --dims 128 --dtypes f32 --causal off --backends efficient,math --json $R/torch_f32.json > $R/torch_f32.txt 2>&1; tail -3 $R/torch_f32.txt
kill $CLK
echo "== done $(el)"
tar czf $OUT/results.tgz -C $R . && rm -r $R
