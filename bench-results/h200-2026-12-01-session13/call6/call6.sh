# Session 13, call 6: staggered staging with one K/V tile and scores in registers (the next
# tile's K rows stored after every subgroup's Q K^T, its V rows after every P V; *_stg) against
# b796cda (attention), every head dim, two rounds alternating; then the suites on the staggered
# build: tiers (whole), forward, variants. Logs straight to $OUT.
source .device/gpu/prelude.sh; export WGPU_BACKEND=vulkan
tar xzf .device/bin.tgz -C .device
R=$OUT; B=.device/bin
T0=$(date +%s); el() { echo "[$(( $(date +%s) - T0 )) s]"; }
timeout 40 $B/kernel_stats_stg --kernels coop-matrix --dims 64,96,128,160,192,256 --dtypes f16 2>&1 | grep -E "^== |Register"
A="--tokens 16384 --seqs 8192 --dtypes f16 --baseline off --kernels coop-matrix --runs 20 --warmup 5 --warmup-ms 300 --check-rows 8 --causal both"
for round in 1 2; do for v in _stg ""; do echo "== attention$v round $round $(el)"
timeout 60 $B/attention$v $A --dims 64,96,128,160,192,256 > $R/plan${v}_r$round.txt 2>&1
grep -E "^\| NVIDIA|rror|panic" $R/plan${v}_r$round.txt | cut -d'|' -f6-15; done; done
echo "== test tiers $(el)"
timeout 345 $B/tiers_stg --test-threads=16 > $R/test-tiers.txt 2>&1; echo "rc=$?"; grep -E "^test |test result|panicked|FAILED|failed" $R/test-tiers.txt | head -20
for t in forward variants; do echo "== test $t $(el)"
timeout 60 $B/${t}_stg --test-threads=16 > $R/test-$t.txt 2>&1; echo "rc=$?"; grep -E "test result|panicked|FAILED|failed" $R/test-$t.txt | head -8; done
echo "== done $(el)"
