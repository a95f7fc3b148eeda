# Session 21, call 8: the final tree again, with the caches written by a compute pass (--fill gpu:
# no host copy, so no host work and less GPU idle time between configurations), three rounds
# alternating with PyTorch's decode (every timed run kept).
source .device/gpu/prelude.sh; export WGPU_BACKEND=vulkan
tar xzf .device/bin.tgz -C .device
R=$OUT/r; mkdir -p $R; B=.device/bin
T0=$(date +%s); el() { echo "[$(( $(date +%s) - T0 )) s]"; }
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | tee $R/gpu.txt
nvidia-smi --query-gpu=timestamp,clocks.sm,clocks.mem,power.draw,temperature.gpu --format=csv -lms 100 > $R/clocks.csv 2>&1 &
CLK=$!
D="--batch 8 --heads 32 --heads-kv 8 --dim 128 --dtype f16 --seq-q 1 --warmup-ms 200 --page-size 16 --runs 40 --check-rows 2 --fill gpu"
show() { grep -E "^\| [0-9]|rror|panic" $1 | cut -d'|' -f2,3,4,6,7,9 | paste -sd';'; }
for round in 1 2 3; do
  echo "== decode round $round $(el)"
  timeout 150 $B/decode $D --layouts contiguous,contiguous,paged,contiguous --kv 32768,131072 --json $R/decode_$round.json > $R/decode_$round.txt 2>&1; show $R/decode_$round.txt
  echo "== torch round $round $(el)"
  timeout 120 python3 .device/py/torch_decode.py --batch 8 --heads 32 --heads-kv 8 --dim 128 --kv 32768,131072 --all-runs --json $R/torch_decode_$round.json > $R/torch_decode_$round.txt 2>&1; tail -4 $R/torch_decode_$round.txt
done
kill $CLK
echo "== done $(el)"
tar czf $OUT/results.tgz -C $R . && rm -r $R
