# Session 10, call 2: _g (the in-kernel merge reading 8 splits x (2 chunks of O + LSE) per round:
# two rounds at 16 splits) against _f (call 1's first form: one (row, chunk) pair and 8 splits per
# round, four rounds) and _m (main at 38b7573, combine pass), three rounds of the decode goal
# shape beside PyTorch; registers; the kvcache suite on _g.
source .device/gpu/prelude.sh; export WGPU_BACKEND=vulkan
tar xzf .device/bin.tgz -C .device
R=$OUT/r; mkdir -p $R; B=.device/bin
T0=$(date +%s); el() { echo "[$(( $(date +%s) - T0 )) s]"; }
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | tee $R/gpu.txt
nvidia-smi --query-gpu=timestamp,clocks.sm,clocks.mem,power.draw,temperature.gpu --format=csv -lms 250 > $R/clocks.csv 2>&1 &
CLK=$!
for h in 8 32; do timeout 60 $B/kernel_stats_g --dims 64,128,256 --dtypes f16 --kernels subgroup --decode --decode-heads-kv $h > $R/stats_g_kv$h.txt 2>&1; echo "== stats_g heads_kv $h"; grep -E "^== decode|Register" $R/stats_g_kv$h.txt | paste - - | cut -c1-150; done
echo "== test kvcache_g $(el)"; timeout 150 $B/kvcache_g --test-threads=16 > $R/test-kvcache_g.txt 2>&1; echo "rc=$?"; grep -E "test result|panicked|FAILED" $R/test-kvcache_g.txt | head -5
echo "== torch decode $(el)"; timeout 120 python3 .device/py/torch_decode.py --batch 8 --heads 32 --heads-kv 8 --dim 128 --kv 32768,131072 --json $R/torch_decode.json > $R/torch_decode.txt 2>&1; tail -4 $R/torch_decode.txt
D="--batch 8 --heads 32 --heads-kv 8 --dim 128 --dtype f16 --seq-q 1 --runs 30 --warmup-ms 200 --check-rows 2"
for round in 1 2 3; do for v in _m _f _g; do echo "== decode$v round $round $(el)"
timeout 90 $B/decode$v $D --layouts contiguous,paged --page-size 16 --kv 32768,131072 --json $R/decode${v}_r$round.json > $R/decode${v}_r$round.txt 2>&1
grep -E "^\| [0-9]|rror|panic" $R/decode${v}_r$round.txt | cut -c1-120; done; done
echo "== torch decode again $(el)"; timeout 120 python3 .device/py/torch_decode.py --batch 8 --heads 32 --heads-kv 8 --dim 128 --kv 32768,131072 --json $R/torch_decode2.json > $R/torch_decode2.txt 2>&1; tail -4 $R/torch_decode2.txt
kill $CLK
echo "== done $(el)"
tar czf $OUT/results.tgz -C $R . && rm -r $R
