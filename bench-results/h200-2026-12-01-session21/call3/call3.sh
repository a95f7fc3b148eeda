# Session 21, call 3: keys per lane against where the loads issue. In main's machine code
# (call 2) 9 of a tile's 16 K/V loads issue at the top of the key loop and the rest among the
# score arithmetic, held back for registers. Main's kernel with 5-8 keys per lane
# (sg:64/16/KK): registers, machine code (load positions in the loop), then KV 32k and 128k,
# alternating over two rounds; the dot1 ablation's machine code for comparison.
source .device/gpu/prelude.sh; export WGPU_BACKEND=vulkan
tar xzf .device/bin.tgz -C .device
R=$OUT/r; mkdir -p $R; B=.device/bin
T0=$(date +%s); el() { echo "[$(( $(date +%s) - T0 )) s]"; }
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | tee $R/gpu.txt
nvidia-smi --query-gpu=timestamp,clocks.sm,clocks.mem,power.draw,temperature.gpu --format=csv -lms 100 > $R/clocks.csv 2>&1 &
CLK=$!
export NVDISASM=$(python3 -c "import triton,os;print(os.path.join(os.path.dirname(triton.__file__),'backends/nvidia/bin/nvdisasm'))")
sass() { PATH=$PWD/.device/tools:$PATH LD_LIBRARY_PATH=$PWD/.device/tools python3 .device/tools/nv_sass.py --sass $R/sass_$1 $R/caches_$1/*decode* 2>&1 | tail -3; rm -r $R/caches_$1; }
TILES="sg:64/16/8,sg:64/16/7,sg:64/16/6,sg:64/16/5"
timeout 120 $B/kernel_stats --dims 128 --dtypes f16 --kernels portable --decode --decode-kv 32768 --decode-tiles $TILES --cache $R/caches_kk > $R/stats_kk.txt 2>&1
grep -A3 "== decode" $R/stats_kk.txt | grep -E "decode|Register" | paste -sd' '; sass kk
WGPU_FLASH_ATTN_SHADER_DIR=.device/var/dot1 timeout 60 $B/kernel_stats --dims 128 --dtypes f16 --kernels portable --decode --decode-kv 32768 --cache $R/caches_dot1 > $R/stats_dot1.txt 2>&1; sass dot1
D="--batch 8 --heads 32 --heads-kv 8 --dim 128 --dtype f16 --seq-q 1 --warmup-ms 200 --runs 40 --check-rows 4 --page-size 16"
show() { grep -E "^\| [0-9]|panic" $1 | cut -d'|' -f2,3,5,6,7,9 | paste -sd';'; }
for round in 1 2; do
  timeout 280 $B/decode $D --layouts contiguous,contiguous --tiles plan,$TILES --kv 32768,131072 --json $R/decode_$round.json > $R/decode_$round.txt 2>&1
  echo "== round $round $(el): $(show $R/decode_$round.txt)"
done
kill $CLK
echo "== done $(el)"
tar czf $OUT/results.tgz -C $R . && rm -r $R
