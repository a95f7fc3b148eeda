# Session 13, call 3: the final tree (one inline K/V load site; fast loads with scores in
# registers at every head dim, through workgroup memory up to d = 128): the suites that run the
# tensor-core kernel, `tiers` whole (both ways, each way's table), `variants`, `forward`. Logs go
# straight to $OUT so that a cut keeps them.
source .device/gpu/prelude.sh; export WGPU_BACKEND=vulkan
tar xzf .device/bin.tgz -C .device
R=$OUT; B=.device/bin
T0=$(date +%s); el() { echo "[$(( $(date +%s) - T0 )) s]"; }
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | tee $R/gpu.txt
for t in variants forward; do echo "== test $t $(el)"
timeout 90 $B/$t --test-threads=16 > $R/test-$t.txt 2>&1; echo "rc=$?"; grep -E "test result|panicked|FAILED|failed" $R/test-$t.txt | head -8; done
echo "== test tiers $(el)"
timeout 420 $B/tiers --test-threads=16 > $R/test-tiers.txt 2>&1; echo "rc=$?"; grep -E "^test |test result|panicked|FAILED|failed" $R/test-tiers.txt | head -20
echo "== done $(el)"
