# Session 15, call 3: what bounds the pipelined key loop (call 2's vP) at d = 128 and 64. Each
# diagnostic variant computes wrong output on purpose and is timed only: D1 reads one V fragment
# per 16 columns of O instead of one per key block (a quarter of the V fragment reads), D2 one K
# fragment per key block (an eighth of the K reads), D12 both, D3 no exp2 (P = the exponent),
# D4 no workgroup barrier in the key loop. Shader files through WGPU_FLASH_ATTN_SHADER_DIR,
# call 1's binaries; experiments/diagnostics.sh makes them from vP.
source .device/gpu/prelude.sh; export WGPU_BACKEND=vulkan
tar xzf .device/bin.tgz -C .device
R=$OUT/r; mkdir -p $R/cache; B=.device/bin
T0=$(date +%s); el() { echo "[$(( $(date +%s) - T0 )) s]"; }
nvidia-smi --query-gpu=timestamp,clocks.sm,clocks.mem,power.draw,temperature.gpu --format=csv -lms 250 > $R/clocks.csv 2>&1 &
CLK=$!
V="vP D1 D2 D12 D3 D4"
for v in $V; do
  mkdir -p $R/cache/$v
  WGPU_FLASH_ATTN_SHADER_DIR=.device/$v timeout 60 $B/kernel_stats --kernels coop-matrix --dims 128 --dtypes f16 --cache $R/cache/$v > $R/stats_$v.txt 2>&1
  echo "$v $(grep -E "Register" $R/stats_$v.txt)"
done
A="--tokens 16384 --seqs 8192 --dtypes f16 --baseline off --kernels coop-matrix --runs 20 --warmup 5 --warmup-ms 300 --check-rows 2 --causal both --dims 128,64"
for round in 1 2; do for v in $V; do
  echo "== $v round $round $(el)"
  WGPU_FLASH_ATTN_SHADER_DIR=.device/$v timeout 100 $B/attention $A --json $R/${v}_$round.json > $R/${v}_$round.txt 2>&1
  grep -E "^\| NVIDIA|panic" $R/${v}_$round.txt | cut -d'|' -f7,9,11,13,19
done; done
kill $CLK
echo "== done $(el)"
tar czf $OUT/results.tgz -C $R . && rm -r $R
