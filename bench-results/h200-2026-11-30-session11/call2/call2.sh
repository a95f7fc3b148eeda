# Session 11, call 2: element access to cooperative matrices through SPIR-V passthrough
# (examples/coop_layout.rs at the time, kept as experiments/coop_layout.rs; its
# spirv_elements module was the first form of src/kernels/spirv_elements.rs): the (row, column) of each lane's elements of
# C (f32), A and B (f16) 16x16 matrices, and element insertion.
source .device/gpu/prelude.sh; export WGPU_BACKEND=vulkan
tar xzf .device/bin.tgz -C .device
R=$OUT/r; mkdir -p $R; B=.device/bin
timeout 60 $B/coop_layout > $R/coop_layout.txt 2>&1; echo "rc=$?"; cat $R/coop_layout.txt | cut -c1-200
tar czf $OUT/results.tgz -C $R . && rm -r $R
