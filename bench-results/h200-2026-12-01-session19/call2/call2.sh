# Session 19, call 2 (same build as call 1): the KV-cache kernel at KV 32k with 32 lanes per key
# (one head_dim chunk per lane: half the registers for Q and O, so more keys per lane in flight)
# against the plan's 16 lanes and 8 keys, over split counts; registers of each; main against main
# without its merge (`nomerge`, output wrong, for the merge's cost); the fixed cost of a step
# (KV 256, and KV 16k-64k at 16 splits, 60 runs each); PyTorch beside.
source .device/gpu/prelude.sh; export WGPU_BACKEND=vulkan
tar xzf .device/bin.tgz -C .device
R=$OUT/r; mkdir -p $R; B=.device/bin; V=.device/var
T0=$(date +%s); el() { echo "[$(( $(date +%s) - T0 )) s]"; }
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | tee $R/gpu.txt
nvidia-smi --query-gpu=timestamp,clocks.sm,clocks.mem,power.draw,temperature.gpu --format=csv -lms 100 > $R/clocks.csv 2>&1 &
CLK=$!
TL="plan,sg:64/32/8,sg:64/32/16,sg:64/32/24,sg:128/32/16,sg:64/16/4"
timeout 90 $B/kernel_stats --dims 128 --dtypes f16 --kernels portable --decode --decode-kv 32768 --decode-tiles $TL > $R/stats.txt 2>&1
grep -iE "decode|register|spill" $R/stats.txt | tr -s ' ' | paste -sd';' | cut -c1-900
D="--batch 8 --heads 32 --heads-kv 8 --dim 128 --dtype f16 --seq-q 1 --warmup-ms 200 --page-size 16"
show() { grep -E "^\| [0-9]|rror|panic" $1 | cut -d'|' -f2,3,4,5,6,7,9 | paste -sd';'; }
for round in 1 2; do
  echo "== tiles round $round $(el)"
  timeout 150 $B/decode $D --runs 30 --check-rows 2 --layouts contiguous --kv 32768 --tiles plan,sg:64/32/8,sg:64/32/16,sg:64/32/24,sg:128/32/16 --splits 16,20,24,32 --json $R/tiles_$round.json > $R/tiles_$round.txt 2>&1; show $R/tiles_$round.txt
  echo "== main / nomerge round $round $(el)"
  timeout 60 $B/decode $D --runs 30 --check-rows 2 --layouts contiguous --kv 32768 --json $R/main_$round.json > $R/main_$round.txt 2>&1; show $R/main_$round.txt
  WGPU_FLASH_ATTN_SHADER_DIR=$V/nomerge timeout 60 $B/decode $D --runs 30 --check-rows 0 --layouts contiguous --kv 32768 --json $R/nomerge_$round.json > $R/nomerge_$round.txt 2>&1; show $R/nomerge_$round.txt
done
echo "== torch $(el)"
timeout 90 python3 .device/py/torch_decode.py --batch 8 --heads 32 --heads-kv 8 --dim 128 --kv 32768,131072 --json $R/torch_decode.json > $R/torch_decode.txt 2>&1; tail -4 $R/torch_decode.txt
echo "== floor and sweep $(el)"
timeout 60 $B/decode $D --runs 60 --check-rows 2 --layouts contiguous --kv 256 --splits 1,16 --json $R/floor.json > $R/floor.txt 2>&1; show $R/floor.txt
timeout 200 $B/decode $D --runs 60 --check-rows 1 --layouts contiguous --splits 16 --kv 16384,24576,32768,40960,49152,57344,65536 --json $R/sweep.json > $R/sweep.txt 2>&1; show $R/sweep.txt
kill $CLK
echo "== done $(el)"
tar czf $OUT/results.tgz -C $R . && rm -r $R
