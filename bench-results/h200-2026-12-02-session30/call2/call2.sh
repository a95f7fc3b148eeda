# Thirtieth round, call 2: the plan's 64-key tiles against 48-key tiles at d = 128 (call 1's base
# rows at d = 128 ran in a slow series), three rounds alternating. Binaries of 622af07's kernel.
source .device/gpu/prelude.sh; export WGPU_BACKEND=vulkan
R=$OUT/r; mkdir -p $R; B=.device/bin
T0=$(date +%s); el() { echo "[$(( $(date +%s) - T0 )) s]"; }
show() { echo "$2 $(grep -E "^\| NVIDIA|rror|panic|SKIP|skip" $1 | cut -d"|" -f6,7,9,11,13,19 | tr -s ' ' | paste -sd';')"; }
A="--tokens 16384 --dtypes f16 --kernels coop-matrix --baseline off --runs 10 --warmup 3 --warmup-ms 300 --check-rows 8 --causal both --seqs 8192 --dims 128"
for r in 1 2 3; do
  order="base t48"; [ $r = 2 ] && order="t48 base"
  for n in $order; do
    [ $n = t48 ] && t="--tiles 128x48x32x8" || t=""
    timeout 60 $B/attention $A $t --json $R/$n-r$r.json > $R/$n-r$r.txt 2>&1
    show $R/$n-r$r.txt "$n-r$r $(el)"
  done
done
echo "== done $(el)"
tar czf $OUT/results.tgz -C $R . && rm -r $R
