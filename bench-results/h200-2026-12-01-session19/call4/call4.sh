# Session 19, call 4: registers of the KV-cache kernel with one change each in its key loop (a
# workgroup barrier `bar`, an atomic by one invocation `atom`, a uniform load that steers the loop
# `wul`, and the tiles-from-a-counter form `dyn`, which has all three) against main; then every
# test binary of this build on the H200 (the kvcache tests with the second counter word per work
# item and KV head), `tiers` last with --nocapture to see where its time goes.
source .device/gpu/prelude.sh; export WGPU_BACKEND=vulkan
tar xzf .device/bin.tgz -C .device
R=$OUT/r; mkdir -p $R; B=.device/bin; V=.device/var
T0=$(date +%s); el() { echo "[$(( $(date +%s) - T0 )) s]"; }
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | tee $R/gpu.txt
for v in main bar atom wul dyn; do
  SD=""; [ $v != main ] && SD=$V/$v
  WGPU_FLASH_ATTN_SHADER_DIR=$SD timeout 60 $B/kernel_stats --dims 128 --dtypes f16 --kernels portable --decode --decode-kv 32768 > $R/stats_$v.txt 2>&1
  echo "stats $v: $(grep -iE "decode|register|spill" $R/stats_$v.txt | tr -s ' ' | tail -2 | paste -sd';')"
done
for t in wgpu_flash_attn errors forward kvcache variants materialized autotune shader_dir shaders planning shader_checks; do
  S=$(date +%s); timeout 150 $B/$t --test-threads=16 > $R/test-$t.txt 2>&1; rc=$?
  echo "test $t rc=$rc $(( $(date +%s) - S )) s: $(grep -E "test result" $R/test-$t.txt | tail -1 | cut -c1-60) $(grep -E "FAILED|panicked" $R/test-$t.txt | head -2 | paste -sd' ')"
done
echo "== tiers $(el)"
S=$(date +%s); timeout 380 $B/tiers --test-threads=16 --nocapture > $R/test-tiers.txt 2>&1; rc=$?
echo "test tiers rc=$rc $(( $(date +%s) - S )) s: $(grep -E "test result" $R/test-tiers.txt | tail -1) $(grep -E "^test .*(ok|FAILED)" $R/test-tiers.txt | paste -sd' ' | cut -c1-600)"
echo "== done $(el)"
tar czf $OUT/results.tgz -C $R . && rm -r $R
