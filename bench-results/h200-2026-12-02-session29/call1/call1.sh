# Session 29, call 1 (binaries of 622af07, the twenty-eighth round's final tree; `pipe` through
# WGPU_FLASH_ATTN_SHADER_DIR, kept as pipe.diff in this folder):
#   pipe: with two K/V tiles (TWO_KV), tile t's K and V in different halves of kv_tile, K stored
#         two tiles ahead and V one, so that pass j computes the scores of tile j + 1 while its
#         softmax of tile j and O += P V of tile j run, with one barrier a tile.
# 1. registers (kernel_stats); 2. the plan's tiles, 128x32x32x8 and pipe at 128x32x32x8, d = 64,
# 96, 128, N = 1k and 8k, two rounds alternating; 3. the forward and tiers suites with this tree,
# and the forward suite with pipe (its d = 32 plan takes two K/V tiles).
source .device/gpu/prelude.sh; export WGPU_BACKEND=vulkan
R=$OUT/r; mkdir -p $R; B=.device/bin
T0=$(date +%s); el() { echo "[$(( $(date +%s) - T0 )) s]"; }
show() { echo "$2 $(grep -E "^\| NVIDIA|rror|panic|SKIP|skip" $1 | cut -d"|" -f6,7,9,11,13,19 | tr -s ' ' | paste -sd';')"; }
run() { # name, timeout, dir (none: the binary's own kernel), args...
  local n=$1 t=$2 d=$3; shift 3
  [ $(( $(date +%s) - T0 )) -gt 300 ] && { echo "skip $n $(el)"; return; }
  if [ $d = none ]; then
    timeout $t $B/attention "$@" --json $R/$n.json > $R/$n.txt 2>&1
  else
    WGPU_FLASH_ATTN_SHADER_DIR=.device/$d timeout $t $B/attention "$@" --json $R/$n.json > $R/$n.txt 2>&1
  fi
  show $R/$n.txt "$n $(el)"
}
S="--kernels coop-matrix --dims 64,96,128 --dtypes f16"
timeout 60 $B/kernel_stats $S > $R/stats_plan.txt 2>&1
timeout 60 $B/kernel_stats $S --tiles 128x32x32x8 > $R/stats_t32.txt 2>&1
WGPU_FLASH_ATTN_SHADER_DIR=.device/pipe timeout 60 $B/kernel_stats $S --tiles 128x32x32x8 > $R/stats_pipe.txt 2>&1
for f in plan t32 pipe; do echo "== stats $f: $(grep -iE "^==|register|rror|panic" $R/stats_$f.txt | tr -s ' ' | paste -sd';')"; done
A="--tokens 16384 --dtypes f16 --kernels coop-matrix --baseline off --runs 10 --warmup 3 --warmup-ms 300 --check-rows 8 --causal both --seqs 1024,8192 --dims 64,96,128"
T="--tiles 128x32x32x8"
for p in "1 plan:none t32:none pipe:pipe" "2 pipe:pipe t32:none plan:none"; do
  set -- $p; r=$1; shift
  for v in "$@"; do
    n=${v%%:*}; x=; [ $n != plan ] && x="$T"
    run $n-r$r 80 ${v##*:} $A $x
  done
done
echo "== tests $(el)"
(timeout 280 $B/forward --test-threads=8 > $R/test-forward.txt 2>&1; echo "forward rc=$? $(el)" > $R/forward-rc.txt) &
(timeout 280 $B/tiers --test-threads=8 > $R/test-tiers.txt 2>&1; echo "tiers rc=$? $(el)" > $R/tiers-rc.txt) &
(WGPU_FLASH_ATTN_SHADER_DIR=.device/pipe timeout 280 $B/forward --test-threads=8 > $R/test-forward-pipe.txt 2>&1; echo "forward-pipe rc=$? $(el)" > $R/forward-pipe-rc.txt) &
wait
for t in forward tiers forward-pipe; do cat $R/$t-rc.txt; grep -E "test result|panicked|FAILED|failed" $R/test-$t.txt | head -6; done
echo "== done $(el)"
tar czf $OUT/results.tgz -C $R . && rm -r $R
