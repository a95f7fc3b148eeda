# Thirty-second round, call 1: f32 and bf16 on the tensor cores (Attention::allow_f16_products).
# Binaries of this round's tree in .device/bin (attention, kernel_stats), c049b58's as
# attention_old / kernel_stats_old (the f16 kernel before its reads and writes went through
# half4 / pack4).
# 1. Registers and spills: f16 old and new, f32 and bf16 with f16 products.
# 2. f16 unchanged? old and new at d = 64, 128, 256, two rounds alternating.
# 3. f32 and bf16 with f16 products at d = 64-256; f32 on its own tier at d = 128.
# 4. The peers in the same call: PyTorch SDPA bf16 (FlashAttention-2, cuDNN), f32 (mem-efficient,
#    math) with and without TF32.
source .device/gpu/prelude.sh; export WGPU_BACKEND=vulkan
R=$OUT/r; mkdir -p $R; B=.device/bin
T0=$(date +%s); el() { echo "[$(( $(date +%s) - T0 )) s]"; }
show() { echo "$2 $(grep -E "^\| NVIDIA|rror|panic|SKIP|skip" $1 | cut -d"|" -f6,7,8,9,11,13,19 | tr -s ' ' | paste -sd';')"; }
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | tee $R/gpu.txt
timeout 60 $B/kernel_stats_old --kernels coop-matrix --dims 64,128,256 --dtypes f16 > $R/stats_old.txt 2>&1
timeout 120 $B/kernel_stats --kernels coop-matrix --dims 64,128,192,256 --dtypes f16,f32,bf16 --f16-products > $R/stats_new.txt 2>&1
for v in old new; do echo "== stats $v: $(grep -iE "^==|register|local|spill|rror|panic" $R/stats_$v.txt | tr -s ' ' | paste -sd';')"; done
A="--tokens 16384 --kernels coop-matrix --baseline off --runs 10 --warmup 3 --warmup-ms 300 --check-rows 8 --causal both --seqs 8192"
for r in 1 2; do
  order="old new"; [ $r = 2 ] && order="new old"
  for v in $order; do
    bin=$B/attention; [ $v = old ] && bin=$B/attention_old
    timeout 120 $bin $A --dtypes f16 --dims 64,128,256 --json $R/f16-$v-r$r.json > $R/f16-$v-r$r.txt 2>&1
    show $R/f16-$v-r$r.txt "f16-$v-r$r $(el)"
  done
done
timeout 150 $B/attention $A --dtypes f32,bf16 --f16-products --dims 64,128,192,256 --json $R/prod.json > $R/prod.txt 2>&1
show $R/prod.txt "prod $(el)"
timeout 60 $B/attention ${A/coop-matrix/auto} --dtypes f32 --dims 128 --json $R/f32own.json > $R/f32own.txt 2>&1
show $R/f32own.txt "f32own $(el)"
P="--seqs 8192 --dims 64,128,256 --tokens 16384"
timeout 120 python3 benches/torch_sdpa.py $P --dtypes bf16,f16 --backends flash,cudnn --json $R/torch-lowp.json > $R/torch-lowp.txt 2>&1
timeout 120 python3 benches/torch_sdpa.py $P --dtypes f32 --backends efficient,math --json $R/torch-f32.json > $R/torch-f32.txt 2>&1
timeout 120 python3 benches/torch_sdpa.py $P --dtypes f32 --backends efficient,math --tf32 --json $R/torch-tf32.json > $R/torch-tf32.txt 2>&1
cat $R/torch-*.txt | grep -v "^$" | tail -40
echo "== done $(el)"
tar czf $OUT/results.tgz -C $R . && rm -r $R
