source .device/gpu/prelude.sh; export WGPU_BACKEND=vulkan
R=$OUT/r; mkdir -p $R; B=.device/bin
T0=$(date +%s); el() { echo "[$(( $(date +%s) - T0 )) s]"; }
timeout 60 $B/kernel_stats_v2 --dims 128 --dtypes f16 --kernels coop-matrix --decode > $R/stats_decode_v2.txt 2>&1
grep -E "^== decode|Register|Shared|rror" $R/stats_decode_v2.txt | tail -3
D="--batch 8 --heads 32 --heads-kv 8 --dim 128 --dtype f16 --seq-q 1 --runs 20 --warmup-ms 150 --check-rows 1 --layouts contiguous,paged --page-size 16"
echo "== decode v2 $(el)"
timeout 80 $B/decode_v2 $D --kv 32768 --tiles plan,tc:32,tc:64,subgroup --json $R/decode_v2.json > $R/decode_v2.txt 2>&1
grep -E "^\| [0-9]|rror|panic" $R/decode_v2.txt
echo "== done $(el)"
tar czf $OUT/results.tgz -C $R . && rm -r $R
