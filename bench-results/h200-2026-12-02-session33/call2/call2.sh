# Thirty-third round, call 2: f32 with f16 products holds each K/V tile ahead as f32 (twice the
# registers of f16 or bf16). Against the plan's kernel (.device/bin/attention, 88a916f's code):
# `attention_xp` and `kernel_stats_xp` (990d95c's code with plan::coop_load_in_loop true at every head dim when
# XP_INLOOP is set: each tile loaded in its own pass, no tile held ahead; the one-line change is
# inloop.diff beside this file, written against a later plan.rs), and the plan's kernel
# with 32-key tiles (half the staging registers). d = 64 and 128, N = 1k and 8k, two rounds
# alternating; f16 beside them as the yardstick.
source .device/gpu/prelude.sh; export WGPU_BACKEND=vulkan
R=$OUT/r; mkdir -p $R; B=.device/bin
T0=$(date +%s); el() { echo "[$(( $(date +%s) - T0 )) s]"; }
show() { echo "$2 $(grep -E "^\| NVIDIA|rror|panic" $1 | cut -d"|" -f6,7,8,9,11,13,19 | tr -s ' ' | paste -sd';')"; }
A="--tokens 16384 --kernels coop-matrix --baseline off --runs 10 --warmup 3 --warmup-ms 300 --check-rows 8 --causal both --seqs 1024,8192 --f16-products"
for r in 1 2; do
  order="plan inloop bn32 f16"; [ $r = 2 ] && order="f16 bn32 inloop plan"
  for v in $order; do
    case $v in
      plan) timeout 100 $B/attention $A --dims 64,128 --dtypes f32 --json $R/$v-r$r.json > $R/$v-r$r.txt 2>&1 ;;
      inloop) XP_INLOOP=1 timeout 100 $B/attention_xp $A --dims 64,128 --dtypes f32 --json $R/$v-r$r.json > $R/$v-r$r.txt 2>&1 ;;
      bn32) timeout 100 $B/attention $A --dims 128 --dtypes f32 --tiles 128x32x32x8 --json $R/$v-r$r.json > $R/$v-r$r.txt 2>&1 ;;
      f16) timeout 100 $B/attention $A --dims 64,128 --dtypes f16 --json $R/$v-r$r.json > $R/$v-r$r.txt 2>&1 ;;
    esac
    show $R/$v-r$r.txt "$v-r$r $(el)"
  done
done
XP_INLOOP=1 timeout 60 $B/kernel_stats_xp --kernels coop-matrix --dims 64,128 --dtypes f32 --f16-products > $R/stats_inloop.txt 2>&1
timeout 60 $B/kernel_stats --kernels coop-matrix --dims 64,128 --dtypes f32 --f16-products > $R/stats_plan.txt 2>&1
for v in plan inloop; do echo "== stats $v: $(grep -iE "^==|register|local" $R/stats_$v.txt | tr -s ' ' | paste -sd';')"; done
echo "== done $(el)"
tar czf $OUT/results.tgz -C $R . && rm -r $R
