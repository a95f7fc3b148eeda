# Session 12, call 2: why the element probe of HEAD (plus the working tree of call 1 and a probe
# that reports its reason) turns scores in registers off on the H200. `*_force` binaries print
# the probe's result and per-lane words, and use scores in registers regardless (the tests check
# their results against the oracle); with them, the tile sweep of call 1 in registers.
source .device/gpu/prelude.sh; export WGPU_BACKEND=vulkan
tar xzf .device/bin.tgz -C .device
R=$OUT/r; mkdir -p $R; B=.device/bin
T0=$(date +%s); el() { echo "[$(( $(date +%s) - T0 )) s]"; }
echo "== kernel_stats $(el)"
timeout 60 $B/kernel_stats --kernels coop-matrix --dims 128 --dtypes f16 > $R/kernel_stats.txt 2>&1; head -4 $R/kernel_stats.txt
timeout 60 $B/kernel_stats_force --kernels coop-matrix --dims 128,64 --dtypes f16 --tiles 128x32x32x8,128x64x32x8,64x64x32x4,64x32x32x4,128x32x32x4,128x16x32x8 > $R/kernel_stats_force.txt 2>&1; grep -E "PROBE|^== |Register|rror" $R/kernel_stats_force.txt | head -30
A="--tokens 16384 --seqs 8192 --dtypes f16 --baseline off --kernels coop-matrix --runs 20 --warmup 5 --warmup-ms 300 --check-rows 8 --causal both"
echo "== attention_force $(el)"
timeout 150 $B/attention_force $A --dims 128,64 --json $R/attention_force.json > $R/attention_force.txt 2>&1
grep -E "^\| NVIDIA|rror|panic|registers" $R/attention_force.txt | cut -d'|' -f6-15 | tail -6
echo "== sweep d128 $(el)"
timeout 200 $B/attention_force $A --dims 128 --tiles 128x32x32x8,128x64x32x8,64x64x32x4,64x32x32x4,128x32x32x4,128x16x32x4 --json $R/sweep128.json > $R/sweep128.txt 2>&1
grep -E "^\| NVIDIA|rror|panic|skip" $R/sweep128.txt | cut -d'|' -f4-15 | tail -14
echo "== done $(el)"
tar czf $OUT/results.tgz -C $R . && rm -r $R
