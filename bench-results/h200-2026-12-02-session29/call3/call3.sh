# Session 29, call 3 (binaries of 622af07; `ring3` through WGPU_FLASH_ATTN_SHADER_DIR, kept as
# ring3.diff in this folder): call 1's `pipe` (two K/V tiles, the next tile's scores made while
# this tile's softmax runs) wherever the plan takes two K/V tiles (d <= 128 where they fit: the
# plan's tiles at d = 32), and at d = 160, where two 32-key tiles fit 48 KiB once the score
# block shrinks to the one zero fragment (scores in registers use it for nothing else).
# 1. registers; 2. the plan's tiles, base and ring3, d = 32 and 160, N = 1k and 8k, two rounds
# alternating; 3. the forward suite with ring3.
source .device/gpu/prelude.sh; export WGPU_BACKEND=vulkan
R=$OUT/r; mkdir -p $R; B=.device/bin
T0=$(date +%s); el() { echo "[$(( $(date +%s) - T0 )) s]"; }
show() { echo "$2 $(grep -E "^\| NVIDIA|rror|panic|SKIP|skip" $1 | cut -d"|" -f6,7,9,11,13,19 | tr -s ' ' | paste -sd';')"; }
run() { # name, timeout, dir (none: the binary's own kernel), args...
  local n=$1 t=$2 d=$3; shift 3
  [ $(( $(date +%s) - T0 )) -gt 200 ] && { echo "skip $n $(el)"; return; }
  if [ $d = none ]; then
    timeout $t $B/attention "$@" --json $R/$n.json > $R/$n.txt 2>&1
  else
    WGPU_FLASH_ATTN_SHADER_DIR=.device/$d timeout $t $B/attention "$@" --json $R/$n.json > $R/$n.txt 2>&1
  fi
  show $R/$n.txt "$n $(el)"
}
S="--kernels coop-matrix --dims 32,160 --dtypes f16"
timeout 60 $B/kernel_stats $S > $R/stats_base.txt 2>&1
WGPU_FLASH_ATTN_SHADER_DIR=.device/ring3 timeout 60 $B/kernel_stats $S > $R/stats_ring3.txt 2>&1
for f in base ring3; do echo "== stats $f: $(grep -iE "^==|register|shared|rror|panic" $R/stats_$f.txt | tr -s ' ' | paste -sd';')"; done
A="--tokens 16384 --dtypes f16 --kernels coop-matrix --baseline off --runs 10 --warmup 3 --warmup-ms 300 --check-rows 8 --causal both --seqs 1024,8192 --dims 32,160"
for p in "1 base:none ring3:ring3" "2 ring3:ring3 base:none"; do
  set -- $p; r=$1; shift
  for v in "$@"; do run ${v%%:*}-r$r 60 ${v##*:} $A; done
done
echo "== tests $(el)"
WGPU_FLASH_ATTN_SHADER_DIR=.device/ring3 timeout 280 $B/forward --test-threads=8 > $R/test-forward-ring3.txt 2>&1; echo "forward-ring3 rc=$? $(el)"
grep -E "test result|panicked|FAILED|failed" $R/test-forward-ring3.txt | head -6
echo "== done $(el)"
tar czf $OUT/results.tgz -C $R . && rm -r $R
