# Session 19, call 7: `--timing queued` with a barrier on either side of every step (the clear
# before it could otherwise overlap the step, and the next clear its tail), against `idle`, one
# round each at KV 32k and 128k, PyTorch after; main's kernel.
source .device/gpu/prelude.sh; export WGPU_BACKEND=vulkan
tar xzf .device/bin.tgz -C .device
R=$OUT/r; mkdir -p $R; B=.device/bin
T0=$(date +%s); el() { echo "[$(( $(date +%s) - T0 )) s]"; }
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | tee $R/gpu.txt
nvidia-smi --query-gpu=timestamp,clocks.sm,clocks.mem,power.draw,temperature.gpu --format=csv -lms 100 > $R/clocks.csv 2>&1 &
CLK=$!
D="--batch 8 --heads 32 --heads-kv 8 --dim 128 --dtype f16 --seq-q 1 --warmup-ms 200 --page-size 16 --runs 40 --check-rows 2"
show() { grep -E "^\| [0-9]|rror|panic" $1 | cut -d'|' -f2,3,4,6,7,9 | paste -sd';'; }
for t in queued idle; do echo "== decode $t $(el)"
  timeout 120 $B/decode $D --timing $t --layouts contiguous,paged,contiguous --kv 32768,131072 --json $R/decode_$t.json > $R/decode_$t.txt 2>&1; show $R/decode_$t.txt
done
echo "== torch $(el)"
timeout 90 python3 .device/py/torch_decode.py --batch 8 --heads 32 --heads-kv 8 --dim 128 --kv 32768,131072 --json $R/torch_decode.json > $R/torch_decode.txt 2>&1; tail -4 $R/torch_decode.txt
kill $CLK
echo "== done $(el)"
tar czf $OUT/results.tgz -C $R . && rm -r $R
