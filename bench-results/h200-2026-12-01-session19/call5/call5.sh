# Session 19, call 5: the final build's decode benchmark (main's KV-cache kernel, unchanged since
# 9d72907) under both timings, `idle` (each step its own submission on an idle GPU) and `queued`
# (all runs back to back in one submission, a 256 MiB clear before each step, as triton's do_bench
# times PyTorch), two rounds alternating, PyTorch beside in each round; the clock log also records
# the driver's reasons for holding clocks back.
source .device/gpu/prelude.sh; export WGPU_BACKEND=vulkan
tar xzf .device/bin.tgz -C .device
R=$OUT/r; mkdir -p $R; B=.device/bin
T0=$(date +%s); el() { echo "[$(( $(date +%s) - T0 )) s]"; }
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | tee $R/gpu.txt
nvidia-smi --query-gpu=timestamp,clocks.sm,clocks.mem,power.draw,temperature.gpu --format=csv -lms 100 > $R/clocks.csv 2>&1 &
CLK=$!
nvidia-smi --query-gpu=timestamp,clocks_event_reasons.active --format=csv -lms 100 > $R/clock_reasons.csv 2>&1 &
CLR=$!
D="--batch 8 --heads 32 --heads-kv 8 --dim 128 --dtype f16 --seq-q 1 --warmup-ms 200 --page-size 16 --runs 40 --check-rows 2"
show() { grep -E "^\| [0-9]|rror|panic" $1 | cut -d'|' -f2,3,4,6,7,9 | paste -sd';'; }
for round in 1 2; do
  for t in idle queued; do echo "== decode $t round $round $(el)"
    timeout 120 $B/decode $D --timing $t --layouts contiguous,paged,contiguous --kv 32768,131072 --json $R/decode_${t}_$round.json > $R/decode_${t}_$round.txt 2>&1; show $R/decode_${t}_$round.txt
  done
  echo "== torch round $round $(el)"
  timeout 90 python3 .device/py/torch_decode.py --batch 8 --heads 32 --heads-kv 8 --dim 128 --kv 32768,131072 --json $R/torch_decode_$round.json > $R/torch_decode_$round.txt 2>&1; tail -4 $R/torch_decode_$round.txt
done
kill $CLK $CLR
echo "== done $(el)"
tar czf $OUT/results.tgz -C $R . && rm -r $R
