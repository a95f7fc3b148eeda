# Session 8, call 8: the tensor-core kernel with its two copies of the score loop as one function
# called with a constant flag (_d, the working tree after 943127f) against 943127f (_h); then the
# tiers tests on _d.
source .device/gpu/prelude.sh; export WGPU_BACKEND=vulkan
tar xzf .device/bin.tgz -C .device
R=$OUT/r; mkdir -p $R; B=.device/bin
T0=$(date +%s); el() { echo "[$(( $(date +%s) - T0 )) s]"; }
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | tee $R/gpu.txt
A="--tokens 16384 --seqs 8192 --dtypes f16 --baseline off --kernels coop-matrix --runs 20 --warmup 5 --warmup-ms 300 --check-rows 8"
for round in 1 2; do for v in _h _d; do echo "== attention$v round $round $(el)"
timeout 40 $B/attention$v $A --dims 128,64 --causal both --json $R/coop${v}_r$round.json > $R/coop${v}_r$round.txt 2>&1
grep -E "^\| NVIDIA|rror" $R/coop${v}_r$round.txt | cut -d'|' -f5-13; done; done
for v in _h _d; do for c in "" --causal; do timeout 60 $B/kernel_stats$v --dims 64,128 --dtypes f16 --kernels coop-matrix $c > $R/stats_coop$v$c.txt 2>&1; echo "$v $c $(grep Register $R/stats_coop$v$c.txt | tr -s ' ' | tr '\n' ' ')"; done; done
echo "== test tiers_d $(el)"; timeout 150 $B/tiers_d --test-threads=16 > $R/test-tiers_d.txt 2>&1; echo "rc=$?"; grep -E "test result|panicked|FAILED" $R/test-tiers_d.txt | head -5
echo "== done $(el)"
tar czf $OUT/results.tgz -C $R . && rm -r $R
