# Session 10, call 6: _u (call 5's _t with the tag written to workgroup memory at the end rather
# than right after its read, so that no invocation waits for the counter before the key loop)
# against _s (4e4f485: every invocation reads the counter itself) and _m (38b7573, combine pass):
# the decode goal shape at 32k, three alternating rounds; the kvcache suite on _u.
source .device/gpu/prelude.sh; export WGPU_BACKEND=vulkan
tar xzf .device/bin.tgz -C .device
R=$OUT/r; mkdir -p $R; B=.device/bin
T0=$(date +%s); el() { echo "[$(( $(date +%s) - T0 )) s]"; }
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | tee $R/gpu.txt
nvidia-smi --query-gpu=timestamp,clocks.sm,clocks.mem,power.draw,temperature.gpu --format=csv -lms 250 > $R/clocks.csv 2>&1 &
CLK=$!
echo "== test kvcache_u $(el)"; timeout 150 $B/kvcache_u --test-threads=16 > $R/test-kvcache_u.txt 2>&1; echo "rc=$?"; grep -E "test result|panicked|FAILED" $R/test-kvcache_u.txt | head -5
O="--batch 8 --heads 32 --heads-kv 8 --dim 128 --dtype f16 --seq-q 1 --runs 30 --warmup-ms 200 --check-rows 2 --kv 32768 --layouts contiguous,paged --page-size 16"
for round in 1 2 3; do for v in _m _s _u; do echo "== round $round $v $(el)"
timeout 60 $B/decode$v $O --json $R/gqa${v}_r$round.json > $R/gqa${v}_r$round.txt 2>&1
grep -E "^\| [0-9]|rror|panic" $R/gqa${v}_r$round.txt | cut -c1-120; done; done
kill $CLK
echo "== done $(el)"
tar czf $OUT/results.tgz -C $R . && rm -r $R
