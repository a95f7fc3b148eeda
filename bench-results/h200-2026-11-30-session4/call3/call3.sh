source .device/gpu/prelude.sh; export WGPU_BACKEND=vulkan
R=$OUT/r; mkdir -p $R; B=.device/bin
T0=$(date +%s); el() { echo "[$(( $(date +%s) - T0 )) s]"; }
timeout 60 $B/kernel_stats --dims 128 --dtypes f16 --kernels coop-matrix --tiles 64x32x32x4,64x16x32x4,64x64x32x4,128x32x32x8 > $R/stats_coop64.txt 2>&1
grep -E "^== |Register|Shared" $R/stats_coop64.txt
echo "== coop tiles d=128 $(el)"
timeout 120 $B/attention --tokens 16384 --seqs 8192 --dims 128 --dtypes f16 --causal both --baseline off --kernels coop-matrix --tiles 128x32x32x8,64x32x32x4,64x16x32x4,64x64x32x4,128x32x32x8 --runs 10 --warmup 5 --check-rows 4 --json $R/coop_tiles.json > $R/coop_tiles.txt 2>&1
grep -E "^\| NVIDIA|rror" $R/coop_tiles.txt | cut -d'|' -f8-13
D="--batch 8 --heads 32 --heads-kv 8 --dim 128 --dtype f16 --seq-q 1 --runs 20 --warmup-ms 150 --check-rows 1"
TL="portable,sg:128/16/4,sg:128/16/8,sg:64/16/4,sg:64/16/8,sg:256/16/4,sg:128/8/4,sg:128/32/8"
echo "== decode 32k $(el)"
timeout 100 $B/decode $D --kv 32768 --layouts contiguous,paged --page-size 16 --tiles $TL --json $R/decode_32k.json > $R/decode_32k.txt 2>&1
grep -E "^\| [0-9]|rror|panic" $R/decode_32k.txt
echo "== decode 128k $(el)"
timeout 120 $B/decode $D --kv 131072 --layouts contiguous,paged --page-size 16 --tiles $TL --json $R/decode_128k.json > $R/decode_128k.txt 2>&1
grep -E "^\| [0-9]|rror|panic" $R/decode_128k.txt
echo "== decode splits and page 256 $(el)"
timeout 60 $B/decode $D --kv 32768 --layouts contiguous,paged --page-size 256 --tiles sg:128/16/4 --splits 0,16,64,128 > $R/decode_32k_splits.txt 2>&1
grep -E "^\| [0-9]|rror|panic" $R/decode_32k_splits.txt
timeout 60 $B/decode $D --kv 131072 --layouts paged --page-size 256 --tiles portable,sg:128/16/4 > $R/decode_128k_p256.txt 2>&1
grep -E "^\| [0-9]|rror|panic" $R/decode_128k_p256.txt
echo "== done $(el)"
tar czf $OUT/results.tgz -C $R . && rm -r $R
