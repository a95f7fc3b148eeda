source .device/gpu/prelude.sh; export WGPU_BACKEND=vulkan
R=$OUT/r; mkdir -p $R; B=.device/bin
T0=$(date +%s); el() { echo "[$(( $(date +%s) - T0 )) s]"; }
D="--batch 8 --heads 32 --heads-kv 8 --dim 128 --dtype f16 --seq-q 1 --runs 20 --warmup-ms 150 --check-rows 1 --layouts contiguous,paged --page-size 16"
TL="sg:64/16/4,sg:64/8/4,sg:128/16/4,sg:64/8/8,sg:64/16/4,sg:64/8/4"
for v in decode_v2 decode; do
for kv in 32768 131072; do
echo "== $v $kv $(el)"
timeout 100 $B/$v $D --kv $kv --tiles $TL --json $R/${v}_$kv.json > $R/${v}_$kv.txt 2>&1
grep -E "^\| [0-9]|rror|panic" $R/${v}_$kv.txt
done; done
echo "== splits $(el)"
timeout 100 $B/decode $D --kv 32768 --tiles sg:64/8/4 --splits 0,12,24 > $R/splits_32k.txt 2>&1
grep -E "^\| [0-9]|rror|panic" $R/splits_32k.txt
timeout 100 $B/decode $D --kv 131072 --tiles sg:64/8/4 --splits 0,48 > $R/splits_128k.txt 2>&1
grep -E "^\| [0-9]|rror|panic" $R/splits_128k.txt
echo "== done $(el)"
tar czf $OUT/results.tgz -C $R . && rm -r $R
