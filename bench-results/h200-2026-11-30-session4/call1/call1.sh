source .device/gpu/prelude.sh; export WGPU_BACKEND=vulkan
R=$OUT/r; mkdir -p $R; B=.device/bin
T0=$(date +%s); el() { echo "[$(( $(date +%s) - T0 )) s]"; }
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm --format=csv,noheader | tee $R/gpu.txt
echo "== kernel stats $(el)"
timeout 60 $B/kernel_stats --dims 64,128 --dtypes f16 --kernels coop-matrix --tiles 128x32x32x8,128x16x32x4,64x16x32x4 --ir $R/ir > $R/stats_coop.txt 2>&1
timeout 60 $B/kernel_stats --dims 64,128 --dtypes f16 --kernels coop-matrix --tiles 128x32x32x8,128x16x32x4 --causal > $R/stats_coop_causal.txt 2>&1
timeout 60 $B/kernel_stats --dims 128 --dtypes f32,f16 --kernels subgroup --tiles 128x32x8x32,64x32x8x16 --decode --ir $R/ir2 > $R/stats_sub.txt 2>&1
grep -E "^== |egister|pill|hared|ccupan|rror" $R/stats_coop.txt $R/stats_coop_causal.txt $R/stats_sub.txt | head -80
echo "== coop repeated $(el)"
timeout 90 $B/attention --tokens 16384 --seqs 8192 --dims 128 --dtypes f16 --causal both --baseline off --kernels coop-matrix --tiles 128x32x32x8,128x32x32x8,128x32x32x8,128x16x32x4 --runs 10 --warmup 5 --json $R/coop_rep.json > $R/coop_rep.txt 2>&1
grep -E "^\| NVIDIA|rror" $R/coop_rep.txt | cut -c1-150
echo "== decode diagnostics $(el)"
D="--batch 8 --dim 128 --seq-q 1 --kv 32768 --layouts contiguous --runs 20 --warmup-ms 150 --check-rows 1"
timeout 30 $B/decode $D --heads 32 --heads-kv 8 --dtype f16 > $R/dec_g4_f16.txt 2>&1
timeout 30 $B/decode $D --heads 8 --heads-kv 8 --dtype f16 > $R/dec_g1_f16.txt 2>&1
timeout 30 $B/decode $D --heads 32 --heads-kv 8 --dtype f32 > $R/dec_g4_f32.txt 2>&1
for f in $R/dec_*.txt; do echo $f; grep -E "^\| [0-9]|rror" $f; done
for t in "tiers 260" "variants 200"; do set -- $t; echo "== test $1 $(el)"; timeout $2 $B/$1 --test-threads=16 > $R/test-$1.txt 2>&1; echo "rc=$?"; grep -E "test result|panicked|FAILED" $R/test-$1.txt | head -5; done
echo "== done $(el)"
tar czf $OUT/results.tgz -C $R . && rm -r $R
