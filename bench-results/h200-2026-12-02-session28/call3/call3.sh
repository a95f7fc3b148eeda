# Session 28, call 3 (binaries of d7c0915, whose tensor-core kernel is `base`; variants through
# WGPU_FLASH_ATTN_SHADER_DIR, kept as diffs in this folder):
#   tree: with scores in registers, each row's tile max and sum taken as trees (four elements of
#         a key block at a time) instead of one long chain of dependent operations;
#   ldfast: the loads of the tile ahead, for a whole tile inside the sequence (not paged), from
#         one address per thread stepped by a row stride, instead of a clamped key per load;
#   both: tree and ldfast.
# 1. registers (kernel_stats) at d = 64-256; 2. the four at N = 1k and 8k, d = 64 and 128, two
# rounds alternating; 3. the four at N = 8k, d = 96, 160, 192, 256.
source .device/gpu/prelude.sh; export WGPU_BACKEND=vulkan
tar xzf .device/bin.tgz -C .device
R=$OUT/r; mkdir -p $R; B=.device/bin
T0=$(date +%s); el() { echo "[$(( $(date +%s) - T0 )) s]"; }
show() { echo "$2 $(grep -E "^\| NVIDIA|rror|panic|SKIP|skip" $1 | cut -d"|" -f6,7,9,13,19 | tr -s ' ' | paste -sd';')"; }
run() { # name, timeout, dir (none: the binary's own kernel), args...
  local n=$1 t=$2 d=$3; shift 3
  [ $(( $(date +%s) - T0 )) -gt 480 ] && { echo "skip $n $(el)"; return; }
  if [ $d = none ]; then
    timeout $t $B/attention "$@" --json $R/$n.json > $R/$n.txt 2>&1
  else
    WGPU_FLASH_ATTN_SHADER_DIR=.device/$d timeout $t $B/attention "$@" --json $R/$n.json > $R/$n.txt 2>&1
  fi
  show $R/$n.txt "$n $(el)"
}
for v in tree ldfast both; do
  WGPU_FLASH_ATTN_SHADER_DIR=.device/$v timeout 60 $B/kernel_stats --kernels coop-matrix --dims 64,96,128,160,192,256 --dtypes f16 > $R/stats_$v.txt 2>&1
  echo "== stats $v $(el): $(grep -iE "register|spill|rror|panic" $R/stats_$v.txt | tr -s ' ' | paste -sd';')"
done
A="--tokens 16384 --dtypes f16 --kernels coop-matrix --baseline off --runs 10 --warmup 3 --warmup-ms 300 --check-rows 8 --causal both"
for p in "1 base:none tree ldfast both" "2 both ldfast tree base:none"; do
  set -- $p; r=$1; shift
  for v in "$@"; do run ${v%%:*}-r$r 60 ${v##*:} $A --seqs 1024,8192 --dims 64,128; done
done
for v in base:none tree ldfast both; do
  run ${v%%:*}-dims 90 ${v##*:} $A --seqs 8192 --dims 96,160,192,256
done
echo "== done $(el)"
tar czf $OUT/results.tgz -C $R . && rm -r $R
