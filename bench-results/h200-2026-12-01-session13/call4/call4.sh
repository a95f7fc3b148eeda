# Session 13, call 4: the final tree (as call 3): the plan at every head dim, both ways, PyTorch
# beside; the `kvcache` suite; the decoding goal shape beside PyTorch, two rounds.
source .device/gpu/prelude.sh; export WGPU_BACKEND=vulkan
tar xzf .device/bin.tgz -C .device
R=$OUT/r; mkdir -p $R; B=.device/bin
T0=$(date +%s); el() { echo "[$(( $(date +%s) - T0 )) s]"; }
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | tee $R/gpu.txt
nvidia-smi --query-gpu=timestamp,clocks.sm,clocks.mem,power.draw,temperature.gpu --format=csv -lms 250 > $R/clocks.csv 2>&1 &
CLK=$!
timeout 60 $B/kernel_stats --kernels coop-matrix --dims 32,64,96,128,160,192,256 --dtypes f16 > $R/kernel_stats.txt 2>&1; grep -E "^== |Register" $R/kernel_stats.txt
A="--tokens 16384 --seqs 8192 --dtypes f16 --baseline off --kernels coop-matrix --runs 20 --warmup 5 --warmup-ms 300 --check-rows 8 --causal both"
for e in auto off; do echo "== plan $e $(el)"
timeout 110 $B/attention $A --dims 32,64,96,128,160,192,256 --coop-elements $e --json $R/plan_$e.json > $R/plan_$e.txt 2>&1
grep -E "^\| NVIDIA|rror|panic|registers:" $R/plan_$e.txt | cut -d'|' -f6-15; done
echo "== torch $(el)"; timeout 150 python3 .device/py/torch_sdpa.py --seqs 8192 --dims 128,64 --dtypes f16 --causal both --backends flash,cudnn --json $R/torch_sdpa.json > $R/torch_sdpa.txt 2>&1; tail -8 $R/torch_sdpa.txt
D="--batch 8 --heads 32 --heads-kv 8 --dim 128 --dtype f16 --seq-q 1 --runs 30 --warmup-ms 200 --check-rows 2 --layouts contiguous,paged --page-size 16 --kv 32768,131072"
for round in 1 2; do echo "== decode round $round $(el)"
timeout 120 python3 .device/py/torch_decode.py --batch 8 --heads 32 --heads-kv 8 --dim 128 --kv 32768,131072 --json $R/torch_decode_r$round.json > $R/torch_decode_r$round.txt 2>&1; tail -4 $R/torch_decode_r$round.txt
timeout 90 $B/decode $D --json $R/decode_r$round.json > $R/decode_r$round.txt 2>&1
grep -E "^\| [0-9]|rror|panic" $R/decode_r$round.txt | cut -c1-120; done
kill $CLK
echo "== test kvcache $(el)"
timeout 120 $B/kvcache --test-threads=16 > $R/test-kvcache.txt 2>&1; echo "rc=$?"; grep -E "test result|panicked|FAILED|failed" $R/test-kvcache.txt | head -8
echo "== done $(el)"
tar czf $OUT/results.tgz -C $R . && rm -r $R
