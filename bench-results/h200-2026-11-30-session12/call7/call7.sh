# Session 12, call 7: K/V loads without per-load tests where a tile lies wholly inside the
# sequence (attention_fastload = ccbe22c + experiments/fast-tile-loads.diff) against ccbe22c
# (attention), alternating, two rounds at d = 128 and 64, then one at the other head dims.
source .device/gpu/prelude.sh; export WGPU_BACKEND=vulkan
tar xzf .device/bin.tgz -C .device
R=$OUT/r; mkdir -p $R; B=.device/bin
T0=$(date +%s); el() { echo "[$(( $(date +%s) - T0 )) s]"; }
nvidia-smi --query-gpu=timestamp,clocks.sm,clocks.mem,power.draw,temperature.gpu --format=csv -lms 250 > $R/clocks.csv 2>&1 &
CLK=$!
A="--tokens 16384 --seqs 8192 --dtypes f16 --baseline off --kernels coop-matrix --runs 20 --warmup 5 --warmup-ms 300 --check-rows 8 --causal both"
for round in 1 2; do for v in "" _fastload; do echo "== attention$v round $round $(el)"
timeout 100 $B/attention$v $A --dims 128,64 --json $R/load${v}_r$round.json > $R/load${v}_r$round.txt 2>&1
grep -E "^\| NVIDIA|panic|FAIL" $R/load${v}_r$round.txt | cut -d'|' -f6-15,18; done; done
for v in "" _fastload; do echo "== attention$v other dims $(el)"
timeout 150 $B/attention$v $A --dims 32,96,160,256 --json $R/dims${v}.json > $R/dims${v}.txt 2>&1
grep -E "^\| NVIDIA|panic|FAIL" $R/dims${v}.txt | cut -d'|' -f6-15,18; done
kill $CLK
echo "== done $(el)"
tar czf $OUT/results.tgz -C $R . && rm -r $R
