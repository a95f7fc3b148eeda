source .device/gpu/prelude.sh; export WGPU_BACKEND=vulkan
R=$OUT/r; mkdir -p $R; B=.device/bin
T0=$(date +%s); el() { echo "[$(( $(date +%s) - T0 )) s]"; }
timeout 60 $B/kernel_stats --dims 128 --dtypes f16 --kernels coop-matrix --decode > $R/stats_decode.txt 2>&1
grep -E "^== |Register|Shared" $R/stats_decode.txt | tail -3
D="--batch 8 --heads 32 --heads-kv 8 --dim 128 --dtype f16 --seq-q 1 --layouts contiguous,paged --page-size 16 --runs 20 --warmup-ms 150 --check-rows 1"
TL="plan,portable,sg:128/16/1,sg:128/16/2,sg:128/16/4,sg:128/8/1,sg:128/8/2,sg:128/32/2,sg:128/32/4,sg:256/16/2,sg:64/16/2,sg:256/16/1,sg:128/4/1"
echo "== decode 32k $(el)"
timeout 120 $B/decode $D --kv 32768 --tiles $TL --json $R/decode_32k.json > $R/decode_32k.txt 2>&1
grep -E "^\| [0-9]|rror|panic" $R/decode_32k.txt
echo "== decode 128k $(el)"
timeout 150 $B/decode $D --kv 131072 --tiles $TL --json $R/decode_128k.json > $R/decode_128k.txt 2>&1
grep -E "^\| [0-9]|rror|panic" $R/decode_128k.txt
echo "== test kvcache $(el)"; timeout 150 $B/kvcache --test-threads=16 > $R/test-kvcache.txt 2>&1; echo "rc=$?"; grep -E "test result|panicked|FAILED" $R/test-kvcache.txt | head -5
echo "== done $(el)"
tar czf $OUT/results.tgz -C $R . && rm -r $R
