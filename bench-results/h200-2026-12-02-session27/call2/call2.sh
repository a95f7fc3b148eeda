# Session 27, call 2 (binaries of 9392ce1, whose embedded tensor-core kernel is the one before
# cfa89ab; the variants through WGPU_FLASH_ATTN_SHADER_DIR):
#   qburst: cfa89ab's shaders/flash_fwd_coop.wgsl (Q's loads all issued before any store);
#   v2: qburst, and the first K/V tile's loads issued before Q's (the band limits computed first,
#       Q through registers of its own);
#   v3: v2, and with ELEMENTS (scores in registers) O written straight from registers: 1 / l kept
#       per lane, two lanes swap a pair of columns so each stores a vec4; no workgroup barrier
#       after the key loop.
# 1. correctness of v3 first: the forward and variants suites with it (every tier), at once;
# 2. N = 1k and 8k at d = 64 and 128, causal and not, two rounds alternating, then the other head
#    dims at N = 8k.
source .device/gpu/prelude.sh; export WGPU_BACKEND=vulkan
tar xzf .device/bin.tgz -C .device
R=$OUT/r; mkdir -p $R; B=.device/bin
for v in v2 v3; do cp .device/$v/flash_fwd_coop.wgsl $R/$v-flash_fwd_coop.wgsl; done
T0=$(date +%s); el() { echo "[$(( $(date +%s) - T0 )) s]"; }
show() { echo "$2 $(grep -E "^\| NVIDIA|rror|panic|SKIP|skip" $1 | cut -d"|" -f6,7,9,13,19 | tr -s ' ' | paste -sd';')"; }
run() { # name, timeout, dir ("-" for none), args...
  local n=$1 t=$2 d=$3; shift 3
  [ $(( $(date +%s) - T0 )) -gt 500 ] && { echo "skip $n $(el)"; return; }
  if [ $d = - ]; then timeout $t $B/attention "$@" --json $R/$n.json > $R/$n.txt 2>&1
  else WGPU_FLASH_ATTN_SHADER_DIR=.device/$d timeout $t $B/attention "$@" --json $R/$n.json > $R/$n.txt 2>&1; fi
  show $R/$n.txt "$n $(el)"
}
for t in forward variants; do
  (WGPU_FLASH_ATTN_SHADER_DIR=.device/v3 timeout 240 $B/$t --test-threads=8 > $R/test-$t.txt 2>&1; echo "$t rc=$? $(el)" > $R/$t-rc.txt) &
done
wait
for t in forward variants; do cat $R/$t-rc.txt; grep -E "test result|panicked|FAILED|failed" $R/test-$t.txt | head -6; done
A="--tokens 16384 --seqs 1024,8192 --dtypes f16 --kernels coop-matrix --baseline off --runs 10 --warmup 3 --warmup-ms 300 --check-rows 8 --causal both --dims 64,128"
for r in 1 2; do
  order="- qburst v2 v3"; [ $r = 2 ] && order="v3 v2 qburst -"
  for v in $order; do run $(echo $v | sed 's/^-$/old/')-r$r 90 $v $A; done
done
O="--tokens 16384 --seqs 8192 --dtypes f16 --kernels coop-matrix --baseline off --runs 10 --warmup 3 --warmup-ms 300 --check-rows 8 --causal both --dims 32,96,160,192,256"
run old-dims 90 - $O
run qburst-dims 90 qburst $O
run v3-dims 90 v3 $O
echo "== done $(el)"
tar czf $OUT/results.tgz -C $R . && rm -r $R
