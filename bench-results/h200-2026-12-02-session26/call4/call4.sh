# Session 26, call 4: what call 3's sweep wrote but did not come back (too many files under
# $OUT): the sweep's PyTorch step and its tile step again, with call 1's binary, the same
# commands as benches/sweep.sh runs them; everything tarred this time.
source .device/gpu/prelude.sh; export WGPU_BACKEND=vulkan
tar xzf .device/bin.tgz -C .device
R=$OUT/r; mkdir -p $R; B=.device/bin; T0=$(date +%s)
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | tee $R/gpu.txt
timeout 200 python3 benches/torch_sdpa.py --json $R/torch.json > $R/torch.txt 2>&1; echo "torch rc=$? [$(( $(date +%s) - T0 )) s]"
timeout 120 $B/attention --tokens 16384 --seqs 8192 --dims 64,128 --dtypes f32,f16 --causal off --baseline off \
  --kernels portable,subgroup \
  --tiles 32x32x16x16,64x16x8x16,32x32x16x8,64x32x8x16,128x32x8x32,128x32x16x16 \
  --runs 5 --warmup 3 --check-rows 8 --json $R/tiles.json > $R/tiles.txt 2>&1; echo "tiles rc=$? [$(( $(date +%s) - T0 )) s]"
tar czf $OUT/results.tgz -C $R . && rm -r $R
