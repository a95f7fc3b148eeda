# Session 15, call 4: at d = 128 (and 64-192) the plan keeps one K/V tile, so call 2's pipelined
# form never ran there; its gains at d = 96 came from the score fragments declared outside the
# key loop (`vH` = call 2's vP). `vS` computes the next tile's scores before this tile's softmax
# with one K/V tile: Q K^T of the next tile, barrier, K of the tile after stored, softmax and
# P V, barrier, V of the next tile stored (experiments/split-pipelined.diff). Shader files
# through WGPU_FLASH_ATTN_SHADER_DIR, call 1's binaries (`base`, the committed tree).
source .device/gpu/prelude.sh; export WGPU_BACKEND=vulkan
tar xzf .device/bin.tgz -C .device
R=$OUT/r; mkdir -p $R/cache; B=.device/bin
T0=$(date +%s); el() { echo "[$(( $(date +%s) - T0 )) s]"; }
nvidia-smi --query-gpu=timestamp,clocks.sm,clocks.mem,power.draw,temperature.gpu --format=csv -lms 250 > $R/clocks.csv 2>&1 &
CLK=$!
run() { local d=$1; shift; if [ $d != base ]; then WGPU_FLASH_ATTN_SHADER_DIR=.device/$d "$@"; else "$@"; fi; }
for v in base vH vS; do
  mkdir -p $R/cache/$v
  run $v timeout 60 $B/kernel_stats --kernels coop-matrix --dims 64,96,128,160,192,256 --dtypes f16 --cache $R/cache/$v > $R/stats_$v.txt 2>&1
  echo "$v $(grep -E "Register" $R/stats_$v.txt | tr -s ' ' | tr '\n' ' ')"
done
A="--tokens 16384 --seqs 8192 --dtypes f16 --baseline off --kernels coop-matrix --runs 20 --warmup 5 --warmup-ms 300 --check-rows 8 --causal both --dims 64,96,128,160,192,256"
for round in 1 2; do for v in base vH vS; do
  echo "== $v round $round $(el)"
  run $v timeout 100 $B/attention $A --json $R/${v}_$round.json > $R/${v}_$round.txt 2>&1
  grep -E "^\| NVIDIA|panic|rror" $R/${v}_$round.txt | cut -d'|' -f7,9,11,13,19
done; done
kill $CLK
echo "== done $(el)"
tar czf $OUT/results.tgz -C $R . && rm -r $R
