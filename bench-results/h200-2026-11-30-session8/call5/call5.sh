# Session 8, call 5: two tensor-core kernel changes against main (_n, 4a63ecf plus a decode-bench
# fix): _c1 = experiments/coop-banded-interior-copy.diff (banded tiles wholly inside the band take
# a copy of the score loop without the visibility test), _c3 = experiments/coop-loads-two-tiles-
# ahead.diff (K/V loaded two tiles ahead), _c13 = both. Then the tiers tests on _c13, and the
# KV-cache kernel in f32 (the bench now skips a cache larger than max_buffer_size).
source .device/gpu/prelude.sh; export WGPU_BACKEND=vulkan
tar xzf .device/bin.tgz -C .device
R=$OUT/r; mkdir -p $R; B=.device/bin
T0=$(date +%s); el() { echo "[$(( $(date +%s) - T0 )) s]"; }
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | tee $R/gpu.txt
A="--tokens 16384 --seqs 8192 --dtypes f16 --baseline off --kernels coop-matrix --runs 20 --warmup 5 --warmup-ms 300 --check-rows 8"
for round in 1 2; do for v in _n _c1 _c3 _c13; do echo "== attention$v round $round $(el)"
timeout 40 $B/attention$v $A --dims 128,64 --causal both --json $R/coop${v}_r$round.json > $R/coop${v}_r$round.txt 2>&1
grep -E "^\| NVIDIA|rror" $R/coop${v}_r$round.txt | cut -d'|' -f5-13; done; done
for v in _n _c1 _c3 _c13; do timeout 60 $B/kernel_stats$v --dims 64,128 --dtypes f16 --kernels coop-matrix > $R/stats_coop$v.txt 2>&1; echo "$v $(grep Register $R/stats_coop$v.txt | tr -s ' ' | tr '\n' ' ')"; done
echo "== test tiers_c13 $(el)"; timeout 150 $B/tiers_c13 --test-threads=16 > $R/test-tiers_c13.txt 2>&1; echo "rc=$?"; grep -E "test result|panicked|FAILED" $R/test-tiers_c13.txt | head -5
D="--batch 8 --heads 32 --heads-kv 8 --dim 128 --seq-q 1 --runs 20 --warmup-ms 200 --check-rows 1"
echo "== decode f32 $(el)"; timeout 100 $B/decode_n $D --dtype f32 --layouts contiguous,paged --kv 32768,65536,131072 --json $R/decode_f32.json > $R/decode_f32.txt 2>&1
echo "rc=$?"; grep -E "^\| [0-9]|rror|panic|SKIPPED" $R/decode_f32.txt
echo "== done $(el)"
tar czf $OUT/results.tgz -C $R . && rm -r $R
