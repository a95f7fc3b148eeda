# Thirty-second round, call 2 (same binaries as call 1, plus the test suites `tiers` and
# `forward`): call 1's two outliers again, and the suites on the tensor cores.
# 1. Registers and spills of the causal variants (call 1 compiled non-causal ones only).
# 2. f32 and bf16 with f16 products at d = 64 (f32 causal ran 85 TFLOP/s in call 1, f16 223)
#    and d = 256 (bf16 95 / 88 against f32's 133 / 149), two rounds.
# 3. The suites, side by side: tiers (its new f32 / bf16 test among them) and forward, whole.
source .device/gpu/prelude.sh; export WGPU_BACKEND=vulkan
R=$OUT/r; mkdir -p $R; B=.device/bin
T0=$(date +%s); el() { echo "[$(( $(date +%s) - T0 )) s]"; }
show() { echo "$2 $(grep -E "^\| NVIDIA|rror|panic|SKIP|skip" $1 | cut -d"|" -f6,7,8,9,11,13,19 | tr -s ' ' | paste -sd';')"; }
timeout 90 $B/kernel_stats --kernels coop-matrix --dims 64,256 --dtypes f16,f32,bf16 --f16-products --causal > $R/stats_causal.txt 2>&1
echo "== stats causal: $(grep -iE "^==|register|local|rror|panic" $R/stats_causal.txt | tr -s ' ' | paste -sd';')"
A="--tokens 16384 --kernels coop-matrix --baseline off --runs 10 --warmup 3 --warmup-ms 300 --check-rows 8 --causal both --seqs 8192 --f16-products --dims 64,256"
for r in 1 2; do
  order="f32 bf16 f16"; [ $r = 2 ] && order="f16 bf16 f32"
  for t in $order; do
    timeout 100 $B/attention $A --dtypes $t --json $R/$t-r$r.json > $R/$t-r$r.txt 2>&1
    show $R/$t-r$r.txt "$t-r$r $(el)"
  done
done
(timeout 400 $B/tiers --test-threads=8 > $R/test-tiers.txt 2>&1; echo "tiers rc=$? $(el)" > $R/tiers-rc.txt) &
(timeout 400 $B/forward --test-threads=8 > $R/test-forward.txt 2>&1; echo "forward rc=$? $(el)" > $R/forward-rc.txt) &
wait
for t in forward tiers; do cat $R/$t-rc.txt; grep -E "test result|panicked|FAILED|failed" $R/test-$t.txt | head -6; done
grep -E "f32|bf16" $R/test-tiers.txt | grep -c "kernel err"
echo "== done $(el)"
tar czf $OUT/results.tgz -C $R . && rm -r $R
