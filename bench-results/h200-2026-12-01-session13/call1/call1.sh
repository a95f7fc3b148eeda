# Session 13, call 1: the committed kernel (attention = 2bdcb0d: fast K/V loads at d = 64-128
# through a function with pointer arguments, the old loops elsewhere) against one inline load site
# for the tile KV_BUFS tiles ahead, its fast path on at every head dim (attention_inl); two rounds
# alternating, every head dim; then tiles of 4 and 2 subgroups (more workgroups per SM) at
# d = 64-128; PyTorch beside.
source .device/gpu/prelude.sh; export WGPU_BACKEND=vulkan
tar xzf .device/bin.tgz -C .device
R=$OUT; B=.device/bin
T0=$(date +%s); el() { echo "[$(( $(date +%s) - T0 )) s]"; }
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | tee $R/gpu.txt
nvidia-smi --query-gpu=timestamp,clocks.sm,clocks.mem,power.draw,temperature.gpu --format=csv -lms 250 > $R/clocks.csv 2>&1 &
CLK=$!
for v in "" _inl; do timeout 60 $B/kernel_stats$v --kernels coop-matrix --dims 32,64,96,128,160,192,256 --dtypes f16 > $R/kernel_stats$v.txt 2>&1; echo "kernel_stats$v"; grep -E "^== |Register|registers" $R/kernel_stats$v.txt | head -20; done
A="--tokens 16384 --seqs 8192 --dtypes f16 --baseline off --kernels coop-matrix --runs 20 --warmup 5 --warmup-ms 300 --check-rows 8 --causal both"
for round in 1 2; do for v in "" _inl; do echo "== attention$v round $round $(el)"
timeout 110 $B/attention$v $A --dims 32,64,96,128,160,192,256 --json $R/plan${v}_r$round.json > $R/plan${v}_r$round.txt 2>&1
grep -E "^\| NVIDIA|rror|panic|registers:" $R/plan${v}_r$round.txt | cut -d'|' -f6-15; done; done
echo "== fewer subgroups $(el)"
timeout 100 $B/attention $A --dims 64,96,128 --tiles 64x64x32x4,64x32x32x4,64x128x32x4,32x64x32x2 --json $R/fewer.json > $R/fewer.txt 2>&1
grep -E "^\| NVIDIA|rror|panic" $R/fewer.txt | cut -d'|' -f6-15
echo "== torch $(el)"; timeout 150 python3 .device/py/torch_sdpa.py --seqs 8192 --dims 128,64 --dtypes f16 --causal both --backends flash,cudnn --json $R/torch_sdpa.json > $R/torch_sdpa.txt 2>&1; tail -8 $R/torch_sdpa.txt
kill $CLK
echo "== done $(el)"
