source .device/gpu/prelude.sh; export WGPU_BACKEND=vulkan
R=$OUT/r; mkdir -p $R; B=.device/bin
T0=$(date +%s); el() { echo "[$(( $(date +%s) - T0 )) s]"; }
D="--batch 8 --heads 32 --heads-kv 8 --dim 128 --dtype f16 --seq-q 1 --runs 20 --warmup-ms 150 --check-rows 1 --layouts contiguous"
TL="plan,sg:64/32/4,sg:128/32/4,sg:64/32/8,sg:32/16/4,sg:32/16/8,sg:64/16/2,sg:32/32/8,plan"
for kv in 32768 131072; do
echo "== $kv $(el)"
timeout 100 $B/decode $D --kv $kv --tiles $TL --json $R/sweep_$kv.json > $R/sweep_$kv.txt 2>&1
grep -E "^\| [0-9]|rror|panic" $R/sweep_$kv.txt
done
echo "== d64 and group 8 $(el)"
timeout 60 $B/decode --batch 8 --heads 32 --heads-kv 8 --dim 64 --dtype f16 --seq-q 1 --runs 20 --warmup-ms 150 --check-rows 1 --layouts contiguous --kv 32768 --tiles plan,portable > $R/d64.txt 2>&1
grep -E "^\| [0-9]|rror|panic" $R/d64.txt
timeout 60 $B/decode --batch 8 --heads 64 --heads-kv 8 --dim 128 --dtype f16 --seq-q 1 --runs 20 --warmup-ms 150 --check-rows 1 --layouts contiguous --kv 32768 --tiles plan,portable > $R/g8.txt 2>&1
grep -E "^\| [0-9]|rror|panic" $R/g8.txt
timeout 60 $B/decode --batch 8 --heads 32 --heads-kv 8 --dim 128 --dtype f32 --seq-q 1 --runs 20 --warmup-ms 150 --check-rows 1 --layouts contiguous --kv 32768 --tiles plan,portable > $R/f32.txt 2>&1
grep -E "^\| [0-9]|rror|panic" $R/f32.txt
echo "== done $(el)"
tar czf $OUT/results.tgz -C $R . && rm -r $R
