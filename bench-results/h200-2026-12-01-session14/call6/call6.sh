# Session 14, call 6: tiers::every_coop_tile_candidate at d = 256 only (a build of the committed
# tree with the test's head dims cut to [256]: `tiers_d256`), the part call 5 did not reach.
source .device/gpu/prelude.sh; export WGPU_BACKEND=vulkan
tar xzf .device/bin.tgz -C .device
R=$OUT/r; mkdir -p $R; B=.device/bin
timeout 220 $B/tiers_d256 every_coop_tile_candidate --nocapture > $R/test-tiers-coop-tiles-d256.txt 2>&1; echo "rc=$?"
grep -E "test result|panicked|FAILED|failed|done at" $R/test-tiers-coop-tiles-d256.txt | head -30
cp $R/test-tiers-coop-tiles-d256.txt $OUT/
