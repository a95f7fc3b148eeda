source .device/gpu/prelude.sh; export WGPU_BACKEND=vulkan
tar xzf .device/bin.tgz -C .device
R=$OUT/r; mkdir -p $R; B=.device/bin
T0=$(date +%s); el() { echo "[$(( $(date +%s) - T0 )) s]"; }
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | tee $R/gpu.txt
A="--tokens 16384 --seqs 8192 --dtypes f16 --baseline off --kernels coop-matrix --runs 20 --warmup 5 --warmup-ms 300 --check-rows 8"
for round in 1 2; do for v in attention attention_ia; do
echo "== $v round $round $(el)"
timeout 60 $B/$v $A --dims 128,64 --causal both --json $R/${v}_$round.json > $R/${v}_$round.txt 2>&1
grep -E "^\| NVIDIA|rror" $R/${v}_$round.txt | cut -d'|' -f6-13
done; done
echo "== tiles $(el)"
timeout 60 $B/attention $A --dims 128 --causal off --tiles 128x16x32x8,128x32x32x8 --json $R/tiles.json > $R/tiles.txt 2>&1
grep -E "^\| NVIDIA|rror" $R/tiles.txt | cut -d'|' -f6-13
echo "== serving $(el)"
timeout 120 $B/serving > $R/serving.txt 2>&1; echo rc=$?
tail -4 $R/serving.txt
for t in "tiers_ia 150" "variants_ia 120"; do set -- $t; echo "== test $1 $(el)"; timeout $2 $B/$1 --test-threads=16 > $R/test-$1.txt 2>&1; echo "rc=$?"; grep -E "test result|panicked|FAILED" $R/test-$1.txt | head -5; done
echo "== done $(el)"
tar czf $OUT/results.tgz -C $R . && rm -r $R
