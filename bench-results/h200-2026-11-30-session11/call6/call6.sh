# Session 11, call 6: with scores in registers the kernel has room for two K/V tiles in
# workgroup memory, and each key tile needs one workgroup barrier instead of two (the tree of
# 1fb3519 with experiments/kv-double-buffer.diff: two K/V tiles wherever scores are in registers). The same binary with --coop-elements
# off is the workgroup-memory path. d = 64 / 128 and the other head dims; registers; tiers.
source .device/gpu/prelude.sh; export WGPU_BACKEND=vulkan
tar xzf .device/bin.tgz -C .device
R=$OUT/r; mkdir -p $R; B=.device/bin
T0=$(date +%s); el() { echo "[$(( $(date +%s) - T0 )) s]"; }
A="--tokens 16384 --seqs 8192 --dtypes f16 --baseline off --kernels coop-matrix --runs 20 --warmup 5 --warmup-ms 300 --check-rows 8 --causal both"
for round in 1 2; do for v in auto off; do echo "== attention $v round $round $(el)"
timeout 150 $B/attention $A --dims 128,64 --coop-elements $v --json $R/attention_${v}_r$round.json > $R/attention_${v}_r$round.txt 2>&1
grep -E "^\| NVIDIA|rror|panic" $R/attention_${v}_r$round.txt | cut -d'|' -f6-15 | tail -6; done; done
echo "== attention other dims auto $(el)"
timeout 150 $B/attention $A --dims 32,96,160,192,256 --coop-elements auto --json $R/attention_dims_auto.json > $R/attention_dims_auto.txt 2>&1
grep -E "^\| NVIDIA|rror|panic" $R/attention_dims_auto.txt | cut -d'|' -f6-15 | tail -10
echo "== kernel_stats $(el)"; timeout 60 $B/kernel_stats --kernels coop-matrix --dims 64,128,256 --dtypes f16 > $R/kernel_stats.txt 2>&1; grep -E "^== |Register" $R/kernel_stats.txt | head -20
echo "== test tiers $(el)"; timeout 330 $B/tiers --test-threads=16 > $R/test-tiers.txt 2>&1; echo "rc=$?"; grep -E "test result|panicked|FAILED|failed" $R/test-tiers.txt | head -8
echo "== done $(el)"
tar czf $OUT/results.tgz -C $R . && rm -r $R
