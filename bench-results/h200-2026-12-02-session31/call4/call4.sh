# Thirty-first round, call 4: the full sweep again (benches/sweep.sh: every tier over the papers'
# shapes, the tile sweeps, PyTorch SDPA's four backends, the report) with this tree's
# `attention` (c049b58), so that BENCHMARKS' table shows the tensor-core kernel as it is since
# the twenty-seventh to thirtieth rounds. Everything goes into one archive (the twenty-sixth
# round's sweep wrote its files loose under $OUT, and some did not come back).
source .device/gpu/prelude.sh; export WGPU_BACKEND=vulkan
R=$OUT/r; mkdir -p $R; B=.device/bin; T0=$(date +%s)
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | tee $R/gpu.txt
ATTENTION=$B/attention timeout 540 bash benches/sweep.sh $R/sweep > $R/sweep.log 2>&1; echo "sweep rc=$? [$(( $(date +%s) - T0 )) s]"; tail -3 $R/sweep.log
tar czf $OUT/results.tgz -C $R . && rm -r $R
