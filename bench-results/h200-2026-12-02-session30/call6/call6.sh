# Thirtieth round, call 6: `inl` (inl.diff against 622af07's shaders/flash_fwd_coop.wgsl, in
# .device/inl): one K/V tile, loaded in the key loop itself after its first barrier, so that
# no registers hold the tile ahead (32 registers a lane at d = 160-256 with the plan's tiles)
# while O and Q stay; with the plan's tiles, against the plan's kernel, d = 128-256, and at
# d = 256 with 16-key tiles too; two rounds alternating. Binaries of 622af07's kernel.
source .device/gpu/prelude.sh; export WGPU_BACKEND=vulkan
R=$OUT/r; mkdir -p $R; B=.device/bin
T0=$(date +%s); el() { echo "[$(( $(date +%s) - T0 )) s]"; }
show() { echo "$2 $(grep -E "^\| NVIDIA|rror|panic|SKIP|skip" $1 | cut -d"|" -f6,7,9,11,13,19 | tr -s ' ' | paste -sd';')"; }
for v in base inl; do
  [ $v = inl ] && export WGPU_FLASH_ATTN_SHADER_DIR=.device/inl
  timeout 60 $B/kernel_stats --kernels coop-matrix --dims 128,160,192,256 --dtypes f16 > $R/stats_$v.txt 2>&1
  echo "== stats $v: $(grep -iE "^==|register|rror|panic" $R/stats_$v.txt | tr -s ' ' | paste -sd';')"
  unset WGPU_FLASH_ATTN_SHADER_DIR
done
A="--tokens 16384 --dtypes f16 --kernels coop-matrix --baseline off --runs 10 --warmup 3 --warmup-ms 300 --check-rows 8 --causal both --seqs 8192 --dims 128,160,192,256"
for r in 1 2; do
  order="base inl"; [ $r = 2 ] && order="inl base"
  for n in $order; do
    if [ $n = inl ]; then
      WGPU_FLASH_ATTN_SHADER_DIR=.device/inl timeout 120 $B/attention $A --json $R/$n-r$r.json > $R/$n-r$r.txt 2>&1
    else
      timeout 120 $B/attention $A --json $R/$n-r$r.json > $R/$n-r$r.txt 2>&1
    fi
    show $R/$n-r$r.txt "$n-r$r $(el)"
  done
  WGPU_FLASH_ATTN_SHADER_DIR=.device/inl timeout 120 $B/attention ${A/--dims 128,160,192,256/--dims 256} --tiles 128x16x32x8 --json $R/inl16-r$r.json > $R/inl16-r$r.txt 2>&1
  show $R/inl16-r$r.txt "inl16-r$r $(el)"
done
echo "== done $(el)"
tar czf $OUT/results.tgz -C $R . && rm -r $R
