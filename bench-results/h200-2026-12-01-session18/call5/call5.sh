# Session 18, call 5: is the first configuration after a cache upload slow because of its long
# warm-up? Main's KV-cache kernel, each layout twice in a row (contiguous, paged, contiguous,
# paged), with the first configuration after each upload warmed up for 3000 ms (the bench's
# default until now) or 200 ms (as every other configuration), two rounds alternating; every
# run kept in the JSON (`ms_runs`); PyTorch beside.
source .device/gpu/prelude.sh; export WGPU_BACKEND=vulkan
tar xzf .device/bin.tgz -C .device
R=$OUT/r; mkdir -p $R; B=.device/bin
T0=$(date +%s); el() { echo "[$(( $(date +%s) - T0 )) s]"; }
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | tee $R/gpu.txt
nvidia-smi --query-gpu=timestamp,clocks.sm,clocks.mem,power.draw,temperature.gpu --format=csv -lms 100 > $R/clocks.csv 2>&1 &
CLK=$!
D0="--batch 8 --heads 32 --heads-kv 8 --dim 128 --dtype f16 --seq-q 1 --warmup-ms 200 --check-rows 2 --page-size 16"
for round in 1 2; do
for fw in 3000 200; do echo "== decode first warm-up $fw ms, round $round $(el)"
  timeout 120 $B/decode $D0 --runs 40 --first-warmup-ms $fw --layouts contiguous,paged,contiguous,paged --kv 32768,131072 --json $R/decode_fw${fw}_$round.json > $R/decode_fw${fw}_$round.txt 2>&1; grep -E "^\| [0-9]|rror|panic" $R/decode_fw${fw}_$round.txt | cut -d'|' -f2,3,4,6,7 | paste -sd';'
done; done
echo "== torch $(el)"
timeout 90 python3 .device/py/torch_decode.py --batch 8 --heads 32 --heads-kv 8 --dim 128 --kv 32768,131072 --json $R/torch_decode.json > $R/torch_decode.txt 2>&1; tail -4 $R/torch_decode.txt
kill $CLK
echo "== done $(el)"
tar czf $OUT/results.tgz -C $R . && rm -r $R
