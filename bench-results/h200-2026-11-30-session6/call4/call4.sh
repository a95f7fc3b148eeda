source .device/gpu/prelude.sh; export WGPU_BACKEND=vulkan
tar xzf .device/bin.tgz -C .device
R=$OUT/r; mkdir -p $R; B=.device/bin
T0=$(date +%s); el() { echo "[$(( $(date +%s) - T0 )) s]"; }
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | tee $R/gpu.txt
for t in "tiers_v4 150" "variants_v4 120" "kvcache_v4 60"; do set -- $t; echo "== test $1 $(el)"; timeout $2 $B/$1 --test-threads=16 > $R/test-$1.txt 2>&1; echo "rc=$?"; grep -E "test result|panicked|FAILED" $R/test-$1.txt | head -8; done
echo "== done $(el)"
tar czf $OUT/results.tgz -C $R . && rm -r $R
