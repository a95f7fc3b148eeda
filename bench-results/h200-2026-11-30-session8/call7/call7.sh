# Session 8, call 7: the tensor-core kernel at 4afd43f (main) with PyTorch SDPA (FlashAttention-2,
# cuDNN) in the same call, N = 8k, d = 128 and 64, f16, both masks; ours twice around PyTorch.
source .device/gpu/prelude.sh; export WGPU_BACKEND=vulkan
tar xzf .device/bin.tgz -C .device
R=$OUT/r; mkdir -p $R; B=.device/bin
T0=$(date +%s); el() { echo "[$(( $(date +%s) - T0 )) s]"; }
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | tee $R/gpu.txt
A="--tokens 16384 --seqs 8192 --dtypes f16 --baseline off --kernels coop-matrix --runs 20 --warmup 5 --warmup-ms 300 --check-rows 8"
echo "== attention round 1 $(el)"; timeout 40 $B/attention $A --dims 128,64 --causal both --json $R/coop_r1.json > $R/coop_r1.txt 2>&1
grep -E "^\| NVIDIA|rror" $R/coop_r1.txt | cut -d'|' -f5-13
echo "== torch $(el)"; timeout 150 python3 .device/py/torch_sdpa.py --seqs 8192 --dims 128,64 --dtypes f16 --backends flash,cudnn --json $R/torch_8k.json > $R/torch_8k.txt 2>&1; echo rc=$?; tail -10 $R/torch_8k.txt
echo "== attention round 2 $(el)"; timeout 40 $B/attention $A --dims 128,64 --causal both --json $R/coop_r2.json > $R/coop_r2.txt 2>&1
grep -E "^\| NVIDIA|rror" $R/coop_r2.txt | cut -d'|' -f5-13
echo "== done $(el)"
tar czf $OUT/results.tgz -C $R . && rm -r $R
