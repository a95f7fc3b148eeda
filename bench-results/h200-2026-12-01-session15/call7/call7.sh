# Session 15, call 7: the committed tree. The staging order is now chosen by the header's
# stage(), which calls stage_by_vec4 (the old body) or stage_rows twice: call 6's build, where a
# constant branch inside stage() chose it, compiled differently at every head dim. Pipeline caches
# (their SASS compared with calls 4 and 5), the plan twice at every head dim, PyTorch beside;
# the forward tests.
source .device/gpu/prelude.sh; export WGPU_BACKEND=vulkan
tar xzf .device/bin.tgz -C .device
R=$OUT/r; mkdir -p $R/cache; B=.device/bin
T0=$(date +%s); el() { echo "[$(( $(date +%s) - T0 )) s]"; }
nvidia-smi --query-gpu=timestamp,clocks.sm,clocks.mem,power.draw,temperature.gpu --format=csv -lms 250 > $R/clocks.csv 2>&1 &
CLK=$!
timeout 60 $B/kernel_stats --kernels coop-matrix --dims 32,64,96,128,160,192,256 --dtypes f16 --cache $R/cache > $R/kernel_stats.txt 2>&1
echo "regs $(grep -E "Register" $R/kernel_stats.txt | tr -s ' ' | tr '\n' ' ')"
A="--tokens 16384 --seqs 8192 --dtypes f16 --baseline off --kernels coop-matrix --runs 20 --warmup 5 --warmup-ms 300 --check-rows 8 --causal both --dims 32,64,96,128,160,192,256"
for round in 1 2; do echo "== plan round $round $(el)"
timeout 60 $B/attention $A --coop-elements auto --json $R/plan_$round.json > $R/plan_$round.txt 2>&1
grep -E "^\| NVIDIA|rror|panic" $R/plan_$round.txt | cut -d'|' -f7,9,11,13,19 | tr -s ' ' | paste -sd';'; done
echo "== torch $(el)"; timeout 60 python3 .device/py/torch_sdpa.py --seqs 8192 --dims 128 --dtypes f16 --causal both --backends flash,cudnn --json $R/torch_sdpa.json > $R/torch_sdpa.txt 2>&1; tail -4 $R/torch_sdpa.txt
kill $CLK
echo "== test forward $(el)"
timeout 45 $B/forward --test-threads=16 > $R/test-forward.txt 2>&1; echo "rc=$?"; grep -E "test result|panicked|FAILED|failed" $R/test-forward.txt | head -8
echo "== done $(el)"
tar czf $OUT/results.tgz -C $R . && rm -r $R
