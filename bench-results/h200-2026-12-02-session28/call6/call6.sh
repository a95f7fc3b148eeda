# Session 28, call 6 (binaries of the tree with the tensor-core kernel's tree form at d = 96, 192
# and 256; its SPIR-V at d = 32-256 is byte for byte the one call 3 and call 5 measured: `both` at
# those head dims, d7c0915's elsewhere): the forward and tiers suites at once, every tier
# (correctness only; the variants suite runs head dims up to 64, whose kernel did not change).
source .device/gpu/prelude.sh; export WGPU_BACKEND=vulkan
tar xzf .device/bin.tgz -C .device
R=$OUT; B=.device/bin
T0=$(date +%s); el() { echo "[$(( $(date +%s) - T0 )) s]"; }
for t in forward tiers; do
  (timeout 270 $B/$t --test-threads=8 > $R/test-$t.txt 2>&1; echo "$t rc=$? $(el)" > $R/$t-rc.txt) &
done
wait
for t in forward tiers; do cat $R/$t-rc.txt; grep -E "test result|panicked|FAILED|failed" $R/test-$t.txt | head -6; done
