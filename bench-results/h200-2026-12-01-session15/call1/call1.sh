# Session 15, call 1: the committed tree. Tensor-core tiles other than the plan's at d = 64 and
# 128 with scores in registers (two workgroups per SM, 32 rows per subgroup), the driver's
# registers for each, PyTorch beside; the tests added in ecfee34 (variants, tiers options).
source .device/gpu/prelude.sh; export WGPU_BACKEND=vulkan
tar xzf .device/bin.tgz -C .device
R=$OUT/r; mkdir -p $R; B=.device/bin
T0=$(date +%s); el() { echo "[$(( $(date +%s) - T0 )) s]"; }
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | tee $R/gpu.txt
nvidia-smi --query-gpu=timestamp,clocks.sm,clocks.mem,power.draw,temperature.gpu --format=csv -lms 250 > $R/clocks.csv 2>&1 &
CLK=$!
T128=128x64x32x8,64x64x32x4,64x32x32x4,128x32x32x8,128x32x32x4,128x16x32x4,256x16x32x8,64x16x32x4
T64=128x128x32x8,128x64x32x4,256x64x32x8,128x32x32x4,256x32x32x8,64x128x32x4,64x64x32x4,128x128x32x4
echo "== stats $(el)"
timeout 90 $B/kernel_stats --kernels coop-matrix --dims 128 --dtypes f16 --tiles $T128 > $R/stats128.txt 2>&1
timeout 90 $B/kernel_stats --kernels coop-matrix --dims 64 --dtypes f16 --tiles $T64 > $R/stats64.txt 2>&1
grep -E "^== |Register|[Ss]pill" $R/stats128.txt $R/stats64.txt | head -80
A="--tokens 16384 --seqs 8192 --dtypes f16 --baseline off --kernels coop-matrix --runs 20 --warmup 5 --warmup-ms 300 --check-rows 8 --causal both"
echo "== d128 tiles $(el)"
timeout 150 $B/attention $A --dims 128 --tiles $T128 --json $R/tiles128.json > $R/tiles128.txt 2>&1
grep -E "^\| NVIDIA|rror|panic|skip" $R/tiles128.txt | cut -d'|' -f7,9,10,11,13
echo "== d64 tiles $(el)"
timeout 150 $B/attention $A --dims 64 --tiles $T64 --json $R/tiles64.json > $R/tiles64.txt 2>&1
grep -E "^\| NVIDIA|rror|panic|skip" $R/tiles64.txt | cut -d'|' -f7,9,10,11,13
echo "== torch $(el)"; timeout 120 python3 .device/py/torch_sdpa.py --seqs 8192 --dims 128,64 --dtypes f16 --causal both --backends flash,cudnn --json $R/torch_sdpa.json > $R/torch_sdpa.txt 2>&1; tail -6 $R/torch_sdpa.txt
kill $CLK
echo "== test variants $(el)"
timeout 150 $B/variants --test-threads=16 > $R/test-variants.txt 2>&1; echo "rc=$?"; grep -E "test result|panicked|FAILED|failed" $R/test-variants.txt | head -8
echo "== test tiers options_on_every_tier $(el)"
timeout 150 $B/tiers options_on_every_tier > $R/test-tiers-options.txt 2>&1; echo "rc=$?"; grep -E "test result|panicked|FAILED|failed" $R/test-tiers-options.txt | head -8
echo "== done $(el)"
tar czf $OUT/results.tgz -C $R . && rm -r $R
