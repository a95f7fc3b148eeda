source .device/gpu/prelude.sh; export WGPU_BACKEND=vulkan
tar xzf .device/bin.tgz -C .device
R=$OUT/r; mkdir -p $R; B=.device/bin
T0=$(date +%s); el() { echo "[$(( $(date +%s) - T0 )) s]"; }
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | tee $R/gpu.txt
echo "== forward headline $(el)"
timeout 170 $B/attention --tokens 16384 --seqs 8192 --dims 128,64 --dtypes f16,f32 --causal both --runs 10 --warmup 3 --check-rows 8 --json $R/flash_8k.json > $R/flash_8k.txt 2>&1; echo rc=$?
grep -E "^\| NVIDIA|rror" $R/flash_8k.txt | cut -d'|' -f6-20
echo "== torch sdpa $(el)"
timeout 120 python3 .device/py/torch_sdpa.py --seqs 8192 --dims 128,64 --dtypes f16,f32 --json $R/torch_8k.json > $R/torch_8k.txt 2>&1; echo rc=$?
grep -E "flash|cudnn|efficient" $R/torch_8k.txt
echo "== serving $(el)"
timeout 40 $B/serving > $R/serving.txt 2>&1; echo rc=$?; tail -3 $R/serving.txt
echo "== done $(el)"
tar czf $OUT/results.tgz -C $R . && rm -r $R
