# Session 19, call 6 (the final build, a1941b6's library): registers of the KV-cache kernel with
# Q kept as stored (f16, scaled after the score's sum: `q16`, experiments/q-as-stored.diff) and
# with 9, 10 or 12 keys per lane, against main; then KV 32k contiguous with the 10- and 12-key
# tiles against the plan's 8, main and q16, two rounds alternating; PyTorch beside.
source .device/gpu/prelude.sh; export WGPU_BACKEND=vulkan
tar xzf .device/bin.tgz -C .device
R=$OUT/r; mkdir -p $R; B=.device/bin; V=.device/var
T0=$(date +%s); el() { echo "[$(( $(date +%s) - T0 )) s]"; }
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | tee $R/gpu.txt
nvidia-smi --query-gpu=timestamp,clocks.sm,clocks.mem,power.draw,temperature.gpu --format=csv -lms 100 > $R/clocks.csv 2>&1 &
CLK=$!
for v in main q16; do
  SD=""; [ $v != main ] && SD=$V/$v
  WGPU_FLASH_ATTN_SHADER_DIR=$SD timeout 60 $B/kernel_stats --dims 128 --dtypes f16 --kernels portable --decode --decode-kv 32768 --decode-tiles plan,sg:64/16/9,sg:64/16/10,sg:64/16/12 > $R/stats_$v.txt 2>&1
  echo "stats $v: $(grep -iE "== decode|register" $R/stats_$v.txt | tr -s ' ' | tail -8 | paste -sd';')"
done
D="--batch 8 --heads 32 --heads-kv 8 --dim 128 --dtype f16 --seq-q 1 --warmup-ms 200 --page-size 16 --runs 30 --check-rows 2"
show() { grep -E "^\| [0-9]|rror|panic" $1 | cut -d'|' -f2,3,4,5,6,7,9 | paste -sd';'; }
for round in 1 2; do
  for v in main q16; do echo "== $v round $round $(el)"
    SD=""; [ $v != main ] && SD=$V/$v
    WGPU_FLASH_ATTN_SHADER_DIR=$SD timeout 90 $B/decode $D --layouts contiguous --kv 32768 --tiles plan,sg:64/16/10,sg:64/16/12,plan --json $R/${v}_$round.json > $R/${v}_$round.txt 2>&1; show $R/${v}_$round.txt
  done
done
echo "== torch $(el)"
timeout 60 python3 .device/py/torch_decode.py --batch 8 --heads 32 --heads-kv 8 --dim 128 --kv 32768 --json $R/torch_decode.json > $R/torch_decode.txt 2>&1; tail -2 $R/torch_decode.txt
kill $CLK
echo "== done $(el)"
tar czf $OUT/results.tgz -C $R . && rm -r $R
