source .device/gpu/prelude.sh; export WGPU_BACKEND=vulkan
R=$OUT/r; mkdir -p $R; B=.device/bin
T0=$(date +%s); el() { echo "[$(( $(date +%s) - T0 )) s]"; }
timeout 60 $B/kernel_stats --dims 128 --dtypes f16 --kernels coop-matrix --decode > $R/stats_decode.txt 2>&1
grep -E "^== decode|Register|Shared|rror" $R/stats_decode.txt | tail -4
echo "== tests kvcache $(el)"
timeout 120 $B/kvcache --test-threads=8 > $R/test-kvcache.txt 2>&1; echo "rc=$?"; grep -E "test result|panicked|FAILED|^test " $R/test-kvcache.txt | head -20
D="--batch 8 --heads 32 --heads-kv 8 --dim 128 --dtype f16 --seq-q 1 --runs 20 --warmup-ms 150 --check-rows 1 --layouts contiguous,paged --page-size 16"
for kv in 32768 131072; do
echo "== decode $kv $(el)"
timeout 80 $B/decode $D --kv $kv --tiles plan,tc:32,tc:64,subgroup,plan --json $R/decode_$kv.json > $R/decode_$kv.txt 2>&1
grep -E "^\| [0-9]|rror|panic" $R/decode_$kv.txt
done
echo "== done $(el)"
tar czf $OUT/results.tgz -C $R . && rm -r $R
