# Thirtieth round, call 8: the in-loop loads at the head dims between 192 and 256 (208, 224, 240),
# where the plan's kernel (this tree's build, a4b1616) keeps the tile ahead: `base` against `inl`
# (call 6's variant, ../call6/inl.diff against 622af07's shader, in .device/inl; at these head dims
# this tree's host changes nothing else in it), the plan's tiles; two rounds alternating.
source .device/gpu/prelude.sh; export WGPU_BACKEND=vulkan
R=$OUT/r; mkdir -p $R; B=.device/bin
T0=$(date +%s); el() { echo "[$(( $(date +%s) - T0 )) s]"; }
show() { echo "$2 $(grep -E "^\| NVIDIA|rror|panic|SKIP|skip" $1 | cut -d"|" -f6,7,9,11,13,19 | tr -s ' ' | paste -sd';')"; }
for v in base inl; do
  [ $v = inl ] && export WGPU_FLASH_ATTN_SHADER_DIR=.device/inl
  timeout 60 $B/kernel_stats --kernels coop-matrix --dims 208,224,240 --dtypes f16 > $R/stats_$v.txt 2>&1
  echo "== stats $v: $(grep -iE "^==|register|rror|panic" $R/stats_$v.txt | tr -s ' ' | paste -sd';')"
  unset WGPU_FLASH_ATTN_SHADER_DIR
done
A="--tokens 16384 --dtypes f16 --kernels coop-matrix --baseline off --runs 10 --warmup 3 --warmup-ms 300 --check-rows 8 --causal both --seqs 8192 --dims 208,224,240"
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
done
echo "== done $(el)"
tar czf $OUT/results.tgz -C $R . && rm -r $R
