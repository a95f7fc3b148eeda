# Session 14, call 2: cumulative changes to the key loop of the scores-in-registers kernel, read off
# its SASS (call1): v0 = main (fe07079); v12 = O rescaled every tile (no rare-rescale branch) and
# exp2 without a test for masked scores; v3 = + the scale's sign folded into Q; v4 = + one clamped
# load form for the tile ahead (any tile, paged or not); v5 = + no branch around those loads.
# Driver statistics and pipeline caches of each; two rounds alternating at d = 64, 96, 128, 256; PyTorch.
source .device/gpu/prelude.sh; export WGPU_BACKEND=vulkan
tar xzf .device/bin.tgz -C .device
R=$OUT/r; mkdir -p $R; B=.device/bin
T0=$(date +%s); el() { echo "[$(( $(date +%s) - T0 )) s]"; }
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | tee $R/gpu.txt
nvidia-smi --query-gpu=timestamp,clocks.sm,clocks.mem,power.draw,temperature.gpu --format=csv -lms 250 > $R/clocks.csv 2>&1 &
CLK=$!
V="v0 v12 v3 v4 v5"
for v in $V; do mkdir -p $R/cache_$v
timeout 60 $B/kernel_stats_$v --kernels coop-matrix --dims 64,96,128,256 --dtypes f16 --cache $R/cache_$v > $R/kernel_stats_$v.txt 2>&1
echo "$v: $(grep -E 'Register Count' $R/kernel_stats_$v.txt | tr -s ' ' | tr '\n' ' ')"; done
A="--tokens 16384 --seqs 8192 --dtypes f16 --baseline off --kernels coop-matrix --runs 20 --warmup 5 --warmup-ms 300 --check-rows 8 --causal both --dims 64,96,128,256"
for round in 1 2; do
for v in $V; do echo "== $v round $round $(el)"
timeout 100 $B/attention_$v $A --json $R/${v}_r$round.json > $R/${v}_r$round.txt 2>&1
grep -E "^\| NVIDIA|rror|panic" $R/${v}_r$round.txt | cut -d'|' -f6-15; done
V="v5 v4 v3 v12 v0"; done
echo "== torch $(el)"; timeout 120 python3 .device/py/torch_sdpa.py --seqs 8192 --dims 128,64 --dtypes f16 --causal both --backends flash --json $R/torch_sdpa.json > $R/torch_sdpa.txt 2>&1; tail -6 $R/torch_sdpa.txt
kill $CLK; echo "== done $(el)"
tar czf $OUT/results.tgz -C $R . && rm -r $R
