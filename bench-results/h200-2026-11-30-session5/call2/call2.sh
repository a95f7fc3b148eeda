source .device/gpu/prelude.sh; export WGPU_BACKEND=vulkan
tar xzf .device/bin.tgz -C .device
R=$OUT/r; mkdir -p $R; B=.device/bin
T0=$(date +%s); el() { echo "[$(( $(date +%s) - T0 )) s]"; }
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | tee $R/gpu.txt
A="--tokens 16384 --seqs 8192 --dtypes f16 --baseline off --kernels coop-matrix --runs 20 --warmup 5 --warmup-ms 300 --check-rows 8"
for round in 1 2 3; do
for v in int sgs; do
echo "== attention $v round $round $(el)"
timeout 60 $B/attention_$v $A --dims 128,64 --causal both --json $R/attn_${v}_$round.json > $R/attn_${v}_$round.txt 2>&1
grep -E "^\| NVIDIA|rror" $R/attn_${v}_$round.txt | cut -d'|' -f6-13
done; done
for v in int sgs; do
echo "== tiles $v $(el)"
timeout 90 $B/attention_$v $A --dims 128 --causal both --tiles 128x32x32x8,128x16x32x4,64x32x32x4,64x16x32x4,128x32x32x4 --json $R/tiles_${v}.json > $R/tiles_${v}.txt 2>&1
grep -E "^\| NVIDIA|rror" $R/tiles_${v}.txt | cut -d'|' -f6-13
done
for v in sgs int; do
for t in "tiers 150" "variants 120"; do set -- $t; echo "== test $1 $v $(el)"; timeout $2 $B/$1_$v --test-threads=16 > $R/test-$1-$v.txt 2>&1; echo "rc=$?"; grep -E "test result|panicked|FAILED" $R/test-$1-$v.txt | head -5; done
done
echo "== done $(el)"
tar czf $OUT/results.tgz -C $R . && rm -r $R
