# Session 9, call 6: main at 3814b61 (128x16x32x8 second in the tensor-core table for head dims
# above 64, so the plan above d = 128). The tier's plan at d = 32..256, the two 16-key tiles at
# d = 160 and 192, and the tiers suite (every candidate now also at d = 256).
source .device/gpu/prelude.sh; export WGPU_BACKEND=vulkan
tar xzf .device/bin.tgz -C .device
R=$OUT/r; mkdir -p $R; B=.device/bin
T0=$(date +%s); el() { echo "[$(( $(date +%s) - T0 )) s]"; }
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | tee $R/gpu.txt
A="--tokens 16384 --seqs 8192 --dtypes f16 --baseline off --kernels coop-matrix --runs 10 --warmup 3 --warmup-ms 300 --check-rows 4"
echo "== attention plan $(el)"; timeout 150 $B/attention_n $A --dims 32,64,96,128,256 --causal both --json $R/coop_plan.json > $R/coop_plan.txt 2>&1; grep -E "^\| NVIDIA|rror" $R/coop_plan.txt | cut -d'|' -f7-13
echo "== d160/192 $(el)"; timeout 150 $B/attention_n $A --dims 160,192 --causal both --tiles 128x16x32x8,64x16x32x4 --json $R/coop_160_192.json > $R/coop_160_192.txt 2>&1; grep -E "^\| NVIDIA|rror" $R/coop_160_192.txt | cut -d'|' -f7-13
echo "== test tiers $(el)"; timeout 300 $B/tiers_n --test-threads=16 > $R/test-tiers.txt 2>&1; echo "rc=$?"; grep -E "test result|panicked|FAILED|SKIPPED" $R/test-tiers.txt | head -12
echo "== done $(el)"
tar czf $OUT/results.tgz -C $R . && rm -r $R
