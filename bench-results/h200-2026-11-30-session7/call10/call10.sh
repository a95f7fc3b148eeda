source .device/gpu/prelude.sh; export WGPU_BACKEND=vulkan
tar xzf .device/bin.tgz -C .device
R=$OUT/r; mkdir -p $R; B=.device/bin
T0=$(date +%s); el() { echo "[$(( $(date +%s) - T0 )) s]"; }
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | tee $R/gpu.txt
echo "== test kvcache $(el)"; timeout 100 $B/kvcache --test-threads=16 > $R/test-kvcache.txt 2>&1; echo "rc=$?"; grep -E "test result|panicked|FAILED" $R/test-kvcache.txt | head -5
for v in _old ""; do echo "== serving$v $(el)"
timeout 60 $B/serving$v > $R/serving$v.txt 2>&1; echo rc=$?; grep -iE "host|p50|p99|max" $R/serving$v.txt | head -12; done
echo "== test tiers $(el)"; timeout 150 $B/tiers --test-threads=16 > $R/test-tiers.txt 2>&1; echo "rc=$?"; grep -E "test result|panicked|FAILED" $R/test-tiers.txt | head -5
echo "== done $(el)"
tar czf $OUT/results.tgz -C $R . && rm -r $R
