# Session 28, call 5 (binaries of d7c0915, whose tensor-core kernel is `base`; `tree` and `both`
# as in ../call3, through WGPU_FLASH_ATTN_SHADER_DIR): a second look at the two variants that
# came out level or ahead in call 3's single round of other head dims. base, tree and both at
# N = 8k, d = 64, 96, 128, 160, 192, 256, two rounds alternating.
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
A="--tokens 16384 --dtypes f16 --kernels coop-matrix --baseline off --runs 10 --warmup 3 --warmup-ms 300 --check-rows 8 --causal both --seqs 8192 --dims 64,96,128,160,192,256"
for p in "1 base:none tree both" "2 both tree base:none"; do
  set -- $p; r=$1; shift
  for v in "$@"; do run ${v%%:*}-r$r 70 ${v##*:} $A; done
done
echo "== done $(el)"
tar czf $OUT/results.tgz -C $R . && rm -r $R
