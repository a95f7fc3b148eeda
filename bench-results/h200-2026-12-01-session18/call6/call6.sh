# Session 18, call 6: the whole test suite of bc6df0e on the H200 (Vulkan; the browser tests
# are not for this machine): the library's unit tests and every integration test binary, the
# tensor-core tier as the plan's default; `tiers` last (it also ran whole in call 1, on the
# same library source).
source .device/gpu/prelude.sh; export WGPU_BACKEND=vulkan
tar xzf .device/bin.tgz -C .device
R=$OUT/r; mkdir -p $R; B=.device/bin
T0=$(date +%s); el() { echo "[$(( $(date +%s) - T0 )) s]"; }
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | tee $R/gpu.txt
for t in wgpu_flash_attn errors forward kvcache variants materialized autotune shader_dir shaders planning shader_checks tiers; do
  left=$(( 400 - ($(date +%s) - T0) ))
  if [ $left -lt 20 ]; then echo "== $t: not run (time) $(el)"; continue; fi
  echo "== test $t $(el)"
  timeout $left $B/$t --test-threads=16 > $R/test-$t.txt 2>&1; echo "rc=$?"; grep -E "test result|panicked|FAILED|failed|SKIP" $R/test-$t.txt | head -6
done
echo "== done $(el)"
tar czf $OUT/results.tgz -C $R . && rm -r $R
