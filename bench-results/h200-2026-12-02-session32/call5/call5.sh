# Thirty-second round, call 5 (call 1's binaries): call 4 ran f32 and bf16 with f16 products at
# N = 1k far below N = 2k (its first configurations: bf16 36.0 / 22.3 at d = 64, 47.0 / 31.2 at
# d = 128). N = 1k and 2k again, f16 beside them, two rounds alternating.
source .device/gpu/prelude.sh; export WGPU_BACKEND=vulkan
R=$OUT/r; mkdir -p $R; B=.device/bin
T0=$(date +%s); el() { echo "[$(( $(date +%s) - T0 )) s]"; }
show() { echo "$2 $(grep -E "^\| NVIDIA|rror|panic|SKIP|skip" $1 | cut -d"|" -f6,7,8,9,11,13,19 | tr -s ' ' | paste -sd';')"; }
A="--tokens 16384 --seqs 1024,2048 --dims 64,128 --f16-products --causal both --kernels coop-matrix --baseline off --runs 10 --warmup 5 --warmup-ms 300 --check-rows 8"
for r in 1 2; do
  order="f32 bf16 f16"; [ $r = 2 ] && order="f16 bf16 f32"
  for t in $order; do
    timeout 100 $B/attention $A --dtypes $t --json $R/$t-r$r.json > $R/$t-r$r.txt 2>&1
    show $R/$t-r$r.txt "$t-r$r $(el)"
  done
done
echo "== done $(el)"
tar czf $OUT/results.tgz -C $R . && rm -r $R
