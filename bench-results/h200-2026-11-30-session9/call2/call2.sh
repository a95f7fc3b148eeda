# Session 9, call 2: _c (the combine loading 8 parts per thread at once, each thread with its own
# running max; kernel_stats takes --decode-heads-kv) against _m (main, 820c926), two rounds; then
# tiles of the subgroup KV-cache kernel for plain multi-head decode (one row per KV head) and
# for 4 rows, with their register counts; the kvcache tests on _c.
source .device/gpu/prelude.sh; export WGPU_BACKEND=vulkan
tar xzf .device/bin.tgz -C .device
R=$OUT/r; mkdir -p $R; B=.device/bin
T0=$(date +%s); el() { echo "[$(( $(date +%s) - T0 )) s]"; }
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | tee $R/gpu.txt
MT=plan,sg:64/4/8,sg:64/8/2,sg:64/8/4,sg:64/8/8,sg:64/16/4,sg:64/16/8,sg:32/8/4,sg:128/8/4
GT=plan,sg:64/32/8,sg:64/16/4,sg:64/32/4,sg:128/16/8
timeout 60 $B/kernel_stats_c --dims 128 --dtypes f16 --kernels subgroup --decode --decode-heads-kv 32 --decode-tiles $MT > $R/stats_mha.txt 2>&1; grep -E "== decode|Register" $R/stats_mha.txt | paste - - | tail -9
timeout 60 $B/kernel_stats_c --dims 128 --dtypes f16 --kernels subgroup --decode --decode-heads-kv 8 --decode-tiles $GT > $R/stats_gqa.txt 2>&1; grep -E "== decode|Register" $R/stats_gqa.txt | paste - - | tail -5
echo "== torch $(el)"; timeout 120 python3 .device/py/torch_decode.py --batch 8 --heads 32 --heads-kv 8 --dim 128 --kv 32768,131072 --json $R/torch_decode.json > $R/torch_decode.txt 2>&1; tail -4 $R/torch_decode.txt
D="--batch 8 --heads 32 --heads-kv 8 --dim 128 --dtype f16 --seq-q 1 --runs 30 --warmup-ms 200 --check-rows 2"
for round in 1 2; do for v in _m _c; do echo "== decode$v round $round $(el)"
timeout 60 $B/decode$v $D --layouts contiguous,paged --page-size 16 --kv 32768,131072 --json $R/decode${v}_r$round.json > $R/decode${v}_r$round.txt 2>&1
grep -E "^\| [0-9]|rror|panic" $R/decode${v}_r$round.txt | cut -c1-120; done; done
echo "== gqa tiles $(el)"
timeout 120 $B/decode_c $D --layouts contiguous --kv 32768 --tiles $GT --json $R/gqa_tiles.json > $R/gqa_tiles.txt 2>&1
grep -E "^\| [0-9]|rror|panic" $R/gqa_tiles.txt | cut -c1-120
echo "== mha tiles $(el)"
timeout 200 $B/decode_c --batch 4 --heads 32 --heads-kv 32 --dim 128 --dtype f16 --seq-q 1 --runs 30 --warmup-ms 150 --check-rows 2 --layouts contiguous --kv 32768 --splits 8,16 --tiles $MT --json $R/mha_tiles.json > $R/mha_tiles.txt 2>&1
grep -E "^\| [0-9]|rror|panic" $R/mha_tiles.txt | cut -c1-120
timeout 120 python3 .device/py/torch_decode.py --batch 4 --heads 32 --heads-kv 32 --dim 128 --kv 32768 --json $R/torch_decode_mha.json > $R/torch_decode_mha.txt 2>&1; tail -2 $R/torch_decode_mha.txt
echo "== test kvcache_c $(el)"; timeout 120 $B/kvcache_c --test-threads=16 > $R/test-kvcache_c.txt 2>&1; echo "rc=$?"; grep -E "test result|panicked|FAILED" $R/test-kvcache_c.txt | head -3
echo "== done $(el)"
tar czf $OUT/results.tgz -C $R . && rm -r $R
