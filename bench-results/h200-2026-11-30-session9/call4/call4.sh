# Session 9, call 4: main at aa46ded (_n: 128x16x32x8 first for head dims up to 64; at least 8
# lanes per key in the KV-cache kernel). The tensor-core tier beside PyTorch (ours, PyTorch,
# ours), two larger d = 64 tiles, register counts, and the tiers, variants, forward and kvcache
# test suites.
source .device/gpu/prelude.sh; export WGPU_BACKEND=vulkan
tar xzf .device/bin.tgz -C .device
R=$OUT/r; mkdir -p $R; B=.device/bin
T0=$(date +%s); el() { echo "[$(( $(date +%s) - T0 )) s]"; }
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | tee $R/gpu.txt
nvidia-smi --query-gpu=timestamp,clocks.sm,clocks.mem,power.draw,temperature.gpu --format=csv -lms 250 > $R/clocks.csv 2>&1 &
CLK=$!
for c in "" --causal; do timeout 90 $B/kernel_stats_n --dims 64,128 --dtypes f16 --kernels coop-matrix $c > $R/stats$c.txt 2>&1; grep -E "^== |Register" $R/stats$c.txt | paste - - | cut -c1-150; done
A="--tokens 16384 --seqs 8192 --dtypes f16 --baseline off --kernels coop-matrix --runs 20 --warmup 5 --warmup-ms 300 --check-rows 8"
echo "== attention_n 1 $(el)"; timeout 90 $B/attention_n $A --dims 128,64 --causal both --json $R/coop_1.json > $R/coop_1.txt 2>&1; grep -E "^\| NVIDIA|rror" $R/coop_1.txt | cut -d'|' -f7-13
echo "== torch $(el)"; timeout 200 python3 .device/py/torch_sdpa.py --seqs 8192 --dims 128,64 --dtypes f16 --backends flash,cudnn --json $R/torch_sdpa.json > $R/torch_sdpa.txt 2>&1; tail -8 $R/torch_sdpa.txt
echo "== attention_n 2 $(el)"; timeout 90 $B/attention_n $A --dims 128,64 --causal both --json $R/coop_2.json > $R/coop_2.txt 2>&1; grep -E "^\| NVIDIA|rror" $R/coop_2.txt | cut -d'|' -f7-13
echo "== d64 tiles $(el)"; timeout 90 $B/attention_n $A --dims 64 --causal both --tiles 128x16x32x8,256x16x32x8,256x16x32x16 --json $R/tiles64.json > $R/tiles64.txt 2>&1; grep -E "^\| NVIDIA|rror|skip" $R/tiles64.txt | cut -d'|' -f7-13
for t in tiers variants forward kvcache; do echo "== test $t $(el)"; timeout 200 $B/${t}_n --test-threads=16 > $R/test-$t.txt 2>&1; echo "rc=$?"; grep -E "test result|panicked|FAILED" $R/test-$t.txt | head -5; done
kill $CLK
echo "== done $(el)"
tar czf $OUT/results.tgz -C $R . && rm -r $R
