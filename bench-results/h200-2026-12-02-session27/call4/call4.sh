# Session 27, call 4 (binaries of 9392ce1; v4 = eb2919f's tensor-core kernel, through
# WGPU_FLASH_ATTN_SHADER_DIR; without it the binary's own, 9392ce1's):
# 1. d = 192, N = 8k, where calls 1-3 had the new kernels 4-7% slower non-causal: two rounds
#    alternating, 9392ce1's kernel against v4;
# 2. P V unrolled at d = 84 and 88 on the subgroup tier: attention_pv96 is 9392ce1 built with
#    UNROLL_PV_MAX_ACCUMULATORS = 96 (src/plan.rs), run with --unroll on, beside the plan;
# 3. the portable tier's d = 64 plan (Q streamed since 6b4445d), causal and not, N = 1k and 8k.
source .device/gpu/prelude.sh; export WGPU_BACKEND=vulkan
tar xzf .device/bin.tgz -C .device
R=$OUT/r; mkdir -p $R; B=.device/bin
T0=$(date +%s); el() { echo "[$(( $(date +%s) - T0 )) s]"; }
show() { echo "$2 $(grep -E "^\| NVIDIA|rror|panic|SKIP|skip" $1 | cut -d"|" -f6,7,8,9,10,11,13,19 | tr -s ' ' | paste -sd';')"; }
run() { # name, timeout, binary, dir ("-" for none), args...
  local n=$1 t=$2 b=$3 d=$4; shift 4
  [ $(( $(date +%s) - T0 )) -gt 200 ] && { echo "skip $n $(el)"; return; }
  if [ $d = - ]; then timeout $t $B/$b "$@" --json $R/$n.json > $R/$n.txt 2>&1
  else WGPU_FLASH_ATTN_SHADER_DIR=.device/$d timeout $t $B/$b "$@" --json $R/$n.json > $R/$n.txt 2>&1; fi
  show $R/$n.txt "$n $(el)"
}
C="--tokens 16384 --seqs 8192 --dtypes f16 --kernels coop-matrix --baseline off --runs 10 --warmup 3 --warmup-ms 300 --check-rows 8 --causal both --dims 192"
run d192-old-r1 60 attention - $C; run d192-v4-r1 60 attention v4 $C; run d192-v4-r2 60 attention v4 $C; run d192-old-r2 60 attention - $C
P="--tokens 16384 --seqs 8192 --dtypes f32,f16 --kernels subgroup --baseline off --runs 10 --warmup 3 --warmup-ms 300 --check-rows 8 --causal off --dims 84,88"
run pv-plan 60 attention - $P; run pv-unrolled 60 attention_pv96 - $P --unroll on
run portable64 60 attention - --tokens 16384 --seqs 1024,8192 --dtypes f32,f16 --kernels portable --baseline off --runs 10 --warmup 3 --warmup-ms 300 --check-rows 8 --causal both --dims 64
echo "== done $(el)"
tar czf $OUT/results.tgz -C $R . && rm -r $R
