# Session 10, call 3: _n (9f59ad8: the in-kernel merge as committed, one window only) against
# _m (38b7573, combine pass) and _p (_n + experiments/decode-loads-before-q.diff: each tile's K/V
# loads issued at the bottom of the tile before, the first tile's before Q), three rounds of the
# decode goal shape beside PyTorch; registers; the kvcache suite on _n and _p; plain multi-head
# decode and d = 64 / 256 on _n.
source .device/gpu/prelude.sh; export WGPU_BACKEND=vulkan
tar xzf .device/bin.tgz -C .device
R=$OUT/r; mkdir -p $R; B=.device/bin
T0=$(date +%s); el() { echo "[$(( $(date +%s) - T0 )) s]"; }
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | tee $R/gpu.txt
nvidia-smi --query-gpu=timestamp,clocks.sm,clocks.mem,power.draw,temperature.gpu --format=csv -lms 250 > $R/clocks.csv 2>&1 &
CLK=$!
for v in _n _p; do for h in 8 32; do timeout 60 $B/kernel_stats$v --dims 128 --dtypes f16 --kernels subgroup --decode --decode-heads-kv $h > $R/stats${v}_kv$h.txt 2>&1; echo "== stats$v heads_kv $h"; grep -E "^== decode|Register" $R/stats${v}_kv$h.txt | paste - - | cut -c1-150; done; done
for v in _n _p; do echo "== test kvcache$v $(el)"; timeout 150 $B/kvcache$v --test-threads=16 > $R/test-kvcache$v.txt 2>&1; echo "rc=$?"; grep -E "test result|panicked|FAILED" $R/test-kvcache$v.txt | head -5; done
echo "== torch decode $(el)"; timeout 120 python3 .device/py/torch_decode.py --batch 8 --heads 32 --heads-kv 8 --dim 128 --kv 32768,131072 --json $R/torch_decode.json > $R/torch_decode.txt 2>&1; tail -4 $R/torch_decode.txt
D="--batch 8 --heads 32 --heads-kv 8 --dim 128 --dtype f16 --seq-q 1 --runs 30 --warmup-ms 200 --check-rows 2"
for round in 1 2 3; do for v in _m _n _p; do echo "== decode$v round $round $(el)"
timeout 90 $B/decode$v $D --layouts contiguous,paged --page-size 16 --kv 32768,131072 --json $R/decode${v}_r$round.json > $R/decode${v}_r$round.txt 2>&1
grep -E "^\| [0-9]|rror|panic" $R/decode${v}_r$round.txt | cut -c1-120; done; done
echo "== torch decode again $(el)"; timeout 120 python3 .device/py/torch_decode.py --batch 8 --heads 32 --heads-kv 8 --dim 128 --kv 32768,131072 --json $R/torch_decode2.json > $R/torch_decode2.txt 2>&1; tail -4 $R/torch_decode2.txt
echo "== mha and d=64/256 _n $(el)"
timeout 60 $B/decode_n --batch 4 --heads 32 --heads-kv 32 --dim 128 --dtype f16 --seq-q 1 --runs 30 --warmup-ms 200 --check-rows 2 --layouts contiguous,paged --kv 32768 --json $R/mha_n.json > $R/mha_n.txt 2>&1
grep -E "^\| [0-9]|rror|panic" $R/mha_n.txt | cut -c1-120
for d in 64 256; do timeout 60 $B/decode_n --batch 8 --heads 32 --heads-kv 8 --dim $d --dtype f16 --seq-q 1 --runs 30 --warmup-ms 200 --check-rows 2 --layouts contiguous --kv 32768 --json $R/d${d}_n.json > $R/d${d}_n.txt 2>&1
grep -E "^\| [0-9]|rror|panic" $R/d${d}_n.txt | cut -c1-120; done
kill $CLK
echo "== done $(el)"
tar czf $OUT/results.tgz -C $R . && rm -r $R
