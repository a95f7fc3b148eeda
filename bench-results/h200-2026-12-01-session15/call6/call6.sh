# Session 15, call 6: the committed tree (K rows staged before V rows at d = 96 and 192 with
# scores in registers, plan::coop_stage_k_first): driver registers, the plan at every head dim,
# PyTorch beside; the forward, variants and tiers (options) tests.
source .device/gpu/prelude.sh; export WGPU_BACKEND=vulkan
tar xzf .device/bin.tgz -C .device
R=$OUT/r; mkdir -p $R; B=.device/bin
T0=$(date +%s); el() { echo "[$(( $(date +%s) - T0 )) s]"; }
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | tee $R/gpu.txt
nvidia-smi --query-gpu=timestamp,clocks.sm,clocks.mem,power.draw,temperature.gpu --format=csv -lms 250 > $R/clocks.csv 2>&1 &
CLK=$!
timeout 60 $B/kernel_stats --kernels coop-matrix --dims 64,96,128,160,192,256 --dtypes f16 > $R/kernel_stats.txt 2>&1
echo "regs $(grep -E "Register" $R/kernel_stats.txt | tr -s ' ' | tr '\n' ' ')"
A="--tokens 16384 --seqs 8192 --dtypes f16 --baseline off --kernels coop-matrix --runs 20 --warmup 5 --warmup-ms 300 --check-rows 8 --causal both --dims 32,64,96,128,160,192,256"
echo "== plan $(el)"
timeout 100 $B/attention $A --coop-elements auto --json $R/plan_auto.json > $R/plan_auto.txt 2>&1
grep -E "^\| NVIDIA|rror|panic" $R/plan_auto.txt | cut -d'|' -f7,9,11,13,19
echo "== torch $(el)"; timeout 120 python3 .device/py/torch_sdpa.py --seqs 8192 --dims 128,64 --dtypes f16 --causal both --backends flash,cudnn --json $R/torch_sdpa.json > $R/torch_sdpa.txt 2>&1; tail -8 $R/torch_sdpa.txt
kill $CLK
for t in "forward 100" "variants 90" "tiers 60 options_on_every_tier"; do set -- $t
  echo "== test $1 $3 $(el)"
  timeout $2 $B/$1 $3 --test-threads=16 > $R/test-$1.txt 2>&1; echo "rc=$?"; grep -E "test result|panicked|FAILED|failed" $R/test-$1.txt | head -8
done
echo "== done $(el)"
tar czf $OUT/results.tgz -C $R . && rm -r $R
