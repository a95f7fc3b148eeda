# Thirty-second round, call 6: test binaries of 445a9e8 plus (in its successor) the KV-cache test of f32 and bf16
# prefill chunks with f16 products (tests/kvcache.rs) in .device/bin. The tests that put f32 and
# bf16 on the tensor cores, with their output (each check prints its tier and errors):
# kvcache's prefill tests, and tiers' f32 / bf16 test.
source .device/gpu/prelude.sh; export WGPU_BACKEND=vulkan
R=$OUT/r; mkdir -p $R; B=.device/bin
T0=$(date +%s); el() { echo "[$(( $(date +%s) - T0 )) s]"; }
timeout 200 $B/kvcache prefill --test-threads=4 --nocapture > $R/test-kvcache-prefill.txt 2>&1; echo "kvcache rc=$? $(el)"
timeout 200 $B/tiers f32_and_bf16 --nocapture > $R/test-tiers-f32-bf16.txt 2>&1; echo "tiers rc=$? $(el)"
for t in kvcache-prefill tiers-f32-bf16; do grep -E "test result|panicked|FAILED|SKIPPED" $R/test-$t.txt | head -8; done
grep -cE "coop-matrix.*kernel err" $R/test-tiers-f32-bf16.txt
grep -E "coop-matrix.*kernel err" $R/test-tiers-f32-bf16.txt | head -4
grep -E "splits .*kernel err" $R/test-kvcache-prefill.txt | head -12
echo "== done $(el)"
tar czf $OUT/results.tgz -C $R . && rm -r $R
