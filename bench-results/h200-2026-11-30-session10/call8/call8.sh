# Session 10, call 8: _v (the final build: the merge only where splits cover at least 1024 keys
# of the longest sequence, the tag read as in call 6's _u) against _m (38b7573, combine pass)
# over cache lengths, contiguous and 16-token pages; the kvcache suite on _v.
source .device/gpu/prelude.sh; export WGPU_BACKEND=vulkan
tar xzf .device/bin.tgz -C .device
R=$OUT/r; mkdir -p $R; B=.device/bin
T0=$(date +%s); el() { echo "[$(( $(date +%s) - T0 )) s]"; }
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | tee $R/gpu.txt
nvidia-smi --query-gpu=timestamp,clocks.sm,clocks.mem,power.draw,temperature.gpu --format=csv -lms 250 > $R/clocks.csv 2>&1 &
CLK=$!
echo "== test kvcache_v $(el)"; timeout 150 $B/kvcache_v --test-threads=16 > $R/test-kvcache_v.txt 2>&1; echo "rc=$?"; grep -E "test result|panicked|FAILED" $R/test-kvcache_v.txt | head -5
O="--batch 8 --heads 32 --heads-kv 8 --dim 128 --dtype f16 --seq-q 1 --runs 30 --warmup-ms 200 --check-rows 2 --kv 4096,16384,32768 --layouts contiguous,paged --page-size 16"
for v in _m _v; do echo "== $v $(el)"
timeout 90 $B/decode$v $O --json $R/lengths${v}.json > $R/lengths${v}.txt 2>&1
grep -E "^\| [0-9]|rror|panic" $R/lengths${v}.txt | cut -c1-120; done
kill $CLK
echo "== done $(el)"
tar czf $OUT/results.tgz -C $R . && rm -r $R
