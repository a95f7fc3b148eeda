# Thirtieth round, call 4: `qs` (qs.diff against 622af07's shaders/flash_fwd_coop.wgsl, in
# .device/qs): the Q block kept in workgroup memory and read as fragments each key tile, so that
# a subgroup can own 32 rows (R16 = 2) without 64 registers of Q; one K/V tile, loaded in the
# key loop itself (no registers hold the tile ahead). Tiles of 2 subgroups (64 rows), against
# the plan's kernel; two rounds alternating. Call 3 ran a form whose zeroing loop of the
# scores stayed a loop (its bound R16 * N16 is not one the host unrolls), so the scores lived in
# memory; here that loop is two unrolled ones. Binaries of 622af07's kernel.
source .device/gpu/prelude.sh; export WGPU_BACKEND=vulkan
R=$OUT/r; mkdir -p $R; B=.device/bin
T0=$(date +%s); el() { echo "[$(( $(date +%s) - T0 )) s]"; }
show() { echo "$2 $(grep -E "^\| NVIDIA|rror|panic|SKIP|skip" $1 | cut -d"|" -f6,7,9,11,13,19 | tr -s ' ' | paste -sd';')"; }
stats() { # name, dims, tiles
  WGPU_FLASH_ATTN_SHADER_DIR=.device/qs timeout 60 $B/kernel_stats --kernels coop-matrix --dims $2 --dtypes f16 --tiles $3 > $R/stats_$1.txt 2>&1
  echo "== stats $1: $(grep -iE "^==|register|spill|rror|panic" $R/stats_$1.txt | tr -s ' ' | paste -sd';')"
}
stats d128 128 64x32x32x2,64x48x32x2
stats d96 96 64x32x32x2,64x48x32x2,64x64x32x2
stats d64 64 64x32x32x2,64x64x32x2
A="--tokens 16384 --dtypes f16 --kernels coop-matrix --baseline off --runs 10 --warmup 3 --warmup-ms 300 --check-rows 8 --causal both"
run() { # name, dir (none: the binary's own kernel), args...
  local n=$1 d=$2; shift 2
  if [ $d = none ]; then
    timeout 90 $B/attention "$@" --json $R/$n.json > $R/$n.txt 2>&1
  else
    WGPU_FLASH_ATTN_SHADER_DIR=.device/$d timeout 90 $B/attention "$@" --json $R/$n.json > $R/$n.txt 2>&1
  fi
  show $R/$n.txt "$n $(el)"
}
# Correctness of the variant's masks and edges first: a length that no tile divides.
run qs-check qs $A --seqs 1000 --dims 64,128 --tiles 64x32x32x2
for r in 1 2; do
  order="base r2lib qs128 qs96 qs64"; [ $r = 2 ] && order="qs64 qs96 qs128 r2lib base"
  for n in $order; do
    case $n in
      r2lib) run $n-r$r none $A --seqs 8192 --dims 64 --tiles 64x32x32x2,64x64x32x2 ;;
      base) run $n-r$r none $A --seqs 8192 --dims 64,96,128 ;;
      qs128) run $n-r$r qs $A --seqs 8192 --dims 128 --tiles 64x32x32x2,64x48x32x2 ;;
      qs96) run $n-r$r qs $A --seqs 8192 --dims 96 --tiles 64x32x32x2,64x48x32x2,64x64x32x2 ;;
      qs64) run $n-r$r qs $A --seqs 8192 --dims 64 --tiles 64x32x32x2,64x64x32x2 ;;
    esac
  done
done
echo "== done $(el)"
tar czf $OUT/results.tgz -C $R . && rm -r $R
