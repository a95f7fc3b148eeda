# Session 14, call 5: the committed tree: the plan at every head dim both ways (scores in
# registers, and through workgroup memory), PyTorch beside; the `kvcache` suite; the tiers test
# that call 4 left unfinished (every_coop_tile_candidate, with its progress).
source .device/gpu/prelude.sh; export WGPU_BACKEND=vulkan
tar xzf .device/bin.tgz -C .device
R=$OUT/r; mkdir -p $R; B=.device/bin
T0=$(date +%s); el() { echo "[$(( $(date +%s) - T0 )) s]"; }
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | tee $R/gpu.txt
nvidia-smi --query-gpu=timestamp,clocks.sm,clocks.mem,power.draw,temperature.gpu --format=csv -lms 250 > $R/clocks.csv 2>&1 &
CLK=$!
timeout 60 $B/kernel_stats --kernels coop-matrix --dims 32,64,96,128,160,192,256 --dtypes f16 > $R/kernel_stats.txt 2>&1; grep -E "^== |Register" $R/kernel_stats.txt
A="--tokens 16384 --seqs 8192 --dtypes f16 --baseline off --kernels coop-matrix --runs 20 --warmup 5 --warmup-ms 300 --check-rows 8 --causal both --dims 32,64,96,128,160,192,256"
for e in auto off; do echo "== plan $e $(el)"
timeout 100 $B/attention $A --coop-elements $e --json $R/plan_$e.json > $R/plan_$e.txt 2>&1
grep -E "^\| NVIDIA|rror|panic" $R/plan_$e.txt | cut -d'|' -f7,9,11,13; done
echo "== torch $(el)"; timeout 120 python3 .device/py/torch_sdpa.py --seqs 8192 --dims 128,64 --dtypes f16 --causal both --backends flash,cudnn --json $R/torch_sdpa.json > $R/torch_sdpa.txt 2>&1; tail -8 $R/torch_sdpa.txt
kill $CLK
echo "== test kvcache $(el)"
timeout 120 $B/kvcache --test-threads=16 > $R/test-kvcache.txt 2>&1; echo "rc=$?"; grep -E "test result|panicked|FAILED|failed" $R/test-kvcache.txt | head -8
echo "== test tiers every_coop_tile_candidate $(el)"
timeout 250 $B/tiers every_coop_tile_candidate --nocapture > $R/test-tiers-coop-tiles.txt 2>&1; echo "rc=$?"; grep -E "test result|panicked|FAILED|failed" $R/test-tiers-coop-tiles.txt | head -8; tail -3 $R/test-tiers-coop-tiles.txt
echo "== done $(el)"
tar czf $OUT/results.tgz -C $R . && rm -r $R
