# Session 22, call 5: with the Q K^T loop unrolled (cfull, as in call 4), the P V loop unrolled
# too (pvfull: its bound is PV_STEPS, which this build's host unrolls); registers and machine
# code; d = 128 (128x32x8x32, Q streamed) and d = 64 (the plan's tile), f32 and f16, N = 8k,
# non-causal, two rounds; then cfull on other tiles at d = 128, and causal. Outputs checked.
source .device/gpu/prelude.sh; export WGPU_BACKEND=vulkan
tar xzf .device/bin.tgz -C .device
R=$OUT/r; mkdir -p $R; B=.device/bin
T0=$(date +%s); el() { echo "[$(( $(date +%s) - T0 )) s]"; }
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | tee $R/gpu.txt
nvidia-smi --query-gpu=timestamp,clocks.sm,clocks.mem,power.draw,temperature.gpu --format=csv -lms 250 > $R/clocks.csv 2>&1 &
CLK=$!
VARS="cfull pvfull"
use() { [ $1 = main ] && unset WGPU_FLASH_ATTN_SHADER_DIR || export WGPU_FLASH_ATTN_SHADER_DIR=.device/var/$1; }
export NVDISASM=$(python3 -c "import triton,os;print(os.path.join(os.path.dirname(triton.__file__),'backends/nvidia/bin/nvdisasm'))")
for v in pvfull; do use $v
  timeout 60 $B/kernel_stats --kernels subgroup --dims 128 --dtypes f32,f16 --tiles 128x32x8x32 --cache $R/caches_$v > $R/stats_$v.txt 2>&1
  echo "== stats $v: $(grep -iE "register|spill" $R/stats_$v.txt | tr -s ' ' | paste -sd';' | cut -c1-300)"
  PATH=$PWD/.device/tools:$PATH LD_LIBRARY_PATH=$PWD/.device/tools python3 .device/tools/nv_sass.py --sass $R/sass_$v $R/caches_$v/* 2>&1 | tail -4
  rm -r $R/caches_$v
done
show() { echo "$2 $(grep -E "^\| NVIDIA|rror|panic|SKIP" $1 | cut -d"|" -f8,9,11,12,13 | tr -s ' ' | paste -sd';')"; }
S="--tokens 16384 --seqs 8192 --dtypes f32,f16 --baseline off --kernels subgroup --runs 10 --warmup 3 --warmup-ms 300 --check-rows 8"
for round in 1 2; do
  for v in $VARS; do use $v
    timeout 90 $B/attention $S --causal off --dims 128 --tiles 128x32x8x32 --json $R/${v}_128_$round.json > $R/${v}_128_$round.txt 2>&1; show $R/${v}_128_$round.txt "$v 128 $round $(el)"
    timeout 90 $B/attention $S --causal off --dims 64 --json $R/${v}_64_$round.json > $R/${v}_64_$round.txt 2>&1; show $R/${v}_64_$round.txt "$v 64 $round $(el)"
  done
done
use cfull
timeout 200 $B/attention $S --causal off --dims 128 --tiles 128x32x16x16,64x32x8x16,64x32x8x32,128x16x8x32 --json $R/cfull_tiles.json > $R/cfull_tiles.txt 2>&1; show $R/cfull_tiles.txt "tiles $(el)"
timeout 90 $B/attention $S --causal on --dims 128 --json $R/cfull_causal.json > $R/cfull_causal.txt 2>&1; show $R/cfull_causal.txt "causal $(el)"
unset WGPU_FLASH_ATTN_SHADER_DIR
kill $CLK
echo "== done $(el)"
tar czf $OUT/results.tgz -C $R . && rm -r $R
