# Session 8, call 2. _n: the one-register-set KV-cache kernel with 8 keys per lane as the plan's
# tiles and 8 workgroups per SM in the split rule (the working tree of this commit); _e1: that plus
# experiments/coop-two-score-chains.diff (tensor-core kernel: Q K^T as two chains of products).
source .device/gpu/prelude.sh; export WGPU_BACKEND=vulkan
tar xzf .device/bin.tgz -C .device
R=$OUT/r; mkdir -p $R; B=.device/bin
T0=$(date +%s); el() { echo "[$(( $(date +%s) - T0 )) s]"; }
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | tee $R/gpu.txt
timeout 60 $B/kernel_stats_n --dims 128 --dtypes f16,f32 --kernels subgroup --decode > $R/stats_decode_n.txt 2>&1
grep -E "== decode|Register" $R/stats_decode_n.txt | head -8
D="--batch 8 --heads 32 --heads-kv 8 --dim 128 --dtype f16 --seq-q 1 --runs 20 --warmup-ms 150 --check-rows 1"
for round in 1 2; do echo "== decode_n round $round $(el)"
timeout 60 $B/decode_n $D --layouts contiguous,paged --page-size 16 --kv 32768,131072 --json $R/decode_n_r$round.json > $R/decode_n_r$round.txt 2>&1
grep -E "^\| [0-9]|rror|panic" $R/decode_n_r$round.txt; done
echo "== torch $(el)"; timeout 120 python3 .device/py/torch_decode.py --batch 8 --heads 32 --heads-kv 8 --dim 128 --kv 32768,131072 --json $R/torch_decode.json > $R/torch_decode.txt 2>&1; tail -4 $R/torch_decode.txt
echo "== decode_n 32k sweep $(el)"
timeout 150 $B/decode_n $D --layouts contiguous --kv 32768 --splits 14,15,16,17,20,33 --tiles plan,sg:32/16/8,sg:128/16/8 --json $R/sweep32k_n.json > $R/sweep32k_n.txt 2>&1
grep -E "^\| [0-9]|rror|panic" $R/sweep32k_n.txt
echo "== decode_n 128k sg:32 $(el)"
timeout 100 $B/decode_n $D --layouts contiguous --kv 131072 --splits 33,48,66 --tiles sg:32/16/8 --json $R/sweep128k_n.json > $R/sweep128k_n.txt 2>&1
grep -E "^\| [0-9]|rror|panic" $R/sweep128k_n.txt
A="--tokens 16384 --seqs 8192 --dtypes f16 --baseline off --kernels coop-matrix --runs 20 --warmup 5 --warmup-ms 300 --check-rows 8"
for round in 1 2; do for v in _n _e1; do echo "== attention$v round $round $(el)"
timeout 40 $B/attention$v $A --dims 128,64 --causal both --json $R/coop${v}_r$round.json > $R/coop${v}_r$round.txt 2>&1
grep -E "^\| NVIDIA|rror" $R/coop${v}_r$round.txt | cut -d'|' -f6-13; done; done
for v in _n _e1; do timeout 60 $B/kernel_stats$v --dims 64,128 --dtypes f16 --kernels coop-matrix > $R/stats_coop$v.txt 2>&1; done
grep -E "Register|==" $R/stats_coop_n.txt $R/stats_coop_e1.txt | head
echo "== test kvcache_n $(el)"; timeout 100 $B/kvcache_n --test-threads=16 > $R/test-kvcache_n.txt 2>&1; echo "rc=$?"; grep -E "test result|panicked|FAILED" $R/test-kvcache_n.txt | head -5
echo "== test tiers_e1 $(el)"; timeout 120 $B/tiers_e1 --test-threads=16 > $R/test-tiers_e1.txt 2>&1; echo "rc=$?"; grep -E "test result|panicked|FAILED" $R/test-tiers_e1.txt | head -5
echo "== serving_n $(el)"; timeout 120 $B/serving_n > $R/serving_n.txt 2>&1; echo rc=$?; tail -6 $R/serving_n.txt
echo "== done $(el)"
tar czf $OUT/results.tgz -C $R . && rm -r $R
