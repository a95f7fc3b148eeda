source .device/gpu/prelude.sh; export WGPU_BACKEND=vulkan
tar xzf .device/bin.tgz -C .device
R=$OUT/r; mkdir -p $R; B=.device/bin
T0=$(date +%s); el() { echo "[$(( $(date +%s) - T0 )) s]"; }
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | tee $R/gpu.txt
A="--tokens 16384 --seqs 8192 --dtypes f16 --baseline off --kernels coop-matrix --runs 20 --warmup 5 --warmup-ms 300 --check-rows 8"
for round in 1 2; do
echo "== staged (attention_br) round $round $(el)"
timeout 60 $B/attention_br $A --dims 128,64 --causal both --json $R/staged_$round.json > $R/staged_$round.txt 2>&1
grep -E "^\| NVIDIA|rror" $R/staged_$round.txt | cut -d'|' -f6-13
echo "== direct round $round $(el)"
FA_KV_DIRECT=1 timeout 60 $B/attention_dir $A --dims 128,64 --causal both --json $R/direct_$round.json > $R/direct_$round.txt 2>&1
grep -E "^\| NVIDIA|rror" $R/direct_$round.txt | cut -d'|' -f6-13
done
echo "== direct tiles $(el)"
FA_KV_DIRECT=1 timeout 90 $B/attention_dir $A --dims 128 --causal off --tiles 64x32x32x4,128x16x32x8,64x16x32x4,128x32x32x4 --json $R/direct_tiles.json > $R/direct_tiles.txt 2>&1
grep -E "^\| NVIDIA|rror" $R/direct_tiles.txt | cut -d'|' -f6-13
echo "== test kvcache (main code) $(el)"; timeout 60 $B/kvcache_dir --test-threads=16 > $R/test-kvcache.txt 2>&1; echo "rc=$?"; grep -E "test result|panicked|FAILED" $R/test-kvcache.txt | head -5
echo "== serving auto (main code) $(el)"
timeout 120 $B/serving_dir > $R/serving_auto.txt 2>&1; echo rc=$?; tail -4 $R/serving_auto.txt
echo "== test tiers direct $(el)"; FA_KV_DIRECT=1 timeout 150 $B/tiers_dir --test-threads=16 > $R/test-tiers-direct.txt 2>&1; echo "rc=$?"; grep -E "test result|panicked|FAILED" $R/test-tiers-direct.txt | head -5
echo "== test variants direct $(el)"; FA_KV_DIRECT=1 timeout 120 $B/variants_dir --test-threads=16 > $R/test-variants-direct.txt 2>&1; echo "rc=$?"; grep -E "test result|panicked|FAILED" $R/test-variants-direct.txt | head -5
echo "== done $(el)"
tar czf $OUT/results.tgz -C $R . && rm -r $R
