# Session 9, call 5: main at 05b7618. The tensor-core tier's candidate tiles at head dims the
# earlier sweeps did not time (32, 96, 256), with registers; the KV-cache plan against other tiles
# at d = 64 and 256, beside PyTorch.
source .device/gpu/prelude.sh; export WGPU_BACKEND=vulkan
tar xzf .device/bin.tgz -C .device
R=$OUT/r; mkdir -p $R; B=.device/bin
T0=$(date +%s); el() { echo "[$(( $(date +%s) - T0 )) s]"; }
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | tee $R/gpu.txt
nvidia-smi --query-gpu=timestamp,clocks.sm,clocks.mem,power.draw,temperature.gpu --format=csv -lms 250 > $R/clocks.csv 2>&1 &
CLK=$!
TL=128x16x32x8,64x16x32x4,128x16x32x4,128x32x32x8,128x32x32x4,64x32x32x4,32x16x32x2
timeout 120 $B/kernel_stats_n --dims 32,96,256 --dtypes f16 --kernels coop-matrix --tiles $TL > $R/stats.txt 2>&1; grep -E "^== |Register" $R/stats.txt | paste - - | cut -c1-120
A="--tokens 16384 --seqs 8192 --dtypes f16 --baseline off --kernels coop-matrix --runs 10 --warmup 3 --warmup-ms 300 --check-rows 4"
echo "== attention plan $(el)"; timeout 120 $B/attention_n $A --dims 32,96,256 --causal both --json $R/coop_plan.json > $R/coop_plan.txt 2>&1; grep -E "^\| NVIDIA|rror" $R/coop_plan.txt | cut -d'|' -f7-13
echo "== attention tiles $(el)"; timeout 300 $B/attention_n $A --dims 32,96,256 --causal both --tiles $TL --json $R/coop_tiles.json > $R/coop_tiles.txt 2>&1; grep -E "^\| NVIDIA|rror" $R/coop_tiles.txt | cut -d'|' -f7-13
echo "== torch sdpa $(el)"; timeout 200 python3 .device/py/torch_sdpa.py --seqs 8192 --dims 32,96,256 --dtypes f16 --backends flash,cudnn --json $R/torch_sdpa.json > $R/torch_sdpa.txt 2>&1; tail -12 $R/torch_sdpa.txt
D="--batch 8 --heads 32 --heads-kv 8 --dtype f16 --seq-q 1 --runs 20 --warmup-ms 200 --check-rows 2 --layouts contiguous --kv 32768"
echo "== decode d64 $(el)"; timeout 120 $B/decode_n $D --dim 64 --tiles plan,sg:64/8/4,sg:64/16/8,sg:64/4/8,sg:128/8/8 --json $R/decode64.json > $R/decode64.txt 2>&1; grep -E "^\| [0-9]|rror|panic" $R/decode64.txt | cut -c1-120
echo "== decode d256 $(el)"; timeout 120 $B/decode_n $D --dim 256 --tiles plan,sg:64/32/4,sg:64/16/4,sg:64/16/8,sg:128/32/8 --json $R/decode256.json > $R/decode256.txt 2>&1; grep -E "^\| [0-9]|rror|panic" $R/decode256.txt | cut -c1-120
for d in 64 256; do timeout 120 python3 .device/py/torch_decode.py --batch 8 --heads 32 --heads-kv 8 --dim $d --kv 32768 --json $R/torch_decode$d.json > $R/torch_decode$d.txt 2>&1; tail -2 $R/torch_decode$d.txt; done
kill $CLK
echo "== done $(el)"
tar czf $OUT/results.tgz -C $R . && rm -r $R
