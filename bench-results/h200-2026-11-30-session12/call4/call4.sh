# Session 12, call 4: the suites on the H200 with the working tree of call 3 plus the tables
# that lead with longer key tiles where scores are in registers (tuning::COOP_REGISTERS_FIRST):
# tiers (every tensor-core tile of each way's table, both ways), variants, forward, kvcache.
source .device/gpu/prelude.sh; export WGPU_BACKEND=vulkan
tar xzf .device/bin.tgz -C .device
R=$OUT/r; mkdir -p $R; B=.device/bin
T0=$(date +%s); el() { echo "[$(( $(date +%s) - T0 )) s]"; }
timeout 30 $B/kernel_stats --kernels coop-matrix --dims 128 --dtypes f16 2>&1 | head -3
for t in tiers variants forward kvcache; do echo "== test $t $(el)"
timeout 420 $B/$t --test-threads=16 > $R/test-$t.txt 2>&1; echo "rc=$?"; grep -E "test result|panicked|FAILED|failed|SKIPPED" $R/test-$t.txt | head -8; done
echo "== done $(el)"
tar czf $OUT/results.tgz -C $R . && rm -r $R
