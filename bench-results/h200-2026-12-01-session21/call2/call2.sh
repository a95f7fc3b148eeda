# Session 21, call 2: the KV-cache kernel with Q's rows permuted per lane (perm: lane kx holds
# row my_row ^ r in slot r, so the reduce-scatter of the scores needs no selects) against main:
# registers and machine code of both (kernel_stats --cache, then nvdisasm), then KV 32k and 128k
# (contiguous twice, 16-token pages; the first configuration uncounted), builds alternating over
# three rounds, outputs checked against the f64 oracle on 4 rows.
source .device/gpu/prelude.sh; export WGPU_BACKEND=vulkan
tar xzf .device/bin.tgz -C .device
R=$OUT/r; mkdir -p $R; B=.device/bin
T0=$(date +%s); el() { echo "[$(( $(date +%s) - T0 )) s]"; }
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | tee $R/gpu.txt
nvidia-smi --query-gpu=timestamp,clocks.sm,clocks.mem,power.draw,temperature.gpu --format=csv -lms 100 > $R/clocks.csv 2>&1 &
CLK=$!
VARS="main perm"
use() { [ $1 = main ] && unset WGPU_FLASH_ATTN_SHADER_DIR || export WGPU_FLASH_ATTN_SHADER_DIR=.device/var/$1; }
export NVDISASM=$(python3 -c "import triton,os;print(os.path.join(os.path.dirname(triton.__file__),'backends/nvidia/bin/nvdisasm'))")
for v in $VARS; do use $v
  timeout 60 $B/kernel_stats --dims 128 --dtypes f16 --kernels portable --decode --decode-kv 32768 --cache $R/caches_$v > $R/stats_$v.txt 2>&1
  echo "== stats $v: $(grep -A3 "== decode" $R/stats_$v.txt | grep -i register)"
  PATH=$PWD/.device/tools:$PATH LD_LIBRARY_PATH=$PWD/.device/tools python3 .device/tools/nv_sass.py --sass $R/sass_$v $R/caches_$v/*decode* 2>&1 | tail -2
  rm -r $R/caches_$v
done
D="--batch 8 --heads 32 --heads-kv 8 --dim 128 --dtype f16 --seq-q 1 --warmup-ms 200 --runs 40 --check-rows 4 --page-size 16"
show() { grep -E "^\| [0-9]|panic" $1 | cut -d'|' -f2,3,6,7,9 | paste -sd';'; }
for round in 1 2 3; do
  for v in $VARS; do use $v
    timeout 150 $B/decode $D --layouts contiguous,contiguous,paged --kv 32768,131072 --json $R/decode_${v}_$round.json > $R/decode_${v}_$round.txt 2>&1
    echo "== $v $round $(el): $(show $R/decode_${v}_$round.txt)"
  done
done
unset WGPU_FLASH_ATTN_SHADER_DIR
kill $CLK
echo "== done $(el)"
tar czf $OUT/results.tgz -C $R . && rm -r $R
