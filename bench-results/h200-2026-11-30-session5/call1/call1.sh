source .device/gpu/prelude.sh; export WGPU_BACKEND=vulkan
tar xzf .device/bin.tgz -C .device
R=$OUT/r; mkdir -p $R; B=.device/bin
T0=$(date +%s); el() { echo "[$(( $(date +%s) - T0 )) s]"; }
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm --format=csv,noheader | tee $R/gpu.txt
echo "== kernel stats $(el)"
for v in int sgs; do
timeout 60 $B/kernel_stats_$v --dims 64,128 --dtypes f16 --kernels coop-matrix > $R/stats_$v.txt 2>&1
grep -E "^== |egister|rror" $R/stats_$v.txt | head -8
done
echo "== torch sdpa $(el)"
timeout 150 python3 .device/py/torch_sdpa.py --seqs 8192 --dims 128,64 --dtypes f16 --json $R/torch.json > $R/torch.txt 2>&1
grep -E "flash|cudnn|rror" $R/torch.txt | head -12
for round in 1 2; do
for v in int sgs; do
echo "== attention $v round $round $(el)"
timeout 60 $B/attention_$v --tokens 16384 --seqs 8192 --dims 128,64 --dtypes f16 --causal both --baseline off --kernels coop-matrix --runs 10 --warmup 5 --check-rows 8 --json $R/attn_${v}_$round.json > $R/attn_${v}_$round.txt 2>&1
grep -E "^\| NVIDIA|rror" $R/attn_${v}_$round.txt | cut -d'|' -f6-13
done; done
echo "== decode split sweep $(el)"
D="--batch 8 --heads 32 --heads-kv 8 --dim 128 --dtype f16 --seq-q 1 --runs 20 --warmup-ms 150 --check-rows 1"
timeout 120 $B/decode_int $D --layouts contiguous --kv 32768,131072 --splits 0,8,11,12,16,22,24,33,36,48,66 --json $R/decode_splits.json > $R/decode_splits.txt 2>&1
grep -E "^\| [0-9]|rror|panic" $R/decode_splits.txt
echo "== done $(el)"
tar czf $OUT/results.tgz -C $R . && rm -r $R
