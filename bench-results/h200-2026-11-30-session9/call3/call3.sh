# Session 9, call 3: _p (the tensor-core kernel with PINGPONG: the second half of the subgroups
# runs each tile's P V one step late, holding a second V tile; on where the tiles fit 48 KiB,
# so not the plan's 128x32x32x8 at d = 128) against _m (main, 4a294f7), two rounds over tiles;
# register counts; the tiers and variants tests on _p; then decoding on _p's build (the same
# KV-cache code as 4a294f7: at least 8 lanes per key) beside PyTorch.
source .device/gpu/prelude.sh; export WGPU_BACKEND=vulkan
tar xzf .device/bin.tgz -C .device
R=$OUT/r; mkdir -p $R; B=.device/bin
T0=$(date +%s); el() { echo "[$(( $(date +%s) - T0 )) s]"; }
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | tee $R/gpu.txt
nvidia-smi --query-gpu=timestamp,clocks.sm,clocks.mem,power.draw,temperature.gpu --format=csv -lms 250 > $R/clocks.csv 2>&1 &
CLK=$!
TL=128x32x32x8,128x16x32x8,64x32x32x4,64x16x32x4
for v in _m _p; do timeout 90 $B/kernel_stats$v --dims 64,128 --dtypes f16 --kernels coop-matrix --tiles $TL > $R/stats$v.txt 2>&1; echo "== stats$v"; grep -E "^== |Register" $R/stats$v.txt | paste - - | cut -c1-150; done
A="--tokens 16384 --seqs 8192 --dtypes f16 --baseline off --kernels coop-matrix --runs 20 --warmup 5 --warmup-ms 300 --check-rows 8"
for round in 1 2; do for v in _m _p; do echo "== attention$v round $round $(el)"
timeout 150 $B/attention$v $A --dims 128,64 --causal both --tiles $TL --json $R/coop${v}_r$round.json > $R/coop${v}_r$round.txt 2>&1
grep -E "^\| NVIDIA|rror" $R/coop${v}_r$round.txt | cut -d'|' -f7-13; done; done
echo "== test tiers_p $(el)"; timeout 150 $B/tiers_p --test-threads=16 > $R/test-tiers_p.txt 2>&1; echo "rc=$?"; grep -E "test result|panicked|FAILED" $R/test-tiers_p.txt | head -5
echo "== test variants_p $(el)"; timeout 150 $B/variants_p --test-threads=16 > $R/test-variants_p.txt 2>&1; echo "rc=$?"; grep -E "test result|panicked|FAILED" $R/test-variants_p.txt | head -5
echo "== torch decode $(el)"; timeout 120 python3 .device/py/torch_decode.py --batch 8 --heads 32 --heads-kv 8 --dim 128 --kv 32768,131072 --json $R/torch_decode.json > $R/torch_decode.txt 2>&1; tail -4 $R/torch_decode.txt
D="--batch 8 --heads 32 --heads-kv 8 --dim 128 --dtype f16 --seq-q 1 --runs 30 --warmup-ms 200 --check-rows 2"
for round in 1 2; do echo "== decode_p round $round $(el)"
timeout 90 $B/decode_p $D --layouts contiguous,paged --page-size 16 --kv 32768,131072 --json $R/decode_p_r$round.json > $R/decode_p_r$round.txt 2>&1
grep -E "^\| [0-9]|rror|panic" $R/decode_p_r$round.txt | cut -c1-120; done
echo "== mha $(el)"
timeout 90 $B/decode_p --batch 4 --heads 32 --heads-kv 32 --dim 128 --dtype f16 --seq-q 1 --runs 30 --warmup-ms 200 --check-rows 2 --layouts contiguous,paged --kv 32768 --json $R/mha.json > $R/mha.txt 2>&1
grep -E "^\| [0-9]|rror|panic" $R/mha.txt | cut -c1-120
timeout 120 python3 .device/py/torch_decode.py --batch 4 --heads 32 --heads-kv 32 --dim 128 --kv 32768 --json $R/torch_decode_mha.json > $R/torch_decode_mha.txt 2>&1; tail -2 $R/torch_decode_mha.txt
kill $CLK
echo "== done $(el)"
tar czf $OUT/results.tgz -C $R . && rm -r $R
