# Session 17, call 5: the final tree (call 4's, and each group's blocks ascending where only the
# band's left side is bounded) against the tree before (9a7749e, `attention_old`), causal,
# alternating new, old, new; the new GPU test of groups of heads, and the forward, variants and
# tiers options tests on the final tree.
source .device/gpu/prelude.sh; export WGPU_BACKEND=vulkan
tar xzf .device/bin.tgz -C .device
R=$OUT/r; mkdir -p $R; B=.device/bin
T0=$(date +%s); el() { echo "[$(( $(date +%s) - T0 )) s]"; }
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | tee $R/gpu.txt
nvidia-smi --query-gpu=timestamp,clocks.sm,clocks.mem,power.draw,temperature.gpu --format=csv -lms 250 > $R/clocks.csv 2>&1 &
CLK=$!
show() { echo "$2 $(grep -E "^\| NVIDIA|rror|panic|skip" $1 | cut -d'|' -f6,7,9,11,13,19 | tr -s ' ' | paste -sd';')"; }
A="--tokens 16384 --dtypes f16 --baseline off --kernels coop-matrix --runs 20 --warmup 5 --warmup-ms 300 --check-rows 8 --causal on"
for v in new_1 old_1 new_2; do echo "== $v $(el)"
  if [ ${v%_*} = new ]; then X=$B/attention; else X=$B/attention_old; fi
  timeout 90 $X $A --seqs 8192 --dims 32,64,96,128,160,192,256 --json $R/$v.json > $R/$v.txt 2>&1; show $R/$v.txt $v
  timeout 90 $X $A --seqs 2048,4096 --dims 128 --json $R/N$v.json > $R/N$v.txt 2>&1; show $R/N$v.txt $v
done
kill $CLK
echo "== test tiers banded_groups_of_heads_on_the_tensor_cores $(el)"
timeout 90 $B/tiers banded_groups --nocapture > $R/test-tiers-banded.txt 2>&1; echo "rc=$?"; grep -E "test result|panicked|FAILED|failed|SKIPPED" $R/test-tiers-banded.txt | head -8
echo "== test tiers options_on_every_tier $(el)"
timeout 90 $B/tiers options_on_every_tier > $R/test-tiers-options.txt 2>&1; echo "rc=$?"; grep -E "test result|panicked|FAILED|failed" $R/test-tiers-options.txt | head -8
echo "== test forward $(el)"
timeout 60 $B/forward --test-threads=16 > $R/test-forward.txt 2>&1; echo "rc=$?"; grep -E "test result|panicked|FAILED|failed" $R/test-forward.txt | head -8
echo "== test variants $(el)"
timeout 120 $B/variants --test-threads=16 > $R/test-variants.txt 2>&1; echo "rc=$?"; grep -E "test result|panicked|FAILED|failed" $R/test-variants.txt | head -8
echo "== done $(el)"
tar czf $OUT/results.tgz -C $R . && rm -r $R
