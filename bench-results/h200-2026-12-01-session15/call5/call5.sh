# Session 15, call 5: which part of call 4's `vH` (call 2's vP) moved d = 96 and 192 up (and
# d = 160 causal and d = 256 down): `vA` only declares the score fragments outside the key loop,
# `vB` only stages K and V through a function that stores one of them (all K rows, then all V
# rows, instead of both per loaded vec4); `vH` as in call 4 (experiments/*.diff). Shader files
# through WGPU_FLASH_ATTN_SHADER_DIR, call 1's binaries (`base`, the committed tree).
source .device/gpu/prelude.sh; export WGPU_BACKEND=vulkan
tar xzf .device/bin.tgz -C .device
R=$OUT/r; mkdir -p $R/cache; B=.device/bin
T0=$(date +%s); el() { echo "[$(( $(date +%s) - T0 )) s]"; }
nvidia-smi --query-gpu=timestamp,clocks.sm,clocks.mem,power.draw,temperature.gpu --format=csv -lms 250 > $R/clocks.csv 2>&1 &
CLK=$!
run() { local d=$1; shift; if [ $d != base ]; then WGPU_FLASH_ATTN_SHADER_DIR=.device/$d "$@"; else "$@"; fi; }
for v in vA vB; do
  mkdir -p $R/cache/$v
  run $v timeout 60 $B/kernel_stats --kernels coop-matrix --dims 64,96,128,160,192,256 --dtypes f16 --cache $R/cache/$v > $R/stats_$v.txt 2>&1
  echo "$v $(grep -E "Register" $R/stats_$v.txt | tr -s ' ' | tr '\n' ' ')"
done
A="--tokens 16384 --seqs 8192 --dtypes f16 --baseline off --kernels coop-matrix --runs 20 --warmup 5 --warmup-ms 300 --check-rows 8 --causal both --dims 64,96,128,160,192,256"
for round in 1 2; do for v in base vA vB vH; do
  echo "== $v round $round $(el)"
  run $v timeout 100 $B/attention $A --json $R/${v}_$round.json > $R/${v}_$round.txt 2>&1
  grep -E "^\| NVIDIA|panic|rror" $R/${v}_$round.txt | cut -d'|' -f7,9,11,13,19 | tr -s ' ' | paste -sd';'
done; done
kill $CLK
echo "== done $(el)"
tar czf $OUT/results.tgz -C $R . && rm -r $R
