source .device/gpu/prelude.sh; export WGPU_BACKEND=vulkan
R=$OUT/r; mkdir -p $R; B=.device/bin
T0=$(date +%s); el() { echo "[$(( $(date +%s) - T0 )) s]"; }
for round in 1 2; do
for v in attn_base attn_a attn_ab; do
echo "== $v round $round $(el)"
timeout 40 $B/$v --tokens 16384 --seqs 8192 --dims 128,64 --dtypes f16 --causal both --baseline off --kernels coop-matrix --runs 10 --warmup 5 --check-rows 8 --json $R/${v}_$round.json > $R/${v}_$round.txt 2>&1
grep -E "^\| NVIDIA|rror" $R/${v}_$round.txt | cut -d'|' -f6-13
done; done
echo "== done $(el)"
tar czf $OUT/results.tgz -C $R . && rm -r $R
