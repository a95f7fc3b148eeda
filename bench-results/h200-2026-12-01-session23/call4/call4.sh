# Session 23, call 4: call 3's build; the two streamed-Q tiles of the NVIDIA table against each
# other at d = 160, 192 and 224 (the plan takes the first there; the second holds 48-64
# accumulators a thread, so its P V unrolls), two rounds alternating.
source .device/gpu/prelude.sh; export WGPU_BACKEND=vulkan
tar xzf .device/bin.tgz -C .device
R=$OUT/r; mkdir -p $R; B=.device/bin
T0=$(date +%s); el() { echo "[$(( $(date +%s) - T0 )) s]"; }
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | tee $R/gpu.txt
show() { echo "$2 $(grep -E "^\| NVIDIA|rror|panic|SKIP|skip" $1 | cut -d"|" -f7,8,9,10,11,12,13,19 | tr -s ' ' | paste -sd';')"; }
S="--tokens 16384 --seqs 8192 --baseline off --runs 10 --warmup 3 --warmup-ms 300 --check-rows 8 --causal off --kernels subgroup --dtypes f32,f16 --dims 160,192,224"
for round in 1 2; do
  for t in 128x32x8x32 64x32x16x16; do
    timeout 150 $B/attention $S --tiles $t --json $R/${t}_$round.json > $R/${t}_$round.txt 2>&1; show $R/${t}_$round.txt "$t $round $(el)"
  done
done
echo "== done $(el)"
tar czf $OUT/results.tgz -C $R . && rm -r $R
