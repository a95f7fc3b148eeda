# Thirty-third round, call 4: at d = 256 the causal kernel (183 TFLOP/s in call 3) outruns the
# non-causal one (166), and spills less (80 against 144 bytes a thread, session 32). Does the
# non-causal problem run faster on the banded kernel? A window of (8192, 8192) at N = 8k masks
# nothing but compiles the kernel with BANDED (the causal kernel's code, its order of blocks, the
# interior test), without the causal mask. f16, N = 8k, d = 128-256, two rounds alternating;
# release binaries of 88a916f's code (kernel_stats of a125b0f, which takes --window).
source .device/gpu/prelude.sh; export WGPU_BACKEND=vulkan
R=$OUT/r; mkdir -p $R; B=.device/bin
T0=$(date +%s); el() { echo "[$(( $(date +%s) - T0 )) s]"; }
show() { echo "$2 $(grep -E "^\| NVIDIA|rror|panic" $1 | cut -d"|" -f7,9,11,13,19 | tr -s ' ' | paste -sd';')"; }
A="--tokens 16384 --kernels coop-matrix --baseline off --runs 10 --warmup 3 --warmup-ms 300 --check-rows 8 --causal off --seqs 8192 --dtypes f16 --dims 128,160,192,224,256"
for r in 1 2; do
  order="plain window"; [ $r = 2 ] && order="window plain"
  for v in $order; do
    W=""; [ $v = window ] && W="--window 8192,8192"
    timeout 150 $B/attention $A $W --json $R/$v-r$r.json > $R/$v-r$r.txt 2>&1; show $R/$v-r$r.txt "$v-r$r $(el)"
  done
done
timeout 60 $B/kernel_stats --kernels coop-matrix --dims 224,256 --dtypes f16 --window 8192,8192 > $R/stats_window.txt 2>&1
echo "== stats window: $(grep -iE "^==|register|local|rror" $R/stats_window.txt | tr -s ' ' | paste -sd';')"
echo "== done $(el)"
tar czf $OUT/results.tgz -C $R . && rm -r $R
