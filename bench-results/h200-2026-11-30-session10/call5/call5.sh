# Session 10, call 5: _t (the review's mends on e6ab9a2: the step's tag read by the invocation
# that counts in and shared through workgroup memory, a given-up batch ends the spinning, two
# more words of workgroup memory counted) against _m (38b7573, combine pass) at the head dims and
# shapes call 3 ran on one build only: d = 256 and 64 (batch 8, 32/8 heads) and plain multi-head
# decode (batch 4, 32 heads), then the goal shape at 32k; two alternating rounds each; registers;
# the kvcache suite on _t.
source .device/gpu/prelude.sh; export WGPU_BACKEND=vulkan
tar xzf .device/bin.tgz -C .device
R=$OUT/r; mkdir -p $R; B=.device/bin
T0=$(date +%s); el() { echo "[$(( $(date +%s) - T0 )) s]"; }
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | tee $R/gpu.txt
nvidia-smi --query-gpu=timestamp,clocks.sm,clocks.mem,power.draw,temperature.gpu --format=csv -lms 250 > $R/clocks.csv 2>&1 &
CLK=$!
for v in _m _t; do timeout 60 $B/kernel_stats$v --dims 64,128,256 --dtypes f16 --kernels subgroup --decode --decode-heads-kv 8 > $R/stats$v.txt 2>&1; echo "== stats$v"; grep -E "^== decode|Register" $R/stats$v.txt | paste - - | cut -c1-150; done
echo "== test kvcache_t $(el)"; timeout 150 $B/kvcache_t --test-threads=16 > $R/test-kvcache_t.txt 2>&1; echo "rc=$?"; grep -E "test result|panicked|FAILED" $R/test-kvcache_t.txt | head -5
O="--dtype f16 --seq-q 1 --runs 30 --warmup-ms 200 --check-rows 2 --kv 32768"
for round in 1 2; do for v in _m _t; do echo "== round $round $v $(el)"
for d in 256 64; do timeout 60 $B/decode$v --batch 8 --heads 32 --heads-kv 8 --dim $d $O --layouts contiguous --json $R/d${d}${v}_r$round.json > $R/d${d}${v}_r$round.txt 2>&1
grep -E "^\| [0-9]|rror|panic" $R/d${d}${v}_r$round.txt | cut -c1-120; done
timeout 60 $B/decode$v --batch 4 --heads 32 --heads-kv 32 --dim 128 $O --layouts contiguous --json $R/mha${v}_r$round.json > $R/mha${v}_r$round.txt 2>&1
grep -E "^\| [0-9]|rror|panic" $R/mha${v}_r$round.txt | cut -c1-120
timeout 60 $B/decode$v --batch 8 --heads 32 --heads-kv 8 --dim 128 $O --layouts contiguous,paged --page-size 16 --json $R/gqa${v}_r$round.json > $R/gqa${v}_r$round.txt 2>&1
grep -E "^\| [0-9]|rror|panic" $R/gqa${v}_r$round.txt | cut -c1-120; done; done
kill $CLK
echo "== done $(el)"
tar czf $OUT/results.tgz -C $R . && rm -r $R
