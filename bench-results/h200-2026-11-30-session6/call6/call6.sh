source .device/gpu/prelude.sh; export WGPU_BACKEND=vulkan
tar xzf .device/bin.tgz -C .device
R=$OUT/r; mkdir -p $R; B=.device/bin
A="--tokens 16384 --seqs 8192 --dtypes f16 --baseline off --kernels coop-matrix --runs 20 --warmup 5 --warmup-ms 300 --check-rows 8"
for round in 1 2; do
echo "== vs d=64 tiles round $round"
timeout 90 $B/attention_vs $A --dims 64 --causal both --tiles 128x16x32x4,64x16x32x4,128x32x32x8 --json $R/tiles64_vs_$round.json > $R/tiles64_vs_$round.txt 2>&1
grep -E "^\| NVIDIA|rror" $R/tiles64_vs_$round.txt | cut -d'|' -f6-13
done
echo "== vs d=128 tiles"
timeout 90 $B/attention_vs $A --dims 128 --causal both --tiles 128x32x32x8,64x16x32x4 --json $R/tiles128_vs.json > $R/tiles128_vs.txt 2>&1
grep -E "^\| NVIDIA|rror" $R/tiles128_vs.txt | cut -d'|' -f6-13
tar czf $OUT/results.tgz -C $R . && rm -r $R
