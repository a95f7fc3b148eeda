source .device/gpu/prelude.sh; export WGPU_BACKEND=vulkan
R=$OUT/r; mkdir -p $R; B=.device/bin
T0=$(date +%s); el() { echo "[$(( $(date +%s) - T0 )) s]"; }
timeout 60 $B/kernel_stats --dims 128 --dtypes f16 --kernels coop-matrix --decode > $R/stats_decode.txt 2>&1
grep -E "^== |Register|Shared" $R/stats_decode.txt | tail -3
D="--batch 8 --heads 32 --heads-kv 8 --dim 128 --dtype f16 --runs 10 --warmup-ms 100 --check-rows 1 --layouts contiguous"
for sq in 2 4 16 64; do
echo "== seq_q $sq $(el)"
timeout 60 $B/decode $D --seq-q $sq --kv 8192,32768 --tiles plan,portable,subgroup,sg:64/32/4 > $R/multi_$sq.txt 2>&1
grep -E "^\| [0-9]|rror|panic" $R/multi_$sq.txt
done
echo "== serving $(el)"
timeout 200 $B/serving > $R/serving.txt 2>&1; echo rc=$?
tail -12 $R/serving.txt
echo "== done $(el)"
tar czf $OUT/results.tgz -C $R . && rm -r $R
