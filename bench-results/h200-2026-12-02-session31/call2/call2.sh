# Thirty-first round, call 2: `hyb` and `hyba` (call2/mkhyb.py makes both from this tree's
# shaders/flash_fwd_coop.wgsl: python3 mkhyb.py SRC OUT inloop|ahead; in .device/hyb and
# .device/hyba), 32-row subgroups whose second row block's Q stays in workgroup memory, four
# subgroups a workgroup and one K/V tile, so that two workgroups share an SM; against the plan's
# kernel, d = 128 and 64. Then which kernel PyTorch's mem-efficient backend runs for f32
# (peer_f32.py), and whether its machine code holds tensor-core instructions.
source .device/gpu/prelude.sh; export WGPU_BACKEND=vulkan
R=$OUT/r; mkdir -p $R; B=.device/bin; C=bench-results/h200-2026-12-02-session31/call2
T0=$(date +%s); el() { echo "[$(( $(date +%s) - T0 )) s]"; }
show() { echo "$2 $(grep -E "^\| NVIDIA|rror|panic|SKIP|skip" $1 | cut -d"|" -f6,7,9,11,13,19 | tr -s ' ' | paste -sd';')"; }
T128="--tiles 128x32x32x4,128x16x32x4"; T64="--tiles 128x64x32x4,128x32x32x4"
timeout 60 $B/kernel_stats --kernels coop-matrix --dims 128 --dtypes f16 --tiles 128x64x32x8,128x32x32x4 > $R/stats_base.txt 2>&1
for v in hyb hyba; do
  WGPU_FLASH_ATTN_SHADER_DIR=.device/$v timeout 60 $B/kernel_stats --kernels coop-matrix --dims 128 --dtypes f16 $T128 > $R/stats_$v.txt 2>&1
  WGPU_FLASH_ATTN_SHADER_DIR=.device/$v timeout 60 $B/kernel_stats --kernels coop-matrix --dims 64 --dtypes f16 $T64 >> $R/stats_$v.txt 2>&1
done
for v in base hyb hyba; do echo "== stats $v: $(grep -iE "^==|register|local memory|rror|panic" $R/stats_$v.txt | tr -s ' ' | paste -sd';')"; done
A="--tokens 16384 --dtypes f16 --kernels coop-matrix --baseline off --runs 10 --warmup 3 --warmup-ms 300 --check-rows 8 --causal both --seqs 8192"
for r in 1 2; do
  order="base hyb hyba"; [ $r = 2 ] && order="hyba hyb base"
  for n in $order; do
    if [ $n = base ]; then
      timeout 120 $B/attention $A --dims 64,128 --json $R/$n-r$r.json > $R/$n-r$r.txt 2>&1
    else
      export WGPU_FLASH_ATTN_SHADER_DIR=.device/$n
      timeout 120 $B/attention $A --dims 128 $T128 --json $R/$n-128-r$r.json > $R/$n-128-r$r.txt 2>&1
      show $R/$n-128-r$r.txt "$n-128-r$r $(el)"
      timeout 120 $B/attention $A --dims 64 $T64 --json $R/$n-r$r.json > $R/$n-r$r.txt 2>&1
      unset WGPU_FLASH_ATTN_SHADER_DIR
    fi
    show $R/$n-r$r.txt "$n-r$r $(el)"
  done
done
timeout 150 python3 $C/peer_f32.py > $R/peer_f32.txt 2>&1; cat $R/peer_f32.txt | cut -c1-600
TL=$(python3 -c "import torch, os; print(os.path.join(os.path.dirname(torch.__file__), 'lib', 'libtorch_cuda.so'))")
BIN=$(python3 -c "import triton, os; print(os.path.join(os.path.dirname(triton.__file__), 'backends', 'nvidia', 'bin'))")
ls $BIN > $R/triton_bin.txt 2>&1; echo "triton bin: $(cat $R/triton_bin.txt | paste -sd' ')"
NAME=$(grep -o "fmha_cutlassF_f32[A-Za-z0-9_]*" $R/peer_f32.txt | head -1)
if [ -n "$NAME" ] && [ -x $BIN/cuobjdump ]; then
  MANGLED=$(timeout 60 grep -aoE "_Z[0-9]+${NAME}[A-Za-z0-9_]*" $TL | sort -u | head -3)
  echo "mangled: $MANGLED"
  for m in $MANGLED; do
    timeout 120 $BIN/cuobjdump -sass -fun "$m" $TL > $R/sass_$(echo $m | cut -c1-60).txt 2>&1
  done
  for f in $R/sass_*.txt; do echo "$f: $(grep -cE "HMMA" $f) HMMA, $(grep -cE "FFMA" $f) FFMA, $(grep -cE "arch = sm_" $f) arch lines: $(grep -oE "arch = sm_[0-9a-z]+" $f | sort -u | paste -sd' ')"; done
fi
echo "== done $(el)"
tar czf $OUT/results.tgz -C $R . && rm -r $R
