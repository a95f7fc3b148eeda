# Prepared in the thirty-first round, run in the thirty-second (../../h200-2026-12-02-session32/call3). Binaries of c049b58 or later with the same
# tensor-core kernel in .device/bin (attention, kernel_stats); `hyb` made first, on the build
# machine, from c049b58's shader:
#   mkdir -p .device/hyb; git show c049b58:shaders/flash_fwd_coop.wgsl > /tmp/coop.wgsl
#   python3 bench-results/h200-2026-12-02-session31/call2/mkhyb.py /tmp/coop.wgsl .device/hyb/flash_fwd_coop.wgsl inloop
# Which tensor-core workgroups share an SM with a second one: call 7 found that two of `hyb`'s
# (4 subgroups, 255 registers, 45.6 KB) do not. Each configuration runs at d, N = 8k, one
# sequence, with 1, 2, 4 and 8 heads (N / BM workgroups a head); from about 128 workgroups
# (132 SMs) to twice as many, a time well under twice says a second workgroup shares the SM. Registers from kernel_stats. Configurations with 4 subgroups and fewer registers than
# `hyb`, and with less workgroup memory, tell which limit kept it out.
source .device/gpu/prelude.sh; export WGPU_BACKEND=vulkan
R=$OUT/r; mkdir -p $R; B=.device/bin
T0=$(date +%s); el() { echo "[$(( $(date +%s) - T0 )) s]"; }
# variant:d:tiles
for c in base:128:128x64x32x8 base:128:64x16x32x4 base:128:64x32x32x4 base:64:128x32x32x4 \
         base:64:64x32x32x4 hyb:64:128x32x32x4 hyb:128:128x32x32x4 base:256:64x32x32x4; do
  IFS=: read v d t <<< "$c"
  if [ $v = base ]; then unset WGPU_FLASH_ATTN_SHADER_DIR; else export WGPU_FLASH_ATTN_SHADER_DIR=.device/$v; fi
  timeout 40 $B/kernel_stats --kernels coop-matrix --dims $d --dtypes f16 --tiles $t > $R/stats-$v-$d-$t.txt 2>&1
  line="$v d=$d $t $(grep -iE "register count|local memory" $R/stats-$v-$d-$t.txt | tr -s ' ' | paste -sd' ')"
  for h in 1 2 4 8; do
    timeout 40 $B/attention --tokens 8192 --seqs 8192 --heads $h --dims $d --dtypes f16 --kernels coop-matrix --baseline off --runs 10 --warmup 3 --warmup-ms 200 --check-rows 4 --causal off --tiles $t > $R/$v-$d-$t-h$h.txt 2>&1
    line="$line | h$h $(grep -E "^\| NVIDIA" $R/$v-$d-$t-h$h.txt | cut -d"|" -f12 | tr -d ' ') ms$(grep -ciE "rror|panic" $R/$v-$d-$t-h$h.txt | sed 's/^0$//;s/^[1-9].*$/ ERROR/')"
  done
  echo "$line $(el)"
done
unset WGPU_FLASH_ATTN_SHADER_DIR
echo "== done $(el)"
tar czf $OUT/results.tgz -C $R . && rm -r $R
