# Prepared in the twenty-ninth round, run in the thirtieth (../../h200-2026-12-02-session30/call1). Binaries of this tree in .device/bin (attention,
# kernel_stats); the variants made first, on the build machine, from the diffs against 622af07's
# shaders/flash_fwd_coop.wgsl (this file's folder and ../call1, ../call2):
#   for v in pipe:../call1/pipe.diff pipe2:../call2/pipe2.diff pipe_rare:pipe_rare.diff; do
#     mkdir -p .device/${v%%:*}; cp shaders/flash_fwd_coop.wgsl .device/${v%%:*}/
#     patch .device/${v%%:*}/flash_fwd_coop.wgsl < bench-results/h200-2026-12-02-session29/experiments/${v##*:}
#   done
# 1. 48-key tiles at d = 96 and 128 (one K/V tile of 36.9 KB at d = 128): the plan's kernel and
#    pipe2, against the plan's 64-key tiles; 2. pipe_rare (pipe with O rescaled only when a row's
#    max grew by 2^THRESH) against pipe at 128x32x32x8, d = 64-128. Two rounds alternating.
source .device/gpu/prelude.sh; export WGPU_BACKEND=vulkan
R=$OUT/r; mkdir -p $R; B=.device/bin
T0=$(date +%s); el() { echo "[$(( $(date +%s) - T0 )) s]"; }
show() { echo "$2 $(grep -E "^\| NVIDIA|rror|panic|SKIP|skip" $1 | cut -d"|" -f6,7,9,11,13,19 | tr -s ' ' | paste -sd';')"; }
run() { # name, dir (none: the binary's own kernel), args...
  local n=$1 d=$2; shift 2
  [ $(( $(date +%s) - T0 )) -gt 400 ] && { echo "skip $n $(el)"; return; }
  if [ $d = none ]; then
    timeout 60 $B/attention "$@" --json $R/$n.json > $R/$n.txt 2>&1
  else
    WGPU_FLASH_ATTN_SHADER_DIR=.device/$d timeout 60 $B/attention "$@" --json $R/$n.json > $R/$n.txt 2>&1
  fi
  show $R/$n.txt "$n $(el)"
}
for v in base:none: t48:none:128x48x32x8 pipe2_48:pipe2:128x48x32x8 pipe:pipe:128x32x32x8 rare:pipe_rare:128x32x32x8; do
  IFS=: read n d t <<< "$v"
  if [ $d = none ]; then unset WGPU_FLASH_ATTN_SHADER_DIR; else export WGPU_FLASH_ATTN_SHADER_DIR=.device/$d; fi
  timeout 60 $B/kernel_stats --kernels coop-matrix --dims 64,96,128 --dtypes f16 ${t:+--tiles $t} > $R/stats_$n.txt 2>&1
  echo "== stats $n: $(grep -iE "^==|register|rror|panic" $R/stats_$n.txt | tr -s ' ' | paste -sd';')"
done
unset WGPU_FLASH_ATTN_SHADER_DIR
A="--tokens 16384 --dtypes f16 --kernels coop-matrix --baseline off --runs 10 --warmup 3 --warmup-ms 300 --check-rows 8 --causal both --seqs 8192"
for r in 1 2; do
  order="base t48 pipe2_48 pipe rare"; [ $r = 2 ] && order="rare pipe pipe2_48 t48 base"
  for n in $order; do
    case $n in
      base) run $n-r$r none $A --dims 96,128 ;;
      t48) run $n-r$r none $A --dims 96,128 --tiles 128x48x32x8 ;;
      pipe2_48) run $n-r$r pipe2 $A --dims 96,128 --tiles 128x48x32x8 ;;
      pipe) run $n-r$r pipe $A --dims 64,96,128 --tiles 128x32x32x8 ;;
      rare) run $n-r$r pipe_rare $A --dims 64,96,128 --tiles 128x32x32x8 ;;
    esac
  done
done
echo "== done $(el)"
tar czf $OUT/results.tgz -C $R . && rm -r $R
