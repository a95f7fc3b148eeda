source .device/gpu/prelude.sh; export WGPU_BACKEND=vulkan
tar xzf .device/bin.tgz -C .device
R=$OUT/r; mkdir -p $R; B=.device/bin
T0=$(date +%s); el() { echo "[$(( $(date +%s) - T0 )) s]"; }
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | tee $R/gpu.txt
timeout 60 $B/kernel_stats --dims 128 --dtypes f16 --kernels subgroup --decode > $R/stats_dec.txt 2>&1
grep -E "^== decode|egister|rror" $R/stats_dec.txt | head -4
D="--batch 8 --heads 32 --heads-kv 8 --dim 128 --dtype f16 --seq-q 1 --runs 20 --warmup-ms 150 --check-rows 1"
echo "== decode, plan $(el)"
timeout 100 $B/decode $D --layouts contiguous,paged --page-size 16 --kv 32768,131072 --tiles plan,portable --json $R/decode.json > $R/decode.txt 2>&1
grep -E "^\| [0-9]|rror|panic" $R/decode.txt
echo "== torch decode $(el)"
timeout 90 python3 .device/py/torch_decode.py --batch 8 --heads 32 --heads-kv 8 --dim 128 --kv 32768,131072 --json $R/torch_decode.json > $R/torch_decode.txt 2>&1
grep -E "sdpa|rror" $R/torch_decode.txt | head -8
echo "== decode, plan, again $(el)"
timeout 60 $B/decode $D --layouts contiguous,paged --page-size 16 --kv 32768,131072 --json $R/decode_again.json > $R/decode_again.txt 2>&1
grep -E "^\| [0-9]|rror|panic" $R/decode_again.txt
echo "== test kvcache $(el)"; timeout 150 $B/kvcache --test-threads=16 > $R/test-kvcache.txt 2>&1; echo "rc=$?"; grep -E "test result|panicked|FAILED" $R/test-kvcache.txt | head -5
echo "== serving $(el)"
timeout 200 $B/serving > $R/serving.txt 2>&1; echo rc=$?
tail -5 $R/serving.txt
echo "== explore: tiles and splits with 16-byte loads $(el)"
timeout 120 $B/decode $D --layouts contiguous --kv 32768,131072 --tiles sg:64/16/2,sg:128/16/4,sg:128/16/2,sg:32/16/4 --splits 0,12,48 > $R/explore.txt 2>&1
grep -E "^\| [0-9]|rror|panic" $R/explore.txt
echo "== done $(el)"
tar czf $OUT/results.tgz -C $R . && rm -r $R
