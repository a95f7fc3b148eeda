# Session 12, call 8 (the last of the session's device time; logs written straight to $OUT so
# that a cut leaves them): the final tree (fast loads at d = 64-128 with scores in registers,
# the probe's ran bit, the review mends): the plan at every head dim, then the suites that run
# the tensor-core kernel: variants, forward, tiers without its every-candidate test, then that
# test alone.
source .device/gpu/prelude.sh; export WGPU_BACKEND=vulkan
tar xzf .device/bin.tgz -C .device
R=$OUT; B=.device/bin
T0=$(date +%s); el() { echo "[$(( $(date +%s) - T0 )) s]"; }
A="--tokens 16384 --seqs 8192 --dtypes f16 --baseline off --kernels coop-matrix --runs 20 --warmup 5 --warmup-ms 300 --check-rows 8 --causal both"
echo "== plan $(el)"
timeout 100 $B/attention $A --dims 32,64,96,128,160,192,256 --json $R/plan.json > $R/plan.txt 2>&1
grep -E "^\| NVIDIA|registers|panic|FAIL" $R/plan.txt | cut -d'|' -f6-15
for t in variants forward; do echo "== test $t $(el)"
timeout 90 $B/$t --test-threads=16 > $R/test-$t.txt 2>&1; echo "rc=$?"; grep -E "test result|panicked|FAILED|failed" $R/test-$t.txt | head -8; done
echo "== test tiers without every_coop_tile_candidate $(el)"
timeout 150 $B/tiers --test-threads=16 --skip every_coop_tile_candidate > $R/test-tiers.txt 2>&1; echo "rc=$?"; grep -E "test result|panicked|FAILED|failed" $R/test-tiers.txt | head -8
echo "== test tiers every_coop_tile_candidate $(el)"
timeout 200 $B/tiers --test-threads=16 every_coop_tile_candidate > $R/test-tiers-candidates.txt 2>&1; echo "rc=$?"; grep -E "test result|panicked|FAILED|failed" $R/test-tiers-candidates.txt | head -8
echo "== done $(el)"
