# Session 28, call 4 (binaries of d7c0915, whose tensor-core kernel is `base`): a go/no-go
# measurement of splitting O's columns between two workgroups at d = 224 and 256 (`vsplit`, a diff
# in this folder). The binaries dispatch one workgroup per (block, head), so under vsplit
# workgroup y computes half of head y / 2's columns: heads 0 .. H/2 - 1 are computed whole and
# the rest not at all (their check fails). The work done is half of what the TFLOP/s column
# assumes: vsplit's rate is its figure / 2.
# 1. registers (kernel_stats) of base and vsplit at d = 224, 256; 2. base and vsplit at N = 1k and
# 8k, d = 224 and 256, two rounds alternating.
source .device/gpu/prelude.sh; export WGPU_BACKEND=vulkan
tar xzf .device/bin.tgz -C .device
R=$OUT/r; mkdir -p $R; B=.device/bin
T0=$(date +%s); el() { echo "[$(( $(date +%s) - T0 )) s]"; }
show() { echo "$2 $(grep -E "^\| NVIDIA|rror|panic|SKIP|skip" $1 | cut -d"|" -f6,7,9,13,19 | tr -s ' ' | paste -sd';')"; }
run() { # name, timeout, dir (none: the binary's own kernel), args...
  local n=$1 t=$2 d=$3; shift 3
  [ $(( $(date +%s) - T0 )) -gt 300 ] && { echo "skip $n $(el)"; return; }
  if [ $d = none ]; then
    timeout $t $B/attention "$@" --json $R/$n.json > $R/$n.txt 2>&1
  else
    WGPU_FLASH_ATTN_SHADER_DIR=.device/$d timeout $t $B/attention "$@" --json $R/$n.json > $R/$n.txt 2>&1
  fi
  show $R/$n.txt "$n $(el)"
}
for v in base vsplit; do
  if [ $v = base ]; then unset WGPU_FLASH_ATTN_SHADER_DIR; else export WGPU_FLASH_ATTN_SHADER_DIR=.device/$v; fi
  timeout 60 $B/kernel_stats --kernels coop-matrix --dims 224,256 --dtypes f16 > $R/stats_$v.txt 2>&1
  echo "== stats $v $(el): $(grep -iE "register|rror|panic" $R/stats_$v.txt | tr -s ' ' | paste -sd';')"
done
unset WGPU_FLASH_ATTN_SHADER_DIR
A="--tokens 16384 --dtypes f16 --kernels coop-matrix --baseline off --runs 10 --warmup 3 --warmup-ms 300 --check-rows 8 --causal both --seqs 1024,8192 --dims 224,256"
run base-r1 60 none $A; run vsplit-r1 60 vsplit $A; run vsplit-r2 60 vsplit $A; run base-r2 60 none $A
echo "== done $(el)"
tar czf $OUT/results.tgz -C $R . && rm -r $R
