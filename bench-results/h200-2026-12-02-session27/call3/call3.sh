# Session 27, call 3 (binaries of 9392ce1; kernels through WGPU_FLASH_ATTN_SHADER_DIR):
#   qburst: cfa89ab's shaders/flash_fwd_coop.wgsl;
#   v4: qburst, and with ELEMENTS O written straight from registers (call 2's v3 without its
#       early K/V loads, which cost up to 8% causal at d = 64).
# 1. the forward, variants and tiers suites with v4, at once (correctness only);
# 2. PyTorch's FlashAttention-2 and cuDNN, f16, the papers' shapes at d = 64 and 128;
# 3. qburst against v4 at N = 1k and 8k, d = 64 and 128, two rounds alternating; v4 at every N
#    of the sweep (for the fixed-cost fit); v4 at the other head dims at N = 8k.
source .device/gpu/prelude.sh; export WGPU_BACKEND=vulkan
tar xzf .device/bin.tgz -C .device
R=$OUT/r; mkdir -p $R; B=.device/bin
cp .device/v4/flash_fwd_coop.wgsl $R/v4-flash_fwd_coop.wgsl
T0=$(date +%s); el() { echo "[$(( $(date +%s) - T0 )) s]"; }
show() { echo "$2 $(grep -E "^\| NVIDIA|rror|panic|SKIP|skip" $1 | cut -d"|" -f6,7,9,13,19 | tr -s ' ' | paste -sd';')"; }
run() { # name, timeout, dir, args...
  local n=$1 t=$2 d=$3; shift 3
  [ $(( $(date +%s) - T0 )) -gt 520 ] && { echo "skip $n $(el)"; return; }
  WGPU_FLASH_ATTN_SHADER_DIR=.device/$d timeout $t $B/attention "$@" --json $R/$n.json > $R/$n.txt 2>&1
  show $R/$n.txt "$n $(el)"
}
for t in forward variants tiers; do
  (WGPU_FLASH_ATTN_SHADER_DIR=.device/v4 timeout 300 $B/$t --test-threads=8 > $R/test-$t.txt 2>&1; echo "$t rc=$? $(el)" > $R/$t-rc.txt) &
done
wait
for t in forward variants tiers; do cat $R/$t-rc.txt; grep -E "test result|panicked|FAILED|failed" $R/test-$t.txt | head -6; done
timeout 120 python3 benches/torch_sdpa.py --dtypes f16 --backends flash,cudnn --json $R/torch.json > $R/torch.txt 2>&1; echo "torch rc=$? $(el)"
grep -E "^(flash|cudnn)" $R/torch.txt | grep -E "N=(1024|8192)" | awk '{print $1,$3,$4,$7,$10}' | paste -sd';'
A="--tokens 16384 --seqs 1024,8192 --dtypes f16 --kernels coop-matrix --baseline off --runs 10 --warmup 3 --warmup-ms 300 --check-rows 8 --causal both --dims 64,128"
run qburst-r1 90 qburst $A; run v4-r1 90 v4 $A; run v4-r2 90 v4 $A; run qburst-r2 90 qburst $A
run v4-seqs 120 v4 --tokens 16384 --seqs 1024,2048,4096,8192,16384 --dtypes f16 --kernels coop-matrix --baseline off --runs 10 --warmup 3 --warmup-ms 300 --check-rows 8 --causal both --dims 64,128
run v4-dims 90 v4 --tokens 16384 --seqs 8192 --dtypes f16 --kernels coop-matrix --baseline off --runs 10 --warmup 3 --warmup-ms 300 --check-rows 8 --causal both --dims 32,96,160,192,256
echo "== done $(el)"
tar czf $OUT/results.tgz -C $R . && rm -r $R
