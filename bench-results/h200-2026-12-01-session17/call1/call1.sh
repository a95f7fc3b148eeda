# Session 17, call 1: the 10x-baseline goal (tensor cores against the materialized baseline,
# N = 8k) and N = 128k; the subgroup tier's K/V read straight from the storage buffers instead
# of through workgroup memory (variants dv, dvw, dkv of shaders/flash_fwd.wgsl through
# WGPU_FLASH_ATTN_SHADER_DIR), two rounds against the built-in shader; PyTorch f32 beside.
source .device/gpu/prelude.sh; export WGPU_BACKEND=vulkan
tar xzf .device/bin.tgz -C .device
R=$OUT/r; mkdir -p $R; B=.device/bin
T0=$(date +%s); el() { echo "[$(( $(date +%s) - T0 )) s]"; }
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | tee $R/gpu.txt
nvidia-smi --query-gpu=timestamp,clocks.sm,clocks.mem,power.draw,temperature.gpu --format=csv -lms 250 > $R/clocks.csv 2>&1 &
CLK=$!
show() { echo "$2 $(grep -E "^\| NVIDIA|rror|panic|skip" $1 | cut -d'|' -f5,7,9,11,13,19 | tr -s ' ' | paste -sd';')"; }
echo "== baseline $(el)"
timeout 120 $B/attention --tokens 16384 --seqs 8192 --dims 128 --dtypes f16 --baseline on --kernels coop-matrix --causal off --runs 10 --warmup 3 --warmup-ms 300 --check-rows 8 --json $R/baseline.json > $R/baseline.txt 2>&1; show $R/baseline.txt base
timeout 120 $B/attention --tokens 131072 --seqs 131072 --dims 128 --dtypes f16 --baseline on --kernels coop-matrix --causal off --runs 3 --warmup 1 --check-rows 4 --json $R/long.json > $R/long.txt 2>&1; show $R/long.txt long; grep -iE "allocate|baseline" $R/long.txt | head -3
S="--tokens 16384 --seqs 8192 --dtypes f32,f16 --baseline off --kernels subgroup --runs 10 --warmup 3 --warmup-ms 300 --check-rows 8 --causal off"
for v in base dv dvw dkv; do
  if [ $v = base ]; then unset WGPU_FLASH_ATTN_SHADER_DIR; else export WGPU_FLASH_ATTN_SHADER_DIR=.device/var/$v; fi
  timeout 60 $B/kernel_stats --kernels subgroup --dims 128,64 --dtypes f32,f16 --tiles 128x32x8x32,64x32x8x16 > $R/stats_$v.txt 2>&1
  echo "stats $v: $(grep -iE "register|spill" $R/stats_$v.txt | tr -s ' ' | paste -sd';' | cut -c1-400)"
done
for round in 1 2; do
for v in base dv dvw dkv; do echo "== $v round $round $(el)"
  if [ $v = base ]; then unset WGPU_FLASH_ATTN_SHADER_DIR; else export WGPU_FLASH_ATTN_SHADER_DIR=.device/var/$v; fi
  timeout 90 $B/attention $S --dims 128 --tiles 128x32x8x32,64x32x8x16,128x64x8x32 --json $R/${v}_128_$round.json > $R/${v}_128_$round.txt 2>&1; show $R/${v}_128_$round.txt $v
  timeout 60 $B/attention $S --dims 64 --json $R/${v}_64_$round.json > $R/${v}_64_$round.txt 2>&1; show $R/${v}_64_$round.txt $v
done; done
unset WGPU_FLASH_ATTN_SHADER_DIR
echo "== torch $(el)"; timeout 120 python3 .device/py/torch_sdpa.py --seqs 8192 --dims 128,64 --dtypes f32 --causal off --backends efficient,math --json $R/torch_f32.json > $R/torch_f32.txt 2>&1; tail -5 $R/torch_f32.txt
echo "== tests with dkv $(el)"
WGPU_FLASH_ATTN_SHADER_DIR=.device/var/dkv timeout 120 $B/tiers --test-threads=16 > $R/test-tiers-dkv.txt 2>&1; echo "rc=$?"; grep -E "test result|panicked|FAILED|failed" $R/test-tiers-dkv.txt | head -8
kill $CLK
echo "== done $(el)"
tar czf $OUT/results.tgz -C $R . && rm -r $R
