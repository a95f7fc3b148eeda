# Session 19, call 11: call 10 with 3 s of idle time after each cache upload (`--settle-ms 3000`):
# does the first configuration after an upload still time slow? Same layouts, same order.
source .device/gpu/prelude.sh; export WGPU_BACKEND=vulkan
tar xzf .device/bin.tgz -C .device
R=$OUT/r; mkdir -p $R; B=.device/bin
T0=$(date +%s); el() { echo "[$(( $(date +%s) - T0 )) s]"; }
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | tee $R/gpu.txt
nvidia-smi --query-gpu=timestamp,clocks.sm,clocks.mem,power.draw,temperature.gpu --format=csv -lms 100 > $R/clocks.csv 2>&1 &
CLK=$!
D="--batch 8 --heads 32 --heads-kv 8 --dim 128 --dtype f16 --seq-q 1 --warmup-ms 200 --page-size 16 --runs 30 --check-rows 1 --pad-tokens 40 --settle-ms 3000"
L="contiguous-padded,contiguous,paged,contiguous-padded,contiguous,paged,contiguous-padded,contiguous,paged,contiguous-padded,contiguous,paged"
show() { grep -E "^\| [0-9]|rror|panic" $1 | cut -d'|' -f3,6 | paste -sd';'; }
for run in 128k_1 32k 128k_2; do echo "== $run $(el)"
  kv=131072; [ $run = 32k ] && kv=32768
  timeout 150 $B/decode $D --layouts $L --kv $kv --json $R/pad_$run.json > $R/pad_$run.txt 2>&1; show $R/pad_$run.txt
done
kill $CLK
echo "== done $(el)"
tar czf $OUT/results.tgz -C $R . && rm -r $R
