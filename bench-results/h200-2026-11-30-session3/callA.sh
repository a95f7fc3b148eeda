# Benchmarks of this session's kernels beside PyTorch on the same H200, one call.
R=$OUT/r; mkdir -p $R
B=.device/bin
F="^\| NVIDIA|^\| [0-9]+ \||rror|FAIL|panic"
T0=$(date +%s); el() { echo "[$(( $(date +%s) - T0 )) s]"; }
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | tee $R/gpu.txt
echo "== headline d=128 $(el)"
timeout 100 $B/attention --tokens 16384 --seqs 8192 --dims 128 --dtypes f32,f16 --causal both \
  --kernels portable,subgroup,coop-matrix --runs 10 --warmup 5 --json $R/headline.json > $R/headline.txt 2>&1
grep -E "$F" $R/headline.txt | cut -c1-160
echo "== coop d=64 tiles $(el)"
timeout 40 $B/attention --tokens 16384 --seqs 8192 --dims 64 --dtypes f16 --causal both --baseline off \
  --kernels coop-matrix --tiles 128x16x32x4,64x16x32x4,128x32x32x8 --runs 10 --warmup 5 --json $R/coop_d64.json > $R/coop_d64.txt 2>&1
grep -E "$F" $R/coop_d64.txt | cut -c1-160
echo "== f32-tier tiles d=128 $(el)"
timeout 80 $B/attention --tokens 16384 --seqs 8192 --dims 128 --dtypes f32,f16 --causal off --baseline off \
  --kernels subgroup --tiles 32x32x16x16,64x16x8x16,32x32x16x8,64x16x4x16,64x16x8x8,64x32x8x16,128x32x8x32 \
  --runs 8 --warmup 3 --check-rows 4 --json $R/f32_tiles.json > $R/f32_tiles.txt 2>&1
grep -E "$F" $R/f32_tiles.txt | cut -c1-160
echo "== decode sweep $(el)"
D="--batch 8 --heads 32 --heads-kv 8 --dim 128 --dtype f16 --seq-q 1 --layouts contiguous,paged --page-size 16 --runs 20 --warmup-ms 150 --check-rows 1"
TL="plan,128/4/1/1/16,128/4/2/2/16,256/4/1/2/16,64/4/1/2/16,128/8/2/2/16"
timeout 60 $B/decode $D --kv 32768 --tiles $TL --splits 0,32,128 --json $R/decode_32k.json > $R/decode_32k.txt 2>&1
timeout 70 $B/decode $D --kv 131072 --tiles $TL --splits 0,64,256 --json $R/decode_128k.json > $R/decode_128k.txt 2>&1
for k in 32k 128k; do grep -E "rror|FAIL|panic" $R/decode_$k.txt | head -3; grep -E '^\| [0-9]+ \| (contiguous|paged)' $R/decode_$k.txt | awk -F'|' '{gsub(/ /,""); print $2, $3, $4, $5, $6, $7, $8}' | sort -k2,2 -k5,5g | awk '{if (n[$2]++ < 4) print}'; done
echo "== torch sdpa $(el)"
timeout 90 python3 .device/py/torch_sdpa.py --seqs 8192 --dims 64,128 --dtypes f16,f32 --json $R/torch_headline.json > $R/torch_headline.txt 2>&1
grep -E "flash|cudnn|efficient" $R/torch_headline.txt | grep -v "^$" | head -12
echo "== torch decode $(el)"
timeout 60 python3 .device/py/torch_decode.py --batch 8 --heads 32 --heads-kv 8 --dim 128 --kv 32768,131072 --json $R/torch_decode.json > $R/torch_decode.txt 2>&1
grep -E "sdpa" $R/torch_decode.txt | head -8
echo "== done $(el)"
tar czf $OUT/results.tgz -C $R . && rm -r $R
