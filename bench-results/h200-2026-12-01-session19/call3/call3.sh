# Session 19, call 3: the decode benchmark's two ways of timing a step, on main's kernel: `idle`
# (each step its own submission on an idle GPU, as every round before) and `queued` (all runs in
# one submission, back to back, each between its own timestamps, a 256 MiB clear before each, as
# triton's do_bench times PyTorch); a kernel that returns at once (`empty`) under both, for the
# cost of a step that does nothing; two rounds alternating; PyTorch beside.
source .device/gpu/prelude.sh; export WGPU_BACKEND=vulkan
tar xzf .device/bin.tgz -C .device
R=$OUT/r; mkdir -p $R; B=.device/bin; V=.device/var
T0=$(date +%s); el() { echo "[$(( $(date +%s) - T0 )) s]"; }
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | tee $R/gpu.txt
nvidia-smi --query-gpu=timestamp,clocks.sm,clocks.mem,power.draw,temperature.gpu --format=csv -lms 100 > $R/clocks.csv 2>&1 &
CLK=$!
D="--batch 8 --heads 32 --heads-kv 8 --dim 128 --dtype f16 --seq-q 1 --warmup-ms 200 --page-size 16 --runs 40"
show() { grep -E "^\| [0-9]|rror|panic" $1 | cut -d'|' -f2,3,4,6,7,9 | paste -sd';'; }
for round in 1 2; do
  for t in idle queued; do echo "== main $t round $round $(el)"
    timeout 120 $B/decode $D --timing $t --check-rows 2 --layouts contiguous,paged,contiguous --kv 32768,131072 --json $R/main_${t}_$round.json > $R/main_${t}_$round.txt 2>&1; show $R/main_${t}_$round.txt
  done
  for t in idle queued; do echo "== empty $t round $round $(el)"
    WGPU_FLASH_ATTN_SHADER_DIR=$V/empty timeout 60 $B/decode $D --timing $t --check-rows 0 --layouts contiguous --kv 32768 --json $R/empty_${t}_$round.json > $R/empty_${t}_$round.txt 2>&1; show $R/empty_${t}_$round.txt
  done
  echo "== torch round $round $(el)"
  timeout 90 python3 .device/py/torch_decode.py --batch 8 --heads 32 --heads-kv 8 --dim 128 --kv 32768,131072 --json $R/torch_decode_$round.json > $R/torch_decode_$round.txt 2>&1; tail -4 $R/torch_decode_$round.txt
done
kill $CLK
echo "== done $(el)"
tar czf $OUT/results.tgz -C $R . && rm -r $R
