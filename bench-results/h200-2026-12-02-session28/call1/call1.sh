# Session 28, call 1 (binaries of d7c0915, whose tensor-core kernel is `base`; variants through
# WGPU_FLASH_ATTN_SHADER_DIR, made from ../h200-2026-12-02-session27/experiments):
#   qdirect: whole blocks load Q's fragments with coopLoadT straight from q_buf;
#   epionly: the new write-out with the Q staging loop of 9392ce1;
#   old: 9392ce1's kernel (for the machine code only).
# 1. base against qdirect at N = 1k and 8k, d = 64 and 128, two rounds alternating;
# 2. base, qdirect and epionly at N = 8k, d = 32, 96, 160, 192, 256;
# 3. the machine code of old and base at d = 128 and 192 (kernel_stats --cache, scripts/nv_sass.py).
source .device/gpu/prelude.sh; export WGPU_BACKEND=vulkan
tar xzf .device/bin.tgz -C .device
R=$OUT/r; mkdir -p $R; B=.device/bin
for v in qdirect epionly; do cp .device/$v/flash_fwd_coop.wgsl $R/$v-flash_fwd_coop.wgsl; done
T0=$(date +%s); el() { echo "[$(( $(date +%s) - T0 )) s]"; }
show() { echo "$2 $(grep -E "^\| NVIDIA|rror|panic|SKIP|skip" $1 | cut -d"|" -f6,7,9,13,19 | tr -s ' ' | paste -sd';')"; }
run() { # name, timeout, dir (none: the binary's own kernel), args...
  local n=$1 t=$2 d=$3; shift 3
  [ $(( $(date +%s) - T0 )) -gt 470 ] && { echo "skip $n $(el)"; return; }
  if [ $d = none ]; then
    timeout $t $B/attention "$@" --json $R/$n.json > $R/$n.txt 2>&1
  else
    WGPU_FLASH_ATTN_SHADER_DIR=.device/$d timeout $t $B/attention "$@" --json $R/$n.json > $R/$n.txt 2>&1
  fi
  show $R/$n.txt "$n $(el)"
}
A="--tokens 16384 --dtypes f16 --kernels coop-matrix --baseline off --runs 10 --warmup 3 --warmup-ms 300 --check-rows 8 --causal both"
run base-r1 60 none $A --seqs 1024,8192 --dims 64,128
run qdirect-r1 60 qdirect $A --seqs 1024,8192 --dims 64,128
run qdirect-r2 60 qdirect $A --seqs 1024,8192 --dims 64,128
run base-r2 60 none $A --seqs 1024,8192 --dims 64,128
for v in base qdirect epionly; do
  run $v-dims 90 $([ $v = base ] && echo none || echo $v) $A --seqs 8192 --dims 32,96,160,192,256
done
export NVDISASM=$(python3 -c "import triton,os;print(os.path.join(os.path.dirname(triton.__file__),'backends/nvidia/bin/nvdisasm'))")
for v in old base; do
  if [ $v = base ]; then unset WGPU_FLASH_ATTN_SHADER_DIR; else export WGPU_FLASH_ATTN_SHADER_DIR=.device/$v; fi
  for c in off on; do
    [ $(( $(date +%s) - T0 )) -gt 540 ] && break
    timeout 60 $B/kernel_stats --kernels coop-matrix --dims 128,192 --dtypes f16 $([ $c = on ] && echo --causal) --cache $R/caches_${v}_$c > $R/stats_${v}_$c.txt 2>&1
    echo "== $v causal $c $(el): $(grep -iE "register" $R/stats_${v}_$c.txt | tr -s ' ' | paste -sd';')"
    PATH=$PWD/.device/tools:$PATH LD_LIBRARY_PATH=$PWD/.device/tools timeout 60 python3 scripts/nv_sass.py --sass $R/sass_${v}_$c $R/caches_${v}_$c/* 2>&1 | tail -4
    rm -r $R/caches_${v}_$c
  done
done
unset WGPU_FLASH_ATTN_SHADER_DIR
echo "== done $(el)"
tar czf $OUT/results.tgz -C $R . && rm -r $R
