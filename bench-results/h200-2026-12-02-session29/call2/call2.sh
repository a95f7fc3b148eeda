# Session 29, call 2 (binaries of 622af07; `pipe2` through WGPU_FLASH_ATTN_SHADER_DIR, kept as
# pipe2.diff in this folder): call 1's `pipe` (two K/V tiles) plus the same pipelining with one
# K/V tile: pass j stores K(j + 1) and V(j) between its two barriers, then makes the scores of
# tile j + 1 while its softmax of tile j and O += P V of tile j run. Every plan with scores in
# registers takes it.
# 1. registers; 2. the plan's tiles, base and pipe2, d = 64-192, N = 1k and 8k, two rounds
# alternating, and pipe2 at 128x64x32x8 for d = 64 (two K/V tiles of 64 keys); 3. the tiers
# suite's every_coop_tile_candidate alone, and the forward suite with pipe2.
source .device/gpu/prelude.sh; export WGPU_BACKEND=vulkan
R=$OUT/r; mkdir -p $R; B=.device/bin
T0=$(date +%s); el() { echo "[$(( $(date +%s) - T0 )) s]"; }
show() { echo "$2 $(grep -E "^\| NVIDIA|rror|panic|SKIP|skip" $1 | cut -d"|" -f6,7,9,11,13,19 | tr -s ' ' | paste -sd';')"; }
run() { # name, timeout, dir (none: the binary's own kernel), args...
  local n=$1 t=$2 d=$3; shift 3
  [ $(( $(date +%s) - T0 )) -gt 260 ] && { echo "skip $n $(el)"; return; }
  if [ $d = none ]; then
    timeout $t $B/attention "$@" --json $R/$n.json > $R/$n.txt 2>&1
  else
    WGPU_FLASH_ATTN_SHADER_DIR=.device/$d timeout $t $B/attention "$@" --json $R/$n.json > $R/$n.txt 2>&1
  fi
  show $R/$n.txt "$n $(el)"
}
S="--kernels coop-matrix --dims 64,96,128,160,192 --dtypes f16"
WGPU_FLASH_ATTN_SHADER_DIR=.device/pipe2 timeout 60 $B/kernel_stats $S > $R/stats_pipe2.txt 2>&1
WGPU_FLASH_ATTN_SHADER_DIR=.device/pipe2 timeout 60 $B/kernel_stats --kernels coop-matrix --dims 64 --dtypes f16 --tiles 128x64x32x8 > $R/stats_pipe2_64.txt 2>&1
for f in pipe2 pipe2_64; do echo "== stats $f: $(grep -iE "^==|register|rror|panic" $R/stats_$f.txt | tr -s ' ' | paste -sd';')"; done
A="--tokens 16384 --dtypes f16 --kernels coop-matrix --baseline off --runs 10 --warmup 3 --warmup-ms 300 --check-rows 8 --causal both --seqs 1024,8192"
for p in "1 base:none pipe2:pipe2" "2 pipe2:pipe2 base:none"; do
  set -- $p; r=$1; shift
  for v in "$@"; do run ${v%%:*}-r$r 90 ${v##*:} $A --dims 64,96,128,160,192; done
  run pipe2-64x-r$r 40 pipe2 $A --dims 64 --tiles 128x64x32x8
done
echo "== tests $(el)"
(timeout 330 $B/tiers every_coop_tile_candidate --nocapture > $R/test-tiers.txt 2>&1; echo "tiers rc=$? $(el)" > $R/tiers-rc.txt) &
(WGPU_FLASH_ATTN_SHADER_DIR=.device/pipe2 timeout 300 $B/forward --test-threads=8 > $R/test-forward-pipe2.txt 2>&1; echo "forward-pipe2 rc=$? $(el)" > $R/forward-pipe2-rc.txt) &
wait
for t in tiers forward-pipe2; do cat $R/$t-rc.txt; grep -E "test result|panicked|FAILED|failed" $R/test-$t.txt | head -6; done
grep -E "coop tiles|SKIPPED" $R/test-tiers.txt | tail -4
echo "== done $(el)"
tar czf $OUT/results.tgz -C $R . && rm -r $R
