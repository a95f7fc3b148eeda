# Session 19, call 1: the KV-cache kernel's tiles taken from a counter (DYNAMIC_TILES, `dyn`)
# against main's every-splits-th tile, at KV 32k (one dispatch, splits merged in the kernel),
# with split counts around the plan's 16; main without its merge (`nomerge`, output wrong, for
# the merge's cost); main over KV 8k-64k (one dispatch each: the fixed cost per step); and
# branch decode-halves-experiment (`halves`: KV 128k in one dispatch) against main at 128k.
# Registers of each; two rounds alternating; PyTorch beside.
source .device/gpu/prelude.sh; export WGPU_BACKEND=vulkan
tar xzf .device/bin.tgz -C .device
R=$OUT/r; mkdir -p $R; B=.device/bin; V=.device/var
T0=$(date +%s); el() { echo "[$(( $(date +%s) - T0 )) s]"; }
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | tee $R/gpu.txt
nvidia-smi --query-gpu=timestamp,clocks.sm,clocks.mem,power.draw,temperature.gpu --format=csv -lms 100 > $R/clocks.csv 2>&1 &
CLK=$!
st() { grep -iE "decode|register|spill" $1 | tr -s ' ' | paste -sd';' | cut -c1-300; }
for v in main dyn nomerge; do
  SD=""; [ $v != main ] && SD=$V/$v
  WGPU_FLASH_ATTN_SHADER_DIR=$SD timeout 60 $B/kernel_stats --dims 128 --dtypes f16 --kernels portable --decode --decode-kv 32768 > $R/stats_$v.txt 2>&1; echo "stats $v: $(st $R/stats_$v.txt)"
done
timeout 60 $B/kernel_stats_halves --dims 128 --dtypes f16 --kernels portable --decode --decode-kv 131072 > $R/stats_halves.txt 2>&1; echo "stats halves 128k: $(st $R/stats_halves.txt)"
D="--batch 8 --heads 32 --heads-kv 8 --dim 128 --dtype f16 --seq-q 1 --runs 30 --warmup-ms 200 --check-rows 2 --page-size 16"
show() { grep -E "^\| [0-9]|rror|panic" $1 | cut -d'|' -f2,3,4,6,7,8 | paste -sd';'; }
for round in 1 2; do
  echo "== main 32k round $round $(el)"
  timeout 60 $B/decode $D --layouts contiguous,paged --kv 32768 --json $R/main_$round.json > $R/main_$round.txt 2>&1; show $R/main_$round.txt
  echo "== dyn 32k round $round $(el)"
  WGPU_FLASH_ATTN_SHADER_DIR=$V/dyn timeout 90 $B/decode $D --layouts contiguous,paged --kv 32768 --splits 16,17,18,20,24 --json $R/dyn_$round.json > $R/dyn_$round.txt 2>&1; show $R/dyn_$round.txt
  echo "== nomerge 32k round $round $(el)"
  WGPU_FLASH_ATTN_SHADER_DIR=$V/nomerge timeout 60 $B/decode $D --check-rows 0 --layouts contiguous --kv 32768 --json $R/nomerge_$round.json > $R/nomerge_$round.txt 2>&1; show $R/nomerge_$round.txt
done
echo "== torch $(el)"
timeout 90 python3 .device/py/torch_decode.py --batch 8 --heads 32 --heads-kv 8 --dim 128 --kv 32768,131072 --json $R/torch_decode.json > $R/torch_decode.txt 2>&1; tail -4 $R/torch_decode.txt
echo "== main KV sweep $(el)"
timeout 120 $B/decode $D --layouts contiguous --kv 8192,16384,24576,32768,49152,65536 --json $R/sweep.json > $R/sweep.txt 2>&1; show $R/sweep.txt
for round in 1 2; do
  for v in main halves; do echo "== $v 128k round $round $(el)"
    X=$B/decode; [ $v = halves ] && X=$B/decode_halves
    timeout 100 $X $D --layouts contiguous --kv 131072 --json $R/k128_${v}_$round.json > $R/k128_${v}_$round.txt 2>&1; show $R/k128_${v}_$round.txt
  done
done
kill $CLK
echo "== done $(el)"
tar czf $OUT/results.tgz -C $R . && rm -r $R
