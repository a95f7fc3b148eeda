# Thirtieth round, call 7: this tree's build (the plan loads each K/V tile in the key loop itself
# at d = 256, src/plan.rs coop_load_in_loop; `attention`, `kernel_stats`, `forward`, `tiers`)
# against 622af07's (`attention_old`) at d = 256, and `inl_ra` (inl_ra.diff against this tree's
# shaders/flash_fwd_coop.wgsl, in .device/inl_ra: O rescaled every key tile there too); two
# rounds alternating. Then the forward and tiers suites of this tree, side by side.
source .device/gpu/prelude.sh; export WGPU_BACKEND=vulkan
R=$OUT/r; mkdir -p $R; B=.device/bin
T0=$(date +%s); el() { echo "[$(( $(date +%s) - T0 )) s]"; }
show() { echo "$2 $(grep -E "^\| NVIDIA|rror|panic|SKIP|skip" $1 | cut -d"|" -f6,7,9,11,13,19 | tr -s ' ' | paste -sd';')"; }
for v in new inl_ra; do
  [ $v = inl_ra ] && export WGPU_FLASH_ATTN_SHADER_DIR=.device/inl_ra
  timeout 60 $B/kernel_stats --kernels coop-matrix --dims 256 --dtypes f16 > $R/stats_$v.txt 2>&1
  echo "== stats $v: $(grep -iE "^==|register|rror|panic" $R/stats_$v.txt | tr -s ' ' | paste -sd';')"
  unset WGPU_FLASH_ATTN_SHADER_DIR
done
A="--tokens 16384 --dtypes f16 --kernels coop-matrix --baseline off --runs 10 --warmup 3 --warmup-ms 300 --check-rows 8 --causal both --seqs 8192 --dims 256"
for r in 1 2; do
  order="old new inl_ra"; [ $r = 2 ] && order="inl_ra new old"
  for n in $order; do
    case $n in
      old) timeout 120 $B/attention_old $A --json $R/$n-r$r.json > $R/$n-r$r.txt 2>&1 ;;
      new) timeout 120 $B/attention $A --json $R/$n-r$r.json > $R/$n-r$r.txt 2>&1 ;;
      inl_ra) WGPU_FLASH_ATTN_SHADER_DIR=.device/inl_ra timeout 120 $B/attention $A --json $R/$n-r$r.json > $R/$n-r$r.txt 2>&1 ;;
    esac
    show $R/$n-r$r.txt "$n-r$r $(el)"
  done
done
(timeout 380 $B/forward --test-threads=8 > $R/test-forward.txt 2>&1; echo "forward rc=$? $(el)" > $R/forward-rc.txt) &
(timeout 380 $B/tiers --test-threads=8 > $R/test-tiers.txt 2>&1; echo "tiers rc=$? $(el)" > $R/tiers-rc.txt) &
wait
for t in forward tiers; do cat $R/$t-rc.txt; grep -E "test result|panicked|FAILED|failed" $R/test-$t.txt | head -6; done
grep -E "coop tiles|SKIPPED" $R/test-tiers.txt | tail -4
echo "== done $(el)"
tar czf $OUT/results.tgz -C $R . && rm -r $R
