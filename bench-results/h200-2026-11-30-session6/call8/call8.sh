source .device/gpu/prelude.sh; export WGPU_BACKEND=vulkan
tar xzf .device/bin.tgz -C .device
R=$OUT/r; mkdir -p $R; B=.device/bin
T0=$(date +%s); el() { echo "[$(( $(date +%s) - T0 )) s]"; }
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | tee $R/gpu.txt
A="--tokens 16384 --seqs 8192 --dtypes f16 --baseline off --kernels coop-matrix --runs 20 --warmup 5 --warmup-ms 300 --check-rows 8"
echo "== attention $(el)"
timeout 40 $B/attention $A --dims 128,64 --causal both --json $R/coop.json > $R/coop.txt 2>&1
grep -E "^\| NVIDIA|rror" $R/coop.txt | cut -d'|' -f6-13
echo "== test tiers $(el)"; timeout 150 $B/tiers --test-threads=16 > $R/test-tiers.txt 2>&1; echo "rc=$?"; grep -E "test result|panicked|FAILED" $R/test-tiers.txt | head -5
echo "== done $(el)"
tar czf $OUT/results.tgz -C $R . && rm -r $R
