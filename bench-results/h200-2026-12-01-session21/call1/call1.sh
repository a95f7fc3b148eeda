# Session 21, call 1: how much of a 32k decode step is the key loop's arithmetic? Main's
# KV-cache kernel against ablations that keep every load and drop work (wrong results; timing
# only): dot1 (row 0's Q.K only), pv1 (row 0's P V only), both, nocvt (K/V bits taken as f32,
# no f16 conversion), noshfl (no cross-lane sums or broadcasts), lite (all of these). Registers
# (kernel_stats), then KV 32k contiguous (a first configuration uncounted), two rounds.
source .device/gpu/prelude.sh; export WGPU_BACKEND=vulkan
tar xzf .device/bin.tgz -C .device
R=$OUT/r; mkdir -p $R; B=.device/bin
T0=$(date +%s); el() { echo "[$(( $(date +%s) - T0 )) s]"; }
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | tee $R/gpu.txt
nvidia-smi --query-gpu=timestamp,clocks.sm,clocks.mem,power.draw,temperature.gpu --format=csv -lms 100 > $R/clocks.csv 2>&1 &
CLK=$!
VARS="main dot1 pv1 both nocvt noshfl lite"
use() { [ $1 = main ] && unset WGPU_FLASH_ATTN_SHADER_DIR || export WGPU_FLASH_ATTN_SHADER_DIR=.device/var/$1; }
for v in $VARS; do use $v
  timeout 60 $B/kernel_stats --dims 128 --dtypes f16 --kernels portable --decode --decode-kv 32768 > $R/stats_$v.txt 2>&1
  echo "== stats $v: $(grep -A3 "== decode" $R/stats_$v.txt | grep -i register)"
done
D="--batch 8 --heads 32 --heads-kv 8 --dim 128 --dtype f16 --seq-q 1 --warmup-ms 200 --runs 40 --check-rows 1 --fill gpu"
show() { grep -E "^\| [0-9]|panic" $1 | cut -d'|' -f4,6,7 | paste -sd';'; }
for round in 1 2; do
  for v in $VARS; do use $v
    timeout 100 $B/decode $D --layouts contiguous,contiguous,contiguous --kv 32768 --json $R/decode_${v}_$round.json > $R/decode_${v}_$round.txt 2>&1
    echo "== $v $round $(el): $(show $R/decode_${v}_$round.txt)"
  done
done
unset WGPU_FLASH_ATTN_SHADER_DIR
kill $CLK
echo "== done $(el)"
tar czf $OUT/results.tgz -C $R . && rm -r $R
