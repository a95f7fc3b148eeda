# Thirty-first round, call 5: `early` (call5/mkearly.py makes it from c049b58's
# shaders/flash_fwd_coop.wgsl: python3 mkearly.py SRC OUT; in .device/early), the first K/V
# tile's loads issued before the Q block's, against the plan's kernel, at d = 64 and 128 and
# N = 1k, 2k and 8k (the fixed cost a workgroup weighs most at short sequences); two rounds
# alternating.
source .device/gpu/prelude.sh; export WGPU_BACKEND=vulkan
R=$OUT/r; mkdir -p $R; B=.device/bin
T0=$(date +%s); el() { echo "[$(( $(date +%s) - T0 )) s]"; }
show() { echo "$2 $(grep -E "^\| NVIDIA|rror|panic|SKIP|skip" $1 | cut -d"|" -f6,7,9,11,13,19 | tr -s ' ' | paste -sd';')"; }
timeout 60 $B/kernel_stats --kernels coop-matrix --dims 64,128 --dtypes f16 > $R/stats_base.txt 2>&1
WGPU_FLASH_ATTN_SHADER_DIR=.device/early timeout 60 $B/kernel_stats --kernels coop-matrix --dims 64,128 --dtypes f16 > $R/stats_early.txt 2>&1
for v in base early; do echo "== stats $v: $(grep -iE "^==|register|local memory|rror|panic" $R/stats_$v.txt | tr -s ' ' | paste -sd';')"; done
A="--tokens 16384 --dtypes f16 --kernels coop-matrix --baseline off --runs 10 --warmup 3 --warmup-ms 300 --check-rows 8 --causal both --seqs 1024,2048,8192 --dims 64,128"
for r in 1 2; do
  order="base early"; [ $r = 2 ] && order="early base"
  for n in $order; do
    if [ $n = early ]; then export WGPU_FLASH_ATTN_SHADER_DIR=.device/early; fi
    timeout 120 $B/attention $A --json $R/$n-r$r.json > $R/$n-r$r.txt 2>&1
    unset WGPU_FLASH_ATTN_SHADER_DIR
    show $R/$n-r$r.txt "$n-r$r $(el)"
  done
done
echo "== done $(el)"
tar czf $OUT/results.tgz -C $R . && rm -r $R
