# Session 16, call 4: the final tree (loads ahead through a function at d = 64, 160 and 192:
# plan::coop_load_in_function; its SPIR-V is call 3's vL at those head dims and abd2f1f's
# elsewhere) at every head dim, against abd2f1f's binary (`attention_old`, call 3's base) at
# d = 64, 160 and 192, two rounds alternating; PyTorch beside; decoding beside PyTorch (that
# kernel did not change); the forward, variants and tiers options tests.
source .device/gpu/prelude.sh; export WGPU_BACKEND=vulkan
tar xzf .device/bin.tgz -C .device
R=$OUT/r; mkdir -p $R; B=.device/bin
T0=$(date +%s); el() { echo "[$(( $(date +%s) - T0 )) s]"; }
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | tee $R/gpu.txt
nvidia-smi --query-gpu=timestamp,clocks.sm,clocks.mem,power.draw,temperature.gpu --format=csv -lms 250 > $R/clocks.csv 2>&1 &
CLK=$!
A="--tokens 16384 --seqs 8192 --dtypes f16 --baseline off --kernels coop-matrix --runs 20 --warmup 5 --warmup-ms 300 --check-rows 8 --causal both"
show() { echo "$2 $(grep -E "^\| NVIDIA|rror|panic|skip" $1 | cut -d'|' -f7,9,13,19 | tr -s ' ' | paste -sd';')"; }
for round in 1 2; do echo "== round $round $(el)"
  timeout 90 $B/attention $A --dims 32,64,96,128,160,192,256 --json $R/new_$round.json > $R/new_$round.txt 2>&1; show $R/new_$round.txt new
  timeout 60 $B/attention_old $A --dims 64,160,192 --json $R/old_$round.json > $R/old_$round.txt 2>&1; show $R/old_$round.txt old
done
echo "== torch $(el)"; timeout 90 python3 .device/py/torch_sdpa.py --seqs 8192 --dims 128,64 --dtypes f16 --causal both --backends flash,cudnn --json $R/torch_sdpa.json > $R/torch_sdpa.txt 2>&1; tail -8 $R/torch_sdpa.txt
echo "== decode $(el)"
timeout 90 $B/decode --batch 8 --heads 32 --heads-kv 8 --dim 128 --dtype f16 --seq-q 1 --runs 30 --warmup-ms 200 --check-rows 2 --layouts contiguous,paged --page-size 16 --kv 32768,131072 --json $R/decode.json > $R/decode.txt 2>&1; grep -E "^\| NVIDIA|rror|panic" $R/decode.txt | head -8
timeout 90 python3 .device/py/torch_decode.py --batch 8 --heads 32 --heads-kv 8 --dim 128 --kv 32768,131072 --json $R/torch_decode.json > $R/torch_decode.txt 2>&1; tail -6 $R/torch_decode.txt
kill $CLK
echo "== test forward $(el)"
timeout 60 $B/forward --test-threads=16 > $R/test-forward.txt 2>&1; echo "rc=$?"; grep -E "test result|panicked|FAILED|failed" $R/test-forward.txt | head -8
echo "== test variants $(el)"
timeout 120 $B/variants --test-threads=16 > $R/test-variants.txt 2>&1; echo "rc=$?"; grep -E "test result|panicked|FAILED|failed" $R/test-variants.txt | head -8
echo "== test tiers options_on_every_tier $(el)"
timeout 90 $B/tiers options_on_every_tier > $R/test-tiers-options.txt 2>&1; echo "rc=$?"; grep -E "test result|panicked|FAILED|failed" $R/test-tiers-options.txt | head -8
echo "== done $(el)"
tar czf $OUT/results.tgz -C $R . && rm -r $R
