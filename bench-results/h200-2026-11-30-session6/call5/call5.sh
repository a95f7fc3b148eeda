source .device/gpu/prelude.sh; export WGPU_BACKEND=vulkan
tar xzf .device/bin.tgz -C .device
R=$OUT/r; mkdir -p $R; B=.device/bin
T0=$(date +%s); el() { echo "[$(( $(date +%s) - T0 )) s]"; }
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | tee $R/gpu.txt
A="--tokens 16384 --seqs 8192 --dtypes f16 --baseline off --kernels coop-matrix --runs 20 --warmup 5 --warmup-ms 300 --check-rows 8"
for round in 1 2; do for v in main vs; do
echo "== $v round $round $(el)"
timeout 60 $B/attention_$v $A --dims 128,64 --causal both --json $R/${v}_$round.json > $R/${v}_$round.txt 2>&1
grep -E "^\| NVIDIA|rror" $R/${v}_$round.txt | cut -d'|' -f6-13
done; done
for round in 1 2; do
echo "== main d=64 tiles round $round $(el)"
timeout 90 $B/attention_main $A --dims 64 --causal both --tiles 128x16x32x4,64x16x32x4,128x32x32x8,64x32x32x4 --json $R/tiles64_$round.json > $R/tiles64_$round.txt 2>&1
grep -E "^\| NVIDIA|rror" $R/tiles64_$round.txt | cut -d'|' -f6-13
done
echo "== main d=128 causal tiles $(el)"
timeout 90 $B/attention_main $A --dims 128 --causal on --tiles 128x32x32x8,64x16x32x4,128x32x32x4 --json $R/tiles128c.json > $R/tiles128c.txt 2>&1
grep -E "^\| NVIDIA|rror" $R/tiles128c.txt | cut -d'|' -f6-13
for t in "tiers_vs 150" "variants_vs 120" "kvcache_vs 60"; do set -- $t; echo "== test $1 $(el)"; timeout $2 $B/$1 --test-threads=16 > $R/test-$1.txt 2>&1; echo "rc=$?"; grep -E "test result|panicked|FAILED" $R/test-$1.txt | head -8; done
echo "== done $(el)"
tar czf $OUT/results.tgz -C $R . && rm -r $R
