R=$OUT/r; mkdir -p $R; B=.device/bin
T0=$(date +%s); el() { echo "[$(( $(date +%s) - T0 )) s]"; }
echo "== plan defaults $(el)"
timeout 40 $B/attention --tokens 16384 --seqs 8192 --dims 128 --dtypes f32,f16 --causal both --kernels auto --baseline off --runs 10 --warmup 5 --json $R/plan_defaults.json > $R/plan_defaults.txt 2>&1
grep -E "^\| NVIDIA|rror" $R/plan_defaults.txt | cut -c1-150
timeout 30 $B/decode --batch 8 --heads 32 --heads-kv 8 --dim 128 --dtype f16 --kv 32768,131072 --layouts contiguous,paged --page-size 16 --runs 20 --json $R/decode_plan.json > $R/decode_plan.txt 2>&1
grep -E "^\| [0-9]|rror" $R/decode_plan.txt
for t in "tiers 120" "kvcache 50" "forward 30" "variants 50"; do set -- $t; echo "== test $1 $(el)"; timeout $2 $B/$1 --test-threads=16 > $R/test-$1.txt 2>&1; echo "rc=$?"; grep -E "test result|panicked|FAILED" $R/test-$1.txt | head -5; done
echo "== done $(el)"
tar czf $OUT/results.tgz -C $R . && rm -r $R
