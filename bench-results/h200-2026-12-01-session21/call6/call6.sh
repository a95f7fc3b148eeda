# Session 21, call 6: two small changes to the key loop's text. fma: each row's score as one chain
# of multiply-adds (dot() per 4 elements and then + costs one add more per row and key); vfirst:
# the V loads written before the K loads; fmavfirst: both. Registers and machine code; the decode
# benchmark (KV 32k and 128k contiguous, the first configuration uncounted, three rounds
# alternating with main) for variants at 128 registers or fewer.
source .device/gpu/prelude.sh; export WGPU_BACKEND=vulkan
tar xzf .device/bin.tgz -C .device
R=$OUT/r; mkdir -p $R; B=.device/bin
T0=$(date +%s); el() { echo "[$(( $(date +%s) - T0 )) s]"; }
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | tee $R/gpu.txt
nvidia-smi --query-gpu=timestamp,clocks.sm,clocks.mem,power.draw,temperature.gpu --format=csv -lms 100 > $R/clocks.csv 2>&1 &
CLK=$!
use() { [ $1 = main ] && unset WGPU_FLASH_ATTN_SHADER_DIR || export WGPU_FLASH_ATTN_SHADER_DIR=.device/var/$1; }
export NVDISASM=$(python3 -c "import triton,os;print(os.path.join(os.path.dirname(triton.__file__),'backends/nvidia/bin/nvdisasm'))")
VARS="main"
for v in fma vfirst fmavfirst; do use $v
  timeout 60 $B/kernel_stats --dims 128 --dtypes f16 --kernels portable --decode --decode-kv 32768 --cache $R/caches_$v > $R/stats_$v.txt 2>&1
  regs=$(grep -A6 "== decode" $R/stats_$v.txt | grep -i "register count" | head -1 | grep -o "[0-9]*")
  echo "== stats $v: $regs registers"
  PATH=$PWD/.device/tools:$PATH LD_LIBRARY_PATH=$PWD/.device/tools python3 .device/tools/nv_sass.py --sass $R/sass_$v $R/caches_$v/*decode* 2>&1 | tail -2
  rm -r $R/caches_$v
  [ -n "$regs" ] && [ "$regs" -le 128 ] && VARS="$VARS $v"
done
echo "== timing: $VARS"
D="--batch 8 --heads 32 --heads-kv 8 --dim 128 --dtype f16 --seq-q 1 --warmup-ms 200 --runs 40 --check-rows 4 --page-size 16"
show() { grep -E "^\| [0-9]|panic" $1 | cut -d'|' -f2,3,6,7,9 | paste -sd';'; }
if [ "$VARS" != main ]; then
for round in 1 2 3; do
  for v in $VARS; do use $v
    timeout 150 $B/decode $D --layouts contiguous,contiguous --kv 32768,131072 --json $R/decode_${v}_$round.json > $R/decode_${v}_$round.txt 2>&1
    echo "== $v $round $(el): $(show $R/decode_${v}_$round.txt)"
  done
done
fi
unset WGPU_FLASH_ATTN_SHADER_DIR
kill $CLK
echo "== done $(el)"
tar czf $OUT/results.tgz -C $R . && rm -r $R
