source .device/gpu/prelude.sh; export WGPU_BACKEND=vulkan
tar xzf .device/bin.tgz -C .device
R=$OUT/r; mkdir -p $R; B=.device/bin
T0=$(date +%s); el() { echo "[$(( $(date +%s) - T0 )) s]"; }
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | tee $R/gpu.txt
A="--tokens 16384 --seqs 8192 --dtypes f16 --baseline off --kernels coop-matrix --runs 20 --warmup 5 --warmup-ms 300 --check-rows 8"
for v in _old "" _old ""; do echo "== attention$v $(el)"
timeout 40 $B/attention$v $A --dims 128,64 --causal both --json $R/coop$v.json > $R/coop$v.txt 2>&1
grep -E "^\| NVIDIA|rror" $R/coop$v.txt | cut -d'|' -f6-13; done
timeout 60 $B/kernel_stats --dims 64,128 --dtypes f16 --kernels coop-matrix > $R/stats_coop.txt 2>&1
timeout 60 $B/kernel_stats_old --dims 64,128 --dtypes f16 --kernels coop-matrix > $R/stats_coop_old.txt 2>&1
grep -E "Register|==" $R/stats_coop.txt $R/stats_coop_old.txt | head
D="--batch 8 --heads 32 --heads-kv 8 --dim 128 --dtype f16 --seq-q 1 --runs 20 --warmup-ms 150 --check-rows 1"
echo "== decode tiles and splits $(el)"
timeout 150 $B/decode_old $D --layouts contiguous --kv 32768,131072 --splits 8,12,16,24 --tiles plan,sg:64/16/8,sg:64/32/8,sg:64/32/4,sg:128/32/8,sg:32/16/8 --json $R/explore.json > $R/explore.txt 2>&1
grep -E "^\| [0-9]|rror|panic" $R/explore.txt
echo "== decode tune $(el)"
timeout 120 $B/decode_old $D --layouts contiguous,paged --page-size 16 --kv 32768,131072 --tune --json $R/tune.json > $R/tune.txt 2>&1
grep -E "^\| [0-9]|trial|rror|panic" $R/tune.txt | head -40
echo "== test tiers $(el)"; timeout 150 $B/tiers --test-threads=16 > $R/test-tiers.txt 2>&1; echo "rc=$?"; grep -E "test result|panicked|FAILED" $R/test-tiers.txt | head -5
echo "== done $(el)"
tar czf $OUT/results.tgz -C $R . && rm -r $R
