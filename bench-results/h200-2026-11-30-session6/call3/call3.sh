source .device/gpu/prelude.sh; export WGPU_BACKEND=vulkan
tar xzf .device/bin.tgz -C .device
R=$OUT/r; mkdir -p $R; B=.device/bin
T0=$(date +%s); el() { echo "[$(( $(date +%s) - T0 )) s]"; }
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | tee $R/gpu.txt
A="--tokens 16384 --seqs 8192 --dtypes f16 --baseline off --kernels coop-matrix --runs 20 --warmup 5 --warmup-ms 300 --check-rows 8"
for round in 1 2; do for v in main v4; do
echo "== $v round $round $(el)"
timeout 60 $B/attention_$v $A --dims 128,64 --causal both --json $R/${v}_$round.json > $R/${v}_$round.txt 2>&1
grep -E "^\| NVIDIA|rror" $R/${v}_$round.txt | cut -d'|' -f6-14
done; done
echo "== sweep $(el)"
ATTENTION=$B/attention_main timeout 480 bash benches/sweep.sh $R/sweep > $R/sweep.log 2>&1; echo "rc=$?"; tail -3 $R/sweep.log
echo "== done $(el)"
tar czf $OUT/results.tgz -C $R . && rm -r $R
