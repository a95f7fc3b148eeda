# Session 26, call 3: the full sweep (benches/sweep.sh: every tier over the papers' shapes, the
# tile sweeps, PyTorch SDPA's backends, the report) with call 1's binary (tree 7680ac7). The
# sweep writes straight under $OUT, so what it finished comes back even if the call is cut.
source .device/gpu/prelude.sh; export WGPU_BACKEND=vulkan
tar xzf .device/bin.tgz -C .device
B=.device/bin; T0=$(date +%s)
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | tee $OUT/gpu.txt
ATTENTION=$B/attention timeout 560 bash benches/sweep.sh $OUT/sweep > $OUT/sweep.log 2>&1; echo "sweep rc=$? [$(( $(date +%s) - T0 )) s]"; tail -3 $OUT/sweep.log
