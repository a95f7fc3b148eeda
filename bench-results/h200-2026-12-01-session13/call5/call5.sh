# Session 13, call 5: the final tree (as calls 3-4): key tile lengths with scores in registers
# again, now that the loads' form changed (d = 64 and 96 ran in call 2 with the same kernel).
source .device/gpu/prelude.sh; export WGPU_BACKEND=vulkan
tar xzf .device/bin.tgz -C .device
R=$OUT/r; mkdir -p $R; B=.device/bin
T0=$(date +%s); el() { echo "[$(( $(date +%s) - T0 )) s]"; }
A="--tokens 16384 --seqs 8192 --dtypes f16 --baseline off --kernels coop-matrix --runs 20 --warmup 5 --warmup-ms 300 --check-rows 8 --causal both"
for dt in 32:128x32x32x8,128x64x32x8,128x128x32x8 128:128x32x32x8,128x64x32x8 160:128x16x32x8,128x32x32x8 192:128x16x32x8,128x32x32x8 256:128x16x32x8,128x32x32x8; do
d=${dt%%:*}; t=${dt#*:}; echo "== d=$d $(el)"
timeout 100 $B/attention $A --dims $d --tiles $t --json $R/sweep$d.json > $R/sweep$d.txt 2>&1
grep -E "^\| NVIDIA|rror|panic" $R/sweep$d.txt | cut -d'|' -f6-15; done
echo "== done $(el)"
tar czf $OUT/results.tgz -C $R . && rm -r $R
