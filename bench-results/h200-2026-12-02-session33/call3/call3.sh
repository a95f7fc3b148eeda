# Thirty-third round, call 3: the tensor-core tier beside PyTorch's FlashAttention-2 and cuDNN at
# seven head dims from 32 to 256, f16, N = 8k, 16k tokens, both masks; ours in two rounds
# around PyTorch's. Release binaries of 88a916f's code (the f16 kernels are byte-identical to
# 990d95c's: examples/kernel_digests).
source .device/gpu/prelude.sh; export WGPU_BACKEND=vulkan
R=$OUT/r; mkdir -p $R; B=.device/bin
T0=$(date +%s); el() { echo "[$(( $(date +%s) - T0 )) s]"; }
show() { echo "$2 $(grep -E "^\| NVIDIA|rror|panic" $1 | cut -d"|" -f7,9,11,13,19 | tr -s ' ' | paste -sd';')"; }
DIMS=32,64,96,128,160,192,256
A="--tokens 16384 --kernels coop-matrix --baseline off --runs 10 --warmup 3 --warmup-ms 300 --check-rows 8 --causal both --seqs 8192 --dtypes f16 --dims $DIMS"
timeout 200 $B/attention $A --json $R/ours-r1.json > $R/ours-r1.txt 2>&1; show $R/ours-r1.txt "ours-r1 $(el)"
timeout 300 python3 benches/torch_sdpa.py --seqs 8192 --dims $DIMS --dtypes f16 --backends flash,cudnn --json $R/torch.json > $R/torch.txt 2>&1
echo "torch rc=$? $(el)"; tail -30 $R/torch.txt
timeout 200 $B/attention $A --json $R/ours-r2.json > $R/ours-r2.txt 2>&1; show $R/ours-r2.txt "ours-r2 $(el)"
python3 benches/report.py --md $R/report.md $R/ours-r1.json $R/torch.json > $R/report.log 2>&1 || echo "report failed"
echo "== done $(el)"
tar czf $OUT/results.tgz -C $R . && rm -r $R
