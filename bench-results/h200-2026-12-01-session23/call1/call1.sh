# Session 23, call 1: the subgroup tier with P kept in registers and taken by subgroup shuffles
# in P V (variant .device/var/pshuf, experiments/pshuf.diff; the build counts no probability tile
# where FLASH_EXP_NO_PTILE is set), at the plan's tile and with 64-key tiles, against the committed
# kernel; the portable tier against the subgroup tier; tiles at d = 256 (the plan falls back to
# 16x16x16x8 there); registers; PyTorch's f32 backends beside.
source .device/gpu/prelude.sh; export WGPU_BACKEND=vulkan
tar xzf .device/bin.tgz -C .device
R=$OUT/r; mkdir -p $R; B=.device/bin
T0=$(date +%s); el() { echo "[$(( $(date +%s) - T0 )) s]"; }
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | tee $R/gpu.txt
nvidia-smi --query-gpu=timestamp,clocks.sm,clocks.mem,power.draw,temperature.gpu --format=csv -lms 250 > $R/clocks.csv 2>&1 &
CLK=$!
PS="env FLASH_EXP_NO_PTILE=1 WGPU_FLASH_ATTN_SHADER_DIR=.device/var/pshuf"
timeout 60 $B/kernel_stats --kernels subgroup --dims 128 --dtypes f32,f16 > $R/stats.txt 2>&1
timeout 90 $PS $B/kernel_stats --kernels subgroup --dims 128 --dtypes f32,f16 --tiles 128x32x8x32,128x64x8x32,64x64x8x16 > $R/stats_pshuf.txt 2>&1
timeout 90 $B/kernel_stats --kernels subgroup --dims 256 --dtypes f32 --tiles 64x32x8x32,64x32x16x16,64x16x8x16,128x16x8x32,32x32x8x16 > $R/stats_d256.txt 2>&1
for f in stats stats_pshuf stats_d256; do echo "== $f: $(grep -iE "^==|register|spill" $R/$f.txt | tr -s ' ' | paste -sd';' | cut -c1-1500)"; done
show() { echo "$2 $(grep -E "^\| NVIDIA|rror|panic|SKIP|skip" $1 | cut -d"|" -f7,8,9,10,11,12,13,19 | tr -s ' ' | paste -sd';')"; }
S="--tokens 16384 --seqs 8192 --baseline off --runs 10 --warmup 3 --warmup-ms 300 --check-rows 8 --causal off"
for round in 1 2; do
  timeout 90 $B/attention $S --kernels subgroup --dtypes f32,f16 --dims 128 --json $R/plan_$round.json > $R/plan_$round.txt 2>&1; show $R/plan_$round.txt "plan $round $(el)"
  timeout 150 $PS $B/attention $S --kernels subgroup --dtypes f32,f16 --dims 128 --tiles 128x32x8x32,128x64x8x32,64x64x8x16 --json $R/pshuf_$round.json > $R/pshuf_$round.txt 2>&1; show $R/pshuf_$round.txt "pshuf $round $(el)"
  timeout 90 $B/attention $S --kernels portable --dtypes f32,f16 --dims 128 --json $R/portable_$round.json > $R/portable_$round.txt 2>&1; show $R/portable_$round.txt "portable $round $(el)"
done
timeout 90 $PS $B/attention $S --kernels subgroup --dtypes f32,f16 --dims 128 --causal on --tiles 128x32x8x32,128x64x8x32 --json $R/pshuf_causal.json > $R/pshuf_causal.txt 2>&1; show $R/pshuf_causal.txt "pshuf causal $(el)"
timeout 90 $B/attention $S --kernels subgroup --dtypes f32,f16 --dims 128 --causal on --json $R/plan_causal.json > $R/plan_causal.txt 2>&1; show $R/plan_causal.txt "plan causal $(el)"
timeout 200 $B/attention $S --kernels subgroup --dtypes f32,f16 --dims 256 --tiles 16x16x16x8,64x32x8x32,64x32x16x16,64x16x8x16,128x16x8x32,32x32x8x16 --json $R/d256.json > $R/d256.txt 2>&1; show $R/d256.txt "d256 $(el)"
timeout 120 $B/attention $S --kernels subgroup --dtypes f32,f16 --dims 192 --tiles 128x32x8x32,64x32x8x32 --json $R/d192.json > $R/d192.txt 2>&1; show $R/d192.txt "d192 $(el)"
echo "== torch $(el)"; timeout 120 python3 .device/py/torch_sdpa.py --seqs 8192 --dims 128 --dtypes f32 --causal off --backends efficient,math --json $R/torch_f32.json > $R/torch_f32.txt 2>&1; tail -3 $R/torch_f32.txt
kill $CLK
echo "== done $(el)"
tar czf $OUT/results.tgz -C $R . && rm -r $R
