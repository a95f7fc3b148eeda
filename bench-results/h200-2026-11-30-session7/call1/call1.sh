source .device/gpu/prelude.sh; export WGPU_BACKEND=vulkan
tar xzf .device/bin.tgz -C .device
R=$OUT/r; mkdir -p $R; B=.device/bin
T0=$(date +%s); el() { echo "[$(( $(date +%s) - T0 )) s]"; }
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | tee $R/gpu.txt
D="--batch 8 --heads 32 --heads-kv 8 --dim 128 --dtype f16 --seq-q 1 --runs 20 --warmup-ms 150 --check-rows 1"
echo "== decode old $(el)"
timeout 60 $B/decode_old $D --layouts contiguous,paged --page-size 16 --kv 32768,131072 --json $R/decode_old.json > $R/decode_old.txt 2>&1
grep -E "^\| [0-9]|rror|panic" $R/decode_old.txt
echo "== decode new $(el)"
timeout 60 $B/decode $D --layouts contiguous,paged --page-size 16 --kv 32768,131072 --json $R/decode.json > $R/decode.txt 2>&1
grep -E "^\| [0-9]|rror|panic" $R/decode.txt
echo "== torch decode $(el)"
timeout 90 python3 .device/py/torch_decode.py --batch 8 --heads 32 --heads-kv 8 --dim 128 --kv 32768,131072 --json $R/torch_decode.json > $R/torch_decode.txt 2>&1
grep -E "sdpa|rror" $R/torch_decode.txt | head -8
echo "== decode old, again $(el)"
timeout 60 $B/decode_old $D --layouts contiguous --kv 32768,131072 --json $R/decode_old2.json > $R/decode_old2.txt 2>&1
grep -E "^\| [0-9]|rror|panic" $R/decode_old2.txt
echo "== decode new, again $(el)"
timeout 60 $B/decode $D --layouts contiguous --kv 32768,131072 --json $R/decode2.json > $R/decode2.txt 2>&1
grep -E "^\| [0-9]|rror|panic" $R/decode2.txt
echo "== decode new, tiles and splits $(el)"
timeout 120 $B/decode $D --layouts contiguous --kv 32768,131072 --splits 12,24 --tiles sg:64/16/4,sg:64/16/8,sg:32/16/4,sg:128/16/4 --json $R/explore.json > $R/explore.txt 2>&1
grep -E "^\| [0-9]|rror|panic" $R/explore.txt
echo "== decode new, tune $(el)"
timeout 150 $B/decode $D --layouts contiguous,paged --page-size 16 --kv 32768,131072 --tune --json $R/tune.json > $R/tune.txt 2>&1
grep -E "^\| [0-9]|trial|rror|panic" $R/tune.txt | head -40
echo "== stats $(el)"
timeout 60 $B/kernel_stats --dims 128 --dtypes f16 --kernels subgroup --decode > $R/stats_dec.txt 2>&1
timeout 60 $B/kernel_stats_old --dims 128 --dtypes f16 --kernels subgroup --decode > $R/stats_dec_old.txt 2>&1
timeout 60 $B/kernel_stats --dims 64,128 --dtypes f16 --kernels coop-matrix > $R/stats_coop.txt 2>&1
grep -iE "regist|decode|coop" $R/stats_dec.txt $R/stats_dec_old.txt $R/stats_coop.txt | head -20
A="--tokens 16384 --seqs 8192 --dtypes f16 --baseline off --kernels coop-matrix --runs 20 --warmup 5 --warmup-ms 300 --check-rows 8"
for v in _old "" _old ""; do echo "== attention$v $(el)"
timeout 40 $B/attention$v $A --dims 128,64 --causal both --json $R/coop$v.json > $R/coop$v.txt 2>&1
grep -E "^\| NVIDIA|rror" $R/coop$v.txt | cut -d'|' -f6-13; done
echo "== test kvcache $(el)"; timeout 100 $B/kvcache --test-threads=16 > $R/test-kvcache.txt 2>&1; echo "rc=$?"; grep -E "test result|panicked|FAILED" $R/test-kvcache.txt | head -5
echo "== test tiers $(el)"; timeout 150 $B/tiers --test-threads=16 > $R/test-tiers.txt 2>&1; echo "rc=$?"; grep -E "test result|panicked|FAILED" $R/test-tiers.txt | head -5
echo "== done $(el)"
tar czf $OUT/results.tgz -C $R . && rm -r $R
