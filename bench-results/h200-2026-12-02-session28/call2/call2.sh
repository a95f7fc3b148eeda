# Session 28, call 2 (binaries of d7c0915, whose tensor-core kernel is `base`; variants through
# WGPU_FLASH_ATTN_SHADER_DIR, kept as diffs in this folder):
#   split: with scores in registers and one K/V tile (every H200 plan but d = 32), K and V are
#          staged at different points of a tile: V after the first barrier (then Q K^T), the next
#          tile's K after the second (then P V), so that no store sits between two barriers;
#   splitb: split with the second barrier right after Q K^T (before the softmax).
# 1. base, split, splitb at N = 1k and 8k, d = 64 and 128, two rounds alternating;
# 2. the three at N = 8k, d = 96, 160, 192, 256; 3. registers (kernel_stats) at d = 64-256.
source .device/gpu/prelude.sh; export WGPU_BACKEND=vulkan
tar xzf .device/bin.tgz -C .device
R=$OUT/r; mkdir -p $R; B=.device/bin
for v in split splitb; do cp .device/$v/flash_fwd_coop.wgsl $R/$v-flash_fwd_coop.wgsl; done
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
for v in split splitb; do
  WGPU_FLASH_ATTN_SHADER_DIR=.device/$v timeout 60 $B/kernel_stats --kernels coop-matrix --dims 64,96,128,160,192,256 --dtypes f16 > $R/stats_$v.txt 2>&1
  echo "== stats $v $(el): $(grep -iE "register|spill|rror|panic" $R/stats_$v.txt | tr -s ' ' | paste -sd';')"
done
A="--tokens 16384 --dtypes f16 --kernels coop-matrix --baseline off --runs 10 --warmup 3 --warmup-ms 300 --check-rows 8 --causal both"
for p in "1 base:none split splitb:splitb" "2 splitb:splitb split base:none"; do
  set -- $p; r=$1; shift
  for v in "$@"; do run ${v%%:*}-r$r 60 ${v##*:} $A --seqs 1024,8192 --dims 64,128; done
done
for v in base:none split splitb:splitb; do
  run ${v%%:*}-dims 90 ${v##*:} $A --seqs 8192 --dims 96,160,192,256
done
echo "== done $(el)"
tar czf $OUT/results.tgz -C $R . && rm -r $R
