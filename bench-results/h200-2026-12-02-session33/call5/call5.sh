# Thirty-third round, call 5: a7a3c19 (the tensor-core kernel's banded code above d = 224 for
# every problem) against 88a916f's build (`attention_old`): f16, and f32 / bf16 with f16 products,
# d = 240 and 256, non-causal, N = 8k, two rounds alternating; then the suites `tiers` and
# `forward` of a7a3c19 side by side (release test binaries, cargo build --release --tests).
source .device/gpu/prelude.sh; export WGPU_BACKEND=vulkan
R=$OUT/r; mkdir -p $R; B=.device/bin
T0=$(date +%s); el() { echo "[$(( $(date +%s) - T0 )) s]"; }
show() { echo "$2 $(grep -E "^\| NVIDIA|rror|panic" $1 | cut -d"|" -f7,8,9,11,13,19 | tr -s ' ' | paste -sd';')"; }
A="--tokens 16384 --kernels coop-matrix --baseline off --runs 10 --warmup 3 --warmup-ms 300 --check-rows 8 --causal off --seqs 8192 --dims 240,256 --f16-products --dtypes f16,f32,bf16"
for r in 1 2; do
  order="new old"; [ $r = 2 ] && order="old new"
  for v in $order; do
    bin=$B/attention; [ $v = old ] && bin=$B/attention_old
    timeout 150 $bin $A --json $R/$v-r$r.json > $R/$v-r$r.txt 2>&1; show $R/$v-r$r.txt "$v-r$r $(el)"
  done
done
(timeout 380 $B/tiers --test-threads=12 --nocapture > $R/test-tiers.txt 2>&1; echo "tiers rc=$? $(el)" > $R/tiers-rc.txt) &
(timeout 380 $B/forward --test-threads=6 > $R/test-forward.txt 2>&1; echo "forward rc=$? $(el)" > $R/forward-rc.txt) &
wait
for t in forward tiers; do cat $R/$t-rc.txt; grep -E "test result|panicked|FAILED|failed" $R/test-$t.txt | head -6; done
grep -E "d(240|256)" $R/test-tiers.txt | grep "coop-matrix" | grep -v causal | head -6
echo "== done $(el)"
tar czf $OUT/results.tgz -C $R . && rm -r $R
