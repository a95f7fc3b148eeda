# Session 14, call 3: one shader with two switches, set here through X_RESCALE / X_LOAD (an
# experiment build: attention_x): RESCALE_ALWAYS (O rescaled every tile) and LOAD_ALWAYS (the tile
# ahead loaded in every pass, no branch), with exp2 untested for masked scores, the sign on Q and
# one clamped load form in all four. At every head dim both ways; through workgroup memory
# (--coop-elements off) with LOAD_ALWAYS on and off; v0 = main (fe07079) beside.
source .device/gpu/prelude.sh; export WGPU_BACKEND=vulkan
tar xzf .device/bin.tgz -C .device
R=$OUT/r; mkdir -p $R; B=.device/bin
T0=$(date +%s); el() { echo "[$(( $(date +%s) - T0 )) s]"; }
nvidia-smi --query-gpu=timestamp,clocks.sm,clocks.mem,power.draw,temperature.gpu --format=csv -lms 250 > $R/clocks.csv 2>&1 &
CLK=$!
for rl in 11 10 01 00; do mkdir -p $R/cache_$rl
X_RESCALE=${rl:0:1} X_LOAD=${rl:1:1} timeout 60 $B/kernel_stats_x --kernels coop-matrix --dims 32,64,96,128,160,192,256 --dtypes f16 --cache $R/cache_$rl > $R/kernel_stats_$rl.txt 2>&1
echo "$rl: $(grep -E 'Register Count|Local Memory' $R/kernel_stats_$rl.txt | awk '{print $NF}' | tr '\n' ' ')"; done
A="--tokens 16384 --seqs 8192 --dtypes f16 --baseline off --kernels coop-matrix --runs 20 --warmup 5 --warmup-ms 300 --check-rows 8 --causal both --dims 32,64,96,128,160,192,256"
for rl in 11 10 01 00; do echo "== x$rl $(el)"
X_RESCALE=${rl:0:1} X_LOAD=${rl:1:1} timeout 100 $B/attention_x $A --json $R/x$rl.json > $R/x$rl.txt 2>&1
grep -E "^\| NVIDIA|rror|panic" $R/x$rl.txt | cut -d'|' -f3-10; done
echo "== v0 $(el)"; timeout 100 $B/attention_v0 $A --json $R/v0.json > $R/v0.txt 2>&1
grep -E "^\| NVIDIA|rror|panic" $R/v0.txt | cut -d'|' -f3-10
for l in 1 0; do echo "== off x?$l $(el)"
X_LOAD=$l timeout 100 $B/attention_x $A --coop-elements off --json $R/off_x$l.json > $R/off_x$l.txt 2>&1
grep -E "^\| NVIDIA|rror|panic" $R/off_x$l.txt | cut -d'|' -f3-10; done
echo "== off v0 $(el)"; timeout 100 $B/attention_v0 $A --coop-elements off --json $R/off_v0.json > $R/off_v0.txt 2>&1
grep -E "^\| NVIDIA|rror|panic" $R/off_v0.txt | cut -d'|' -f3-10
kill $CLK; echo "== done $(el)"
tar czf $OUT/results.tgz -C $R . && rm -r $R
