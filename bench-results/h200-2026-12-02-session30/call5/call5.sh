# Thirtieth round, call 5: `qg` (qg.diff against 622af07's shaders/flash_fwd_coop.wgsl, in
# .device/qg): the Q fragments read from q_buf (L1) in each key tile instead of held in registers
# for the whole pass (64 registers a lane at d = 256, 32 at d = 128), the scale's sign applied to
# the scores; with the plan's tiles, against the plan's kernel, d = 128-256; two rounds
# alternating. Binaries of 622af07's kernel.
source .device/gpu/prelude.sh; export WGPU_BACKEND=vulkan
R=$OUT/r; mkdir -p $R; B=.device/bin
T0=$(date +%s); el() { echo "[$(( $(date +%s) - T0 )) s]"; }
show() { echo "$2 $(grep -E "^\| NVIDIA|rror|panic|SKIP|skip" $1 | cut -d"|" -f6,7,9,11,13,19 | tr -s ' ' | paste -sd';')"; }
for v in base qg; do
  [ $v = qg ] && export WGPU_FLASH_ATTN_SHADER_DIR=.device/qg
  timeout 60 $B/kernel_stats --kernels coop-matrix --dims 128,160,192,256 --dtypes f16 > $R/stats_$v.txt 2>&1
  echo "== stats $v: $(grep -iE "^==|register|rror|panic" $R/stats_$v.txt | tr -s ' ' | paste -sd';')"
  unset WGPU_FLASH_ATTN_SHADER_DIR
done
A="--tokens 16384 --dtypes f16 --kernels coop-matrix --baseline off --runs 10 --warmup 3 --warmup-ms 300 --check-rows 8 --causal both --seqs 8192 --dims 128,160,192,256"
for r in 1 2; do
  order="base qg"; [ $r = 2 ] && order="qg base"
  for n in $order; do
    if [ $n = qg ]; then
      WGPU_FLASH_ATTN_SHADER_DIR=.device/qg timeout 120 $B/attention $A --json $R/$n-r$r.json > $R/$n-r$r.txt 2>&1
    else
      timeout 120 $B/attention $A --json $R/$n-r$r.json > $R/$n-r$r.txt 2>&1
    fi
    show $R/$n-r$r.txt "$n-r$r $(el)"
  done
done
echo "== done $(el)"
tar czf $OUT/results.tgz -C $R . && rm -r $R
