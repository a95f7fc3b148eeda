# Prepared in the thirty-second round, not run (the device was not available again). Binaries
# in .device/bin: the test binaries `kvcache` and `tiers` and the benchmark `attention` of
# 2d2d601 or later (cargo build --release --tests --benches), and `attention_ahead`: the same
# benchmark built with plan::coop_load_in_loop returning false (`elements && head_dim > 192 &&
# false`), i.e. the tile ahead held in registers at d = 256, the form before the thirtieth round.
# 1. The tests that put f32 and bf16 on the tensor cores, with their output (each check prints
#    its tier and errors): kvcache's prefill tests (the f32 / bf16 one is new since call 2's
#    build) and tiers' f32 / bf16 test.
# 2. bf16 and f32 with f16 products at d = 256, the library's in-loop loads against
#    `attention_ahead`, two rounds alternating: bf16 spills most in the in-loop form (call 2).
source .device/gpu/prelude.sh; export WGPU_BACKEND=vulkan
R=$OUT/r; mkdir -p $R; B=.device/bin
T0=$(date +%s); el() { echo "[$(( $(date +%s) - T0 )) s]"; }
timeout 200 $B/kvcache prefill --test-threads=4 --nocapture > $R/test-kvcache-prefill.txt 2>&1; echo "kvcache rc=$? $(el)"
timeout 200 $B/tiers f32_and_bf16 --nocapture > $R/test-tiers-f32-bf16.txt 2>&1; echo "tiers rc=$? $(el)"
for t in kvcache-prefill tiers-f32-bf16; do grep -E "test result|panicked|FAILED|SKIPPED" $R/test-$t.txt | head -8; done
grep -cE "coop-matrix.*kernel err" $R/test-tiers-f32-bf16.txt
grep -E "coop-matrix.*kernel err" $R/test-tiers-f32-bf16.txt | head -4
grep -E "splits .*kernel err" $R/test-kvcache-prefill.txt | head -12
A="--tokens 16384 --kernels coop-matrix --baseline off --runs 10 --warmup 3 --warmup-ms 300 --check-rows 8 --causal both --seqs 8192 --f16-products --dims 256 --dtypes bf16,f32"
for r in 1 2; do
  order="inloop ahead"; [ $r = 2 ] && order="ahead inloop"
  for v in $order; do
    bin=$B/attention; [ $v = ahead ] && bin=$B/attention_ahead
    timeout 100 $bin $A --json $R/$v-r$r.json > $R/$v-r$r.txt 2>&1
    echo "$v-r$r $(el) $(grep -E "^\| NVIDIA|rror|panic" $R/$v-r$r.txt | cut -d"|" -f7,8,9,11,13,19 | tr -s ' ' | paste -sd';')"
  done
done
echo "== done $(el)"
tar czf $OUT/results.tgz -C $R . && rm -r $R
