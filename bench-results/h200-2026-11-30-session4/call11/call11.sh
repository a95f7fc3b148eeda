source .device/gpu/prelude.sh; export WGPU_BACKEND=vulkan
R=$OUT/r; mkdir -p $R; B=.device/bin
T0=$(date +%s); el() { echo "[$(( $(date +%s) - T0 )) s]"; }
D="--batch 8 --heads 32 --heads-kv 8 --dim 128 --dtype f16 --runs 8 --warmup-ms 100 --check-rows 1 --layouts contiguous,paged --page-size 16"
for sq in 4 16 64 256; do
echo "== seq_q $sq $(el)"
timeout 70 $B/decode_tc $D --seq-q $sq --kv 8192 --tiles coop,tc:32,subgroup > $R/multi_$sq.txt 2>&1
grep -E "^\| [0-9]|rror|panic" $R/multi_$sq.txt
done
echo "== done $(el)"
tar czf $OUT/results.tgz -C $R . && rm -r $R
