# Session 21, call 7: the final tree (the key loop's scores as chains of fma, call 6's "fma").
# Registers of the KV-cache kernel, the kvcache test binary on the H200, then the decode
# benchmark and PyTorch's (every timed run kept), two rounds alternating.
source .device/gpu/prelude.sh; export WGPU_BACKEND=vulkan
tar xzf .device/bin.tgz -C .device
R=$OUT/r; mkdir -p $R; B=.device/bin
T0=$(date +%s); el() { echo "[$(( $(date +%s) - T0 )) s]"; }
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | tee $R/gpu.txt
nvidia-smi --query-gpu=timestamp,clocks.sm,clocks.mem,power.draw,temperature.gpu --format=csv -lms 100 > $R/clocks.csv 2>&1 &
CLK=$!
timeout 60 $B/kernel_stats --dims 128 --dtypes f16 --kernels portable --decode --decode-kv 32768 > $R/stats.txt 2>&1
echo "== stats: $(grep -A3 "== decode" $R/stats.txt | grep -E "decode|Register" | paste -sd' ')"
echo "== kvcache tests $(el)"
timeout 200 $B/kvcache > $R/test-kvcache.txt 2>&1; echo "rc=$?" >> $R/test-kvcache.txt; grep -E "test result|FAILED|panicked|rc=" $R/test-kvcache.txt
D="--batch 8 --heads 32 --heads-kv 8 --dim 128 --dtype f16 --seq-q 1 --warmup-ms 200 --page-size 16 --runs 40 --check-rows 2"
show() { grep -E "^\| [0-9]|rror|panic" $1 | cut -d'|' -f2,3,4,6,7,9 | paste -sd';'; }
for round in 1 2; do
  echo "== decode round $round $(el)"
  timeout 150 $B/decode $D --layouts contiguous,contiguous,paged --kv 32768,131072 --json $R/decode_$round.json > $R/decode_$round.txt 2>&1; show $R/decode_$round.txt
  echo "== torch round $round $(el)"
  timeout 120 python3 .device/py/torch_decode.py --batch 8 --heads 32 --heads-kv 8 --dim 128 --kv 32768,131072 --all-runs --json $R/torch_decode_$round.json > $R/torch_decode_$round.txt 2>&1; tail -4 $R/torch_decode_$round.txt
done
kill $CLK
echo "== done $(el)"
tar czf $OUT/results.tgz -C $R . && rm -r $R
