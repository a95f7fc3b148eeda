# Session 12, call 6: where the tensor-core kernel's time goes, by leaving one stage out (the
# results of the variants are wrong by design; only their times count). attention = ccbe22c;
# _noload: no K/V loads from device memory inside the key loop (the staged registers are stored
# again); _nosoft: no masks, maxima, exp2 or sums (P = S); _nos: no Q K^T products (and no K
# fragment reads); _nopv: no P V products (and no V fragment reads). The plan's tiles, d = 128
# and 64, two rounds alternating.
source .device/gpu/prelude.sh; export WGPU_BACKEND=vulkan
tar xzf .device/bin.tgz -C .device
R=$OUT/r; mkdir -p $R; B=.device/bin
T0=$(date +%s); el() { echo "[$(( $(date +%s) - T0 )) s]"; }
nvidia-smi --query-gpu=timestamp,clocks.sm,clocks.mem,power.draw,temperature.gpu --format=csv -lms 250 > $R/clocks.csv 2>&1 &
CLK=$!
A="--tokens 16384 --seqs 8192 --dtypes f16 --baseline off --kernels coop-matrix --runs 20 --warmup 5 --warmup-ms 300 --check-rows 1 --causal both --dims 128,64"
for round in 1 2; do for v in "" _noload _nosoft _nos _nopv; do echo "== attention$v round $round $(el)"
timeout 100 $B/attention$v $A --json $R/ablate${v}_r$round.json > $R/ablate${v}_r$round.txt 2>&1
grep -E "^\| NVIDIA|panic" $R/ablate${v}_r$round.txt | cut -d'|' -f6-15; done; done
kill $CLK
echo "== done $(el)"
tar czf $OUT/results.tgz -C $R . && rm -r $R
