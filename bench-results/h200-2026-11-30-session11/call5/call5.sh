# Session 11, call 5: every tensor-core candidate tile with scores in registers (the binaries of
# call 4), d = 64 and 128, N = 8k, f16, non-causal and causal.
source .device/gpu/prelude.sh; export WGPU_BACKEND=vulkan
tar xzf .device/bin.tgz -C .device
R=$OUT/r; mkdir -p $R; B=.device/bin
T0=$(date +%s); el() { echo "[$(( $(date +%s) - T0 )) s]"; }
A="--tokens 16384 --seqs 8192 --dtypes f16 --baseline off --kernels coop-matrix --runs 10 --warmup 3 --warmup-ms 200 --check-rows 4 --causal both --coop-elements on"
T="128x16x32x8,64x16x32x4,128x16x32x4,128x32x32x8,128x32x32x4,64x32x32x4,32x16x32x2,16x16x32x1,256x16x32x8"
for d in 128 64; do echo "== tiles d=$d $(el)"
timeout 200 $B/attention $A --dims $d --tiles $T --json $R/tiles_d$d.json > $R/tiles_d$d.txt 2>&1
grep -E "^\| NVIDIA|rror|panic|SKIPPED" $R/tiles_d$d.txt | cut -d'|' -f6-15 | tail -20; done
echo "== done $(el)"
tar czf $OUT/results.tgz -C $R . && rm -r $R
