# Session 18, call 2: each cache bound as two halves, so that KV 128k (a 2 GiB cache, one byte
# over a binding) runs as one dispatch whose splits merge in the kernel (`decode`), against the
# two dispatches and combine pass of a5753ef (`decode_old`); registers of both kernels; two
# rounds alternating, PyTorch beside; then the new build with the layouts in the other order
# and repeated (does the first layout after a cache upload time slower?), every run kept in
# the JSON (`ms_runs`); the kvcache tests on the new build.
source .device/gpu/prelude.sh; export WGPU_BACKEND=vulkan
tar xzf .device/bin.tgz -C .device
R=$OUT/r; mkdir -p $R; B=.device/bin
T0=$(date +%s); el() { echo "[$(( $(date +%s) - T0 )) s]"; }
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | tee $R/gpu.txt
nvidia-smi --query-gpu=timestamp,clocks.sm,clocks.mem,power.draw,temperature.gpu --format=csv -lms 100 > $R/clocks.csv 2>&1 &
CLK=$!
for v in new old; do X=$B/kernel_stats; [ $v = old ] && X=$B/kernel_stats_old
  for kv in 32768 131072; do
    if [ $v = new ]; then A="--decode-kv $kv"; else A=""; [ $kv = 131072 ] && continue; fi
    timeout 60 $X --dims 128 --dtypes f16 --kernels portable --decode $A > $R/stats_${v}_$kv.txt 2>&1
    echo "stats $v $kv: $(grep -iE "decode|register|spill" $R/stats_${v}_$kv.txt | tr -s ' ' | paste -sd';' | cut -c1-400)"
  done
done
D="--batch 8 --heads 32 --heads-kv 8 --dim 128 --dtype f16 --seq-q 1 --runs 30 --warmup-ms 200 --check-rows 2 --page-size 16"
for round in 1 2; do
for v in new old; do echo "== decode $v round $round $(el)"
  X=$B/decode; [ $v = old ] && X=$B/decode_old
  timeout 100 $X $D --layouts contiguous,paged --kv 32768,131072 --json $R/decode_${v}_$round.json > $R/decode_${v}_$round.txt 2>&1; grep -E "^\| [0-9]|rror|panic" $R/decode_${v}_$round.txt | cut -d'|' -f2,3,4,6,7,8 | paste -sd';'
done; done
echo "== torch $(el)"
timeout 90 python3 .device/py/torch_decode.py --batch 8 --heads 32 --heads-kv 8 --dim 128 --kv 32768,131072 --json $R/torch_decode.json > $R/torch_decode.txt 2>&1; tail -4 $R/torch_decode.txt
echo "== decode new, layouts reordered $(el)"
timeout 120 $B/decode $D --layouts paged,contiguous,paged,contiguous --kv 131072 --runs 60 --json $R/decode_order.json > $R/decode_order.txt 2>&1; grep -E "^\| [0-9]|rror|panic" $R/decode_order.txt | cut -d'|' -f2,3,4,6,7,8 | paste -sd';'
kill $CLK
echo "== test kvcache (new) $(el)"
timeout 90 $B/kvcache --test-threads=16 > $R/test-kvcache.txt 2>&1; echo "rc=$?"; grep -E "test result|panicked|FAILED|failed" $R/test-kvcache.txt | head -8
echo "== done $(el)"
tar czf $OUT/results.tgz -C $R . && rm -r $R
