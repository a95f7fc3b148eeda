source .device/gpu/prelude.sh; export WGPU_BACKEND=vulkan
tar xzf .device/bin.tgz -C .device
R=$OUT/r; mkdir -p $R; B=.device/bin
T0=$(date +%s); el() { echo "[$(( $(date +%s) - T0 )) s]"; }
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | tee $R/gpu.txt
echo "== kernel stats $(el)"
timeout 60 $B/kernel_stats --dims 128 --dtypes f16 --kernels subgroup --decode > $R/stats_dec.txt 2>&1
timeout 60 $B/kernel_stats_wide --dims 128 --dtypes f16 --kernels subgroup --decode > $R/stats_dec_wide.txt 2>&1
grep -E "^== |egister|rror" $R/stats_dec.txt $R/stats_dec_wide.txt | head -8
D="--batch 8 --heads 32 --heads-kv 8 --dim 128 --dtype f16 --seq-q 1 --runs 20 --warmup-ms 150 --check-rows 1 --layouts contiguous,paged --page-size 16 --kv 32768,131072"
for round in 1 2; do for v in decode decode_wide; do
echo "== $v round $round $(el)"
timeout 60 $B/$v $D --json $R/${v}_$round.json > $R/${v}_$round.txt 2>&1
grep -E "^\| [0-9]|rror|panic" $R/${v}_$round.txt
done; done
echo "== wide split sweep $(el)"
timeout 60 $B/decode_wide $D --layouts contiguous --splits 12,24,33,48 > $R/wide_splits.txt 2>&1
grep -E "^\| [0-9]|rror|panic" $R/wide_splits.txt
echo "== torch decode $(el)"
timeout 90 python3 .device/py/torch_decode.py --batch 8 --heads 32 --heads-kv 8 --dim 128 --kv 32768,131072 --json $R/torch_decode.json > $R/torch_decode.txt 2>&1
grep -E "sdpa|flash|cudnn|rror" $R/torch_decode.txt | head -8
echo "== forward headline $(el)"
timeout 150 $B/attention --tokens 16384 --seqs 8192 --dims 128,64 --dtypes f16,f32 --causal both --runs 10 --warmup 3 --check-rows 8 --json $R/flash_8k.json > $R/flash_8k.txt 2>&1
grep -E "^\| NVIDIA|rror" $R/flash_8k.txt | cut -d'|' -f6-20
echo "== torch sdpa $(el)"
timeout 150 python3 .device/py/torch_sdpa.py --seqs 8192 --dims 128,64 --dtypes f16,f32 --json $R/torch_8k.json > $R/torch_8k.txt 2>&1
grep -E "rror" $R/torch_8k.txt | head -3; grep -cE "TFLOP" $R/torch_8k.txt
for t in "tiers 150" "variants 120" "kvcache_wide 150"; do set -- $t; echo "== test $1 $(el)"; timeout $2 $B/$1 --test-threads=16 > $R/test-$1.txt 2>&1; echo "rc=$?"; grep -E "test result|panicked|FAILED" $R/test-$1.txt | head -5; done
echo "== done $(el)"
tar czf $OUT/results.tgz -C $R . && rm -r $R
