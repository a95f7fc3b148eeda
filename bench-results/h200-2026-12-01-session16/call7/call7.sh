# Session 16, call 7: the final tree's kvcache, shader_dir and errors suites on the H200 (the
# KV-cache suite's prefill chunks run the tensor-core kernel, whose text changed at d = 64, 128,
# 160 and 192).
source .device/gpu/prelude.sh; export WGPU_BACKEND=vulkan
tar xzf .device/bin.tgz -C .device
R=$OUT/r; mkdir -p $R; B=.device/bin
T0=$(date +%s); el() { echo "[$(( $(date +%s) - T0 )) s]"; }
for t in errors shader_dir kvcache; do echo "== test $t $(el)"
  timeout 120 $B/$t --test-threads=16 > $R/test-$t.txt 2>&1; echo "rc=$?"; grep -E "test result|panicked|FAILED|failed" $R/test-$t.txt | head -8
done
echo "== done $(el)"
tar czf $OUT/results.tgz -C $R . && rm -r $R
