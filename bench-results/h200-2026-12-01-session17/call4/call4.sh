# Session 17, call 4: the final tree (banded query blocks longest first within groups of heads
# on the tensor-core tier: plan::banded_groups) at every head dim, both masks, against the
# tree before (9a7749e, `attention_old`) causal, two rounds alternating; d = 128 at N = 2k, 4k
# and 16k; PyTorch beside; the forward, variants and tiers tests on the final tree.
source .device/gpu/prelude.sh; export WGPU_BACKEND=vulkan
tar xzf .device/bin.tgz -C .device
R=$OUT/r; mkdir -p $R; B=.device/bin
T0=$(date +%s); el() { echo "[$(( $(date +%s) - T0 )) s]"; }
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | tee $R/gpu.txt
nvidia-smi --query-gpu=timestamp,clocks.sm,clocks.mem,power.draw,temperature.gpu --format=csv -lms 250 > $R/clocks.csv 2>&1 &
CLK=$!
show() { echo "$2 $(grep -E "^\| NVIDIA|rror|panic|skip" $1 | cut -d'|' -f6,7,9,11,13,19 | tr -s ' ' | paste -sd';')"; }
A="--tokens 16384 --dtypes f16 --baseline off --kernels coop-matrix --runs 20 --warmup 5 --warmup-ms 300 --check-rows 8"
for round in 1 2; do echo "== round $round $(el)"
  timeout 90 $B/attention $A --seqs 8192 --causal both --dims 32,64,96,128,160,192,256 --json $R/new_$round.json > $R/new_$round.txt 2>&1; show $R/new_$round.txt new
  timeout 90 $B/attention_old $A --seqs 8192 --causal on --dims 32,64,96,128,160,192,256 --json $R/old_$round.json > $R/old_$round.txt 2>&1; show $R/old_$round.txt old
  timeout 90 $B/attention $A --seqs 2048,4096,16384 --causal on --dims 128 --json $R/newN_$round.json > $R/newN_$round.txt 2>&1; show $R/newN_$round.txt new
  timeout 90 $B/attention_old $A --seqs 2048,4096,16384 --causal on --dims 128 --json $R/oldN_$round.json > $R/oldN_$round.txt 2>&1; show $R/oldN_$round.txt old
done
echo "== torch $(el)"; timeout 90 python3 .device/py/torch_sdpa.py --seqs 8192 --dims 128,64 --dtypes f16 --causal both --backends flash,cudnn --json $R/torch_sdpa.json > $R/torch_sdpa.txt 2>&1; tail -8 $R/torch_sdpa.txt
kill $CLK
echo "== test forward $(el)"
timeout 60 $B/forward --test-threads=16 > $R/test-forward.txt 2>&1; echo "rc=$?"; grep -E "test result|panicked|FAILED|failed" $R/test-forward.txt | head -8
echo "== test variants $(el)"
timeout 120 $B/variants --test-threads=16 > $R/test-variants.txt 2>&1; echo "rc=$?"; grep -E "test result|panicked|FAILED|failed" $R/test-variants.txt | head -8
echo "== test tiers, all but every_coop_tile_candidate $(el)"
timeout 150 $B/tiers --test-threads=16 --skip every_coop_tile_candidate > $R/test-tiers.txt 2>&1; echo "rc=$?"; grep -E "test result|panicked|FAILED|failed" $R/test-tiers.txt | head -8
echo "== done $(el)"
tar czf $OUT/results.tgz -C $R . && rm -r $R
