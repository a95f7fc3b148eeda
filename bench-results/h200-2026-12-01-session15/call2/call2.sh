# Session 15, call 2: the key loop computing the next tile's scores during this tile's softmax
# (PIPELINED, where two K/V tiles fit: scores in registers at d <= 128), as shader files read
# through WGPU_FLASH_ATTN_SHADER_DIR by call 1's binaries (the committed tree, `base`):
# `vP` issues the next tile's Q K^T after this tile's masking, `vE` before it
# (experiments/pipelined.diff). Driver statistics, both builds alternating, PyTorch beside;
# the tiers and variants tests on vP.
source .device/gpu/prelude.sh; export WGPU_BACKEND=vulkan
tar xzf .device/bin.tgz -C .device
R=$OUT/r; mkdir -p $R/cache; B=.device/bin
T0=$(date +%s); el() { echo "[$(( $(date +%s) - T0 )) s]"; }
nvidia-smi --query-gpu=timestamp,clocks.sm,clocks.mem,power.draw,temperature.gpu --format=csv -lms 250 > $R/clocks.csv 2>&1 &
CLK=$!
run() { # name, shader dir (empty: built-in), command...
  local n=$1 d=$2; shift 2
  if [ -n "$d" ]; then WGPU_FLASH_ATTN_SHADER_DIR=$d "$@"; else "$@"; fi
}
for v in base vP vE; do d=""; [ $v != base ] && d=.device/$v
  echo "== stats $v $(el)"
  mkdir -p $R/cache/$v
  run $v "$d" timeout 60 $B/kernel_stats --kernels coop-matrix --dims 32,64,96,128 --dtypes f16 --cache $R/cache/$v > $R/stats_$v.txt 2>&1
  grep -E "^== |Register|[Ss]pill" $R/stats_$v.txt | paste - - | cut -c1-120
done
A="--tokens 16384 --seqs 8192 --dtypes f16 --baseline off --kernels coop-matrix --runs 20 --warmup 5 --warmup-ms 300 --check-rows 8 --causal both --dims 32,64,96,128"
for round in 1 2; do for v in base vP vE; do d=""; [ $v != base ] && d=.device/$v
  echo "== $v round $round $(el)"
  run $v "$d" timeout 100 $B/attention $A --json $R/${v}_$round.json > $R/${v}_$round.txt 2>&1
  grep -E "^\| NVIDIA|rror|panic" $R/${v}_$round.txt | cut -d'|' -f7,9,11,13,19
done; done
echo "== torch $(el)"; timeout 120 python3 .device/py/torch_sdpa.py --seqs 8192 --dims 128,64 --dtypes f16 --causal both --backends flash,cudnn --json $R/torch_sdpa.json > $R/torch_sdpa.txt 2>&1; tail -8 $R/torch_sdpa.txt
kill $CLK
echo "== test tiers (vP) $(el)"
WGPU_FLASH_ATTN_SHADER_DIR=.device/vP timeout 120 $B/tiers options_on_every_tier awkward_shapes growing random > $R/test-tiers-vP.txt 2>&1; echo "rc=$?"; grep -E "test result|panicked|FAILED|failed" $R/test-tiers-vP.txt | head -8
echo "== test variants (vP) $(el)"
WGPU_FLASH_ATTN_SHADER_DIR=.device/vP timeout 120 $B/variants --test-threads=16 > $R/test-variants-vP.txt 2>&1; echo "rc=$?"; grep -E "test result|panicked|FAILED|failed" $R/test-variants-vP.txt | head -8
echo "== done $(el)"
tar czf $OUT/results.tgz -C $R . && rm -r $R
