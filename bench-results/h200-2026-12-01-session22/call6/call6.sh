# Session 22, call 6: the committed form (Plan::unroll_qk / unroll_pv, chosen on NVIDIA) against
# the loops (--unroll off), same build: registers; d = 128, N = 8k, f32 and f16, subgroup tier,
# three rounds alternating; causal; the portable tier; every head dim from 32 to 256 (one round);
# PyTorch's f32 backends beside; then the forward, variants and tiers tests on the portable and
# subgroup tiers.
source .device/gpu/prelude.sh; export WGPU_BACKEND=vulkan
tar xzf .device/bin.tgz -C .device
R=$OUT/r; mkdir -p $R; B=.device/bin
T0=$(date +%s); el() { echo "[$(( $(date +%s) - T0 )) s]"; }
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | tee $R/gpu.txt
nvidia-smi --query-gpu=timestamp,clocks.sm,clocks.mem,power.draw,temperature.gpu --format=csv -lms 250 > $R/clocks.csv 2>&1 &
CLK=$!
timeout 90 $B/kernel_stats --kernels portable,subgroup --dims 128,64 --dtypes f32,f16 > $R/stats.txt 2>&1
echo "== stats: $(grep -iE "^==|register|spill" $R/stats.txt | tr -s ' ' | paste -sd';' | cut -c1-900)"
show() { echo "$2 $(grep -E "^\| NVIDIA|rror|panic|SKIP" $1 | cut -d"|" -f7,8,9,10,11,12,13 | tr -s ' ' | paste -sd';')"; }
S="--tokens 16384 --seqs 8192 --baseline off --runs 10 --warmup 3 --warmup-ms 300 --check-rows 8"
for round in 1 2 3; do
  for u in auto off; do
    timeout 90 $B/attention $S --kernels subgroup --dtypes f32,f16 --causal off --dims 128 --unroll $u --json $R/d128_${u}_$round.json > $R/d128_${u}_$round.txt 2>&1; show $R/d128_${u}_$round.txt "$u $round $(el)"
  done
done
for u in auto off; do
  timeout 90 $B/attention $S --kernels subgroup --dtypes f32,f16 --causal on --dims 128 --unroll $u --json $R/causal_${u}.json > $R/causal_${u}.txt 2>&1; show $R/causal_${u}.txt "causal $u $(el)"
  timeout 90 $B/attention $S --kernels portable --dtypes f32,f16 --causal off --dims 128 --unroll $u --json $R/portable_${u}.json > $R/portable_${u}.txt 2>&1; show $R/portable_${u}.txt "portable $u $(el)"
  timeout 200 $B/attention $S --kernels subgroup --dtypes f32,f16 --causal off --dims 32,64,96,160,192,256 --unroll $u --json $R/dims_${u}.json > $R/dims_${u}.txt 2>&1; show $R/dims_${u}.txt "dims $u $(el)"
done
echo "== torch $(el)"; timeout 120 python3 .device/py/torch_sdpa.py --seqs 8192 --dims 128,64 --dtypes f32 --causal off --backends efficient,math --json $R/torch_f32.json > $R/torch_f32.txt 2>&1; tail -4 $R/torch_f32.txt
kill $CLK
export FLASH_TEST_KERNELS=portable,subgroup
for t in forward variants tiers; do echo "== test $t $(el)"
  timeout 150 $B/$t --test-threads=16 > $R/test-$t.txt 2>&1; echo "rc=$?"; grep -E "test result|panicked|FAILED|failed" $R/test-$t.txt | head -6
done
echo "== done $(el)"
tar czf $OUT/results.tgz -C $R . && rm -r $R
