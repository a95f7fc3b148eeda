# Session 10, call 7: _u against _m (38b7573, combine pass) and _s (4e4f485) over cache lengths,
# where the combine pass is a larger share of a short step: batch 8, 32/8 heads, d = 128, f16,
# contiguous, KV 1k-32k, two alternating rounds (same binaries as call 6).
source .device/gpu/prelude.sh; export WGPU_BACKEND=vulkan
tar xzf .device/bin.tgz -C .device
R=$OUT/r; mkdir -p $R; B=.device/bin
T0=$(date +%s); el() { echo "[$(( $(date +%s) - T0 )) s]"; }
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | tee $R/gpu.txt
nvidia-smi --query-gpu=timestamp,clocks.sm,clocks.mem,power.draw,temperature.gpu --format=csv -lms 250 > $R/clocks.csv 2>&1 &
CLK=$!
O="--batch 8 --heads 32 --heads-kv 8 --dim 128 --dtype f16 --seq-q 1 --runs 30 --warmup-ms 200 --check-rows 2 --kv 1024,4096,16384,32768 --layouts contiguous"
for round in 1 2; do for v in _m _s _u; do echo "== round $round $v $(el)"
timeout 90 $B/decode$v $O --json $R/lengths${v}_r$round.json > $R/lengths${v}_r$round.txt 2>&1
grep -E "^\| [0-9]|rror|panic" $R/lengths${v}_r$round.txt | cut -c1-120; done; done
kill $CLK
echo "== done $(el)"
tar czf $OUT/results.tgz -C $R . && rm -r $R
