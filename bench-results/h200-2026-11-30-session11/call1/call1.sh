# Session 11, call 1: the order in which a split visits its rounds of tiles (ORDER experiment;
# experiments/tile-order.diff on 019e154). _m: main (019e154). _o0: the counted loop, main's
# order. _o1: each sequence starts at another round (rotated by 37 x seq). _o2: rotated and
# rounds permuted (step 29). _o3: rotated per sequence, split and KV head. Decode goal shape,
# two rounds, PyTorch before; kvcache on _o1, _o2, _o3.
source .device/gpu/prelude.sh; export WGPU_BACKEND=vulkan
tar xzf .device/bin.tgz -C .device
R=$OUT/r; mkdir -p $R; B=.device/bin
T0=$(date +%s); el() { echo "[$(( $(date +%s) - T0 )) s]"; }
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | tee $R/gpu.txt
nvidia-smi --query-gpu=timestamp,clocks.sm,clocks.mem,power.draw,temperature.gpu --format=csv -lms 250 > $R/clocks.csv 2>&1 &
CLK=$!
echo "== torch decode $(el)"; timeout 120 python3 .device/py/torch_decode.py --batch 8 --heads 32 --heads-kv 8 --dim 128 --kv 32768,131072 --json $R/torch_decode.json > $R/torch_decode.txt 2>&1; tail -4 $R/torch_decode.txt
D="--batch 8 --heads 32 --heads-kv 8 --dim 128 --dtype f16 --seq-q 1 --runs 30 --warmup-ms 200 --check-rows 2"
for round in 1 2; do for v in _m _o0 _o1 _o2 _o3; do echo "== decode$v round $round $(el)"
timeout 90 $B/decode$v $D --layouts contiguous,paged --page-size 16 --kv 32768,131072 --json $R/decode${v}_r$round.json > $R/decode${v}_r$round.txt 2>&1
grep -E "^\| [0-9]|rror|panic" $R/decode${v}_r$round.txt | cut -c1-120; done; done
for v in _o1 _o2 _o3; do echo "== test kvcache$v $(el)"; timeout 100 $B/kvcache$v --test-threads=16 > $R/test-kvcache$v.txt 2>&1; echo "rc=$?"; grep -E "test result|panicked|FAILED" $R/test-kvcache$v.txt | head -5; done
kill $CLK
echo "== done $(el)"
tar czf $OUT/results.tgz -C $R . && rm -r $R
