# Session 8, call 6: _c1 = the tensor-core kernel as committed after this call (banded tiles inside
# the band take a copy of the score loop without the visibility test; call5's _c1 plus comments);
# _c4 = experiments/coop-interior-copy-unbanded.diff (the same for whole tiles without a band).
# The faster one by call6/pick.py then runs the tiers and variants tests.
source .device/gpu/prelude.sh; export WGPU_BACKEND=vulkan
tar xzf .device/bin.tgz -C .device
R=$OUT/r; mkdir -p $R; B=.device/bin
T0=$(date +%s); el() { echo "[$(( $(date +%s) - T0 )) s]"; }
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | tee $R/gpu.txt
A="--tokens 16384 --seqs 8192 --dtypes f16 --baseline off --kernels coop-matrix --runs 20 --warmup 5 --warmup-ms 300 --check-rows 8"
for round in 1 2; do for v in c1 c4; do echo "== attention_$v round $round $(el)"
timeout 40 $B/attention_$v $A --dims 128,64 --causal both --json $R/coop_${v}_r$round.json > $R/coop_${v}_r$round.txt 2>&1
grep -E "^\| NVIDIA|rror" $R/coop_${v}_r$round.txt | cut -d'|' -f5-13; done; done
for v in c1 c4; do timeout 60 $B/kernel_stats_$v --dims 64,128 --dtypes f16 --kernels coop-matrix > $R/stats_coop_$v.txt 2>&1; echo "$v $(grep Register $R/stats_coop_$v.txt | tr -s ' ' | tr '\n' ' ')"; done
W=$(python3 bench-results/h200-2026-11-30-session8/call6/pick.py $R); echo "winner: $W" | tee $R/winner.txt
for t in tiers variants; do echo "== test ${t}_$W $(el)"; timeout 170 $B/${t}_$W --test-threads=16 > $R/test-${t}_$W.txt 2>&1; echo "rc=$?"; grep -E "test result|panicked|FAILED" $R/test-${t}_$W.txt | head -5; done
echo "== done $(el)"
tar czf $OUT/results.tgz -C $R . && rm -r $R
