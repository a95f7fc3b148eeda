# Prepared in the thirtieth round, run in the thirty-first (../../h200-2026-12-02-session31/call1). Binaries of this tree (5c5a4b2, or later with the
# same kernel) in .device/bin: attention, kernel_stats, forward, tiers (cargo build --release
# --tests --examples --benches). The variant `inl` made first, on the build machine, from
# 622af07's shader and call 6's diff (with this tree's binaries it runs at d <= 192 only: above,
# the host replaces blocks that file lacks, and the library's own kernel is that form):
#   mkdir -p .device/inl; git show 622af07:shaders/flash_fwd_coop.wgsl > .device/inl/flash_fwd_coop.wgsl
#   patch .device/inl/flash_fwd_coop.wgsl < bench-results/h200-2026-12-02-session30/call6/inl.diff
# 1. Each K/V tile loaded in its own pass with two workgroups of 4 subgroups an SM (64x32x32x4),
#    so that one workgroup's exposed loads overlap the other's products: the plan's kernel at
#    d = 208-256 (the in-loop form there) with its tiles and 64x32x32x4; at d = 160 and 192 the
#    plan's kernel and `inl`, both tiles. Two rounds alternating.
# 2. The forward suite (its head-dim test runs d = 224 since the thirtieth round, the in-loop form
#    above d = 192 that only call 8's benchmark ran on the H200) and tiers, side by side.
source .device/gpu/prelude.sh; export WGPU_BACKEND=vulkan
R=$OUT/r; mkdir -p $R; B=.device/bin
T0=$(date +%s); el() { echo "[$(( $(date +%s) - T0 )) s]"; }
show() { echo "$2 $(grep -E "^\| NVIDIA|rror|panic|SKIP|skip" $1 | cut -d"|" -f6,7,9,11,13,19 | tr -s ' ' | paste -sd';')"; }
T="--tiles 128x32x32x8,64x32x32x4"
timeout 60 $B/kernel_stats --kernels coop-matrix --dims 160,192,208,224,240,256 --dtypes f16 $T > $R/stats_base.txt 2>&1
WGPU_FLASH_ATTN_SHADER_DIR=.device/inl timeout 60 $B/kernel_stats --kernels coop-matrix --dims 160,192 --dtypes f16 $T > $R/stats_inl.txt 2>&1
for v in base inl; do echo "== stats $v: $(grep -iE "^==|register|rror|panic" $R/stats_$v.txt | tr -s ' ' | paste -sd';')"; done
A="--tokens 16384 --dtypes f16 --kernels coop-matrix --baseline off --runs 10 --warmup 3 --warmup-ms 300 --check-rows 8 --causal both --seqs 8192 $T"
for r in 1 2; do
  order="high low inl"; [ $r = 2 ] && order="inl low high"
  for n in $order; do
    case $n in
      high) timeout 150 $B/attention $A --dims 208,224,240,256 --json $R/$n-r$r.json > $R/$n-r$r.txt 2>&1 ;;
      low) timeout 120 $B/attention $A --dims 160,192 --json $R/$n-r$r.json > $R/$n-r$r.txt 2>&1 ;;
      inl) WGPU_FLASH_ATTN_SHADER_DIR=.device/inl timeout 120 $B/attention $A --dims 160,192 --json $R/$n-r$r.json > $R/$n-r$r.txt 2>&1 ;;
    esac
    show $R/$n-r$r.txt "$n-r$r $(el)"
  done
done
(timeout 380 $B/forward --test-threads=8 > $R/test-forward.txt 2>&1; echo "forward rc=$? $(el)" > $R/forward-rc.txt) &
(timeout 380 $B/tiers --test-threads=8 > $R/test-tiers.txt 2>&1; echo "tiers rc=$? $(el)" > $R/tiers-rc.txt) &
wait
for t in forward tiers; do cat $R/$t-rc.txt; grep -E "test result|panicked|FAILED|failed" $R/test-$t.txt | head -6; done
echo "== done $(el)"
tar czf $OUT/results.tgz -C $R . && rm -r $R
