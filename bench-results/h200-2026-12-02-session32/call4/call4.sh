# Thirty-second round, call 4 (call 1's binaries): the full sweep's new step (benches/sweep.sh,
# f16_products.json: f32 and bf16 on the tensor cores over the papers' shapes) with PyTorch SDPA
# bf16 and f32 at the same shapes, and the report of both.
source .device/gpu/prelude.sh; export WGPU_BACKEND=vulkan
R=$OUT/r; mkdir -p $R; B=.device/bin
T0=$(date +%s); el() { echo "[$(( $(date +%s) - T0 )) s]"; }
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | tee $R/gpu.txt
timeout 250 $B/attention --tokens 16384 --seqs 1024,2048,4096,8192,16384 --dims 64,128 --dtypes f32,bf16 \
  --f16-products --causal both --kernels coop-matrix --baseline off --runs 10 --warmup 5 \
  --json $R/f16_products.json > $R/f16_products.txt 2>&1; echo "products rc=$? $(el)"
grep -E "^\| NVIDIA|rror|panic" $R/f16_products.txt | cut -d"|" -f6,7,8,9,11,13,19 | tr -s ' '
timeout 200 python3 benches/torch_sdpa.py --dtypes bf16,f32 --json $R/torch.json > $R/torch.txt 2>&1; echo "torch rc=$? $(el)"
python3 benches/report.py $R/f16_products.json $R/torch.json --md $R/report.md --svg $R/report.svg > $R/report.log 2>&1; echo "report rc=$?"
echo "== done $(el)"
tar czf $OUT/results.tgz -C $R . && rm -r $R
