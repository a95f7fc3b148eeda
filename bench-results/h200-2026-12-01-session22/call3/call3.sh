# Session 22, call 3: what makes the subgroup tier's Q K^T cost 1.7x its P V (call 1) at d = 128,
# N = 8k, 128x32x8x32, Q streamed. Variants (outputs wrong, only times count): qlds (Q's reads come
# from workgroup memory, a K row of the tile, instead of device memory), qonce (Q's reads cycle over
# two vec4 columns, so they always hit the cache), knone (no K reads: the operand is Q's, swizzled).
# Two rounds against main; f32 and f16.
source .device/gpu/prelude.sh; export WGPU_BACKEND=vulkan
tar xzf .device/bin.tgz -C .device
R=$OUT/r; mkdir -p $R; B=.device/bin
T0=$(date +%s); el() { echo "[$(( $(date +%s) - T0 )) s]"; }
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | tee $R/gpu.txt
VARS="main qlds qonce knone"
use() { [ $1 = main ] && unset WGPU_FLASH_ATTN_SHADER_DIR || export WGPU_FLASH_ATTN_SHADER_DIR=.device/var/$1; }
for v in qlds qonce knone; do use $v
  timeout 60 $B/kernel_stats --kernels subgroup --dims 128 --dtypes f32,f16 --tiles 128x32x8x32 > $R/stats_$v.txt 2>&1
  echo "== stats $v: $(grep -iE "register|spill" $R/stats_$v.txt | tr -s ' ' | paste -sd';' | cut -c1-300)"
done
show() { echo "$2 $(grep -E "^\| NVIDIA|panic|SKIP" $1 | cut -d"|" -f8,11,12,13 | tr -s ' ' | paste -sd';')"; }
S="--tokens 16384 --seqs 8192 --dtypes f32,f16 --baseline off --kernels subgroup --runs 10 --warmup 3 --warmup-ms 300 --check-rows 2 --causal off"
for round in 1 2; do
  for v in $VARS; do use $v
    timeout 90 $B/attention $S --dims 128 --tiles 128x32x8x32 --json $R/${v}_$round.json > $R/${v}_$round.txt 2>&1; show $R/${v}_$round.txt "$v $round $(el)"
  done
done
unset WGPU_FLASH_ATTN_SHADER_DIR
echo "== done $(el)"
tar czf $OUT/results.tgz -C $R . && rm -r $R
