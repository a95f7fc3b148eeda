# Session 9, call 1: where the 32k decode step's time goes. _m is main (820c926); _nc skips the
# combine dispatch (split kernel alone; its output is wrong and its check fails on purpose); _e
# runs the split kernel with no keys (launch, reads of the work item and Q, partial writes, and
# the combine). Then a split sweep at 32k, plain multi-head decode (one row per KV head) over
# keys per lane, and clocks logged all along.
source .device/gpu/prelude.sh; export WGPU_BACKEND=vulkan
tar xzf .device/bin.tgz -C .device
R=$OUT/r; mkdir -p $R; B=.device/bin
T0=$(date +%s); el() { echo "[$(( $(date +%s) - T0 )) s]"; }
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | tee $R/gpu.txt
nvidia-smi --query-gpu=timestamp,clocks.sm,clocks.mem,power.draw,temperature.gpu --format=csv -lms 250 > $R/clocks.csv 2>&1 &
CLK=$!
echo "== torch $(el)"; timeout 120 python3 .device/py/torch_decode.py --batch 8 --heads 32 --heads-kv 8 --dim 128 --kv 32768,131072 --json $R/torch_decode.json > $R/torch_decode.txt 2>&1; tail -3 $R/torch_decode.txt
timeout 120 python3 .device/py/torch_decode.py --batch 4 --heads 32 --heads-kv 32 --dim 128 --kv 32768 --json $R/torch_decode_mha.json > $R/torch_decode_mha.txt 2>&1; tail -2 $R/torch_decode_mha.txt
D="--batch 8 --heads 32 --heads-kv 8 --dim 128 --dtype f16 --seq-q 1 --runs 30 --warmup-ms 200 --check-rows 1"
for round in 1 2; do
for v in _m _nc _e; do echo "== decode$v round $round $(el)"
L=contiguous; [ $v = _m ] && L=contiguous,paged
timeout 60 $B/decode$v $D --layouts $L --page-size 16 --kv 32768,131072 --json $R/decode${v}_r$round.json > $R/decode${v}_r$round.txt 2>&1
grep -E "^\| [0-9]|rror|panic" $R/decode${v}_r$round.txt | cut -c1-150; done; done
echo "== splits 32k $(el)"
timeout 120 $B/decode_m $D --layouts contiguous --kv 32768 --splits 8,12,14,16,18,20,24,32,48 --json $R/splits32k.json > $R/splits32k.txt 2>&1
grep -E "^\| [0-9]|rror|panic" $R/splits32k.txt | cut -c1-150
echo "== mha $(el)"
timeout 120 $B/decode_m --batch 4 --heads 32 --heads-kv 32 --dim 128 --dtype f16 --seq-q 1 --runs 30 --warmup-ms 200 --check-rows 2 --layouts contiguous --kv 32768 --tiles plan,sg:64/4/4,sg:64/4/8,sg:64/8/4,sg:64/16/8 --json $R/mha.json > $R/mha.txt 2>&1
grep -E "^\| [0-9]|rror|panic" $R/mha.txt | cut -c1-150
timeout 60 $B/kernel_stats_m --dims 128 --dtypes f16 --kernels subgroup --decode --decode-tiles plan > $R/stats.txt 2>&1; grep -E "== decode|Register" $R/stats.txt | tail -4
kill $CLK
echo "== done $(el)"
tar czf $OUT/results.tgz -C $R . && rm -r $R
