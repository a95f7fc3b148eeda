# Session 12, call 3: the element probe with bindings 0-5 declared (wgpu's Vulkan backend numbers
# a layout's bindings in order; passed-through SPIR-V is not renumbered), so scores in registers
# are chosen by the plan again; then a sweep of 8-subgroup tiles with 16 to 128 keys at every
# head dim (two K/V tiles where they fit up to d = 128, else one), the workgroup-memory path at
# d = 128 and 64, and PyTorch beside.
source .device/gpu/prelude.sh; export WGPU_BACKEND=vulkan
tar xzf .device/bin.tgz -C .device
R=$OUT/r; mkdir -p $R; B=.device/bin
T0=$(date +%s); el() { echo "[$(( $(date +%s) - T0 )) s]"; }
nvidia-smi --query-gpu=timestamp,clocks.sm,clocks.mem,power.draw,temperature.gpu --format=csv -lms 250 > $R/clocks.csv 2>&1 &
CLK=$!
echo "== kernel_stats $(el)"
timeout 90 $B/kernel_stats --kernels coop-matrix --dims 32,64,96,128,160,192,256 --dtypes f16 --tiles 128x16x32x8,128x32x32x8,128x64x32x8,128x128x32x8 > $R/kernel_stats.txt 2>&1; grep -E "registers|^== |Register|rror" $R/kernel_stats.txt | head -60
A="--tokens 16384 --seqs 8192 --dtypes f16 --baseline off --kernels coop-matrix --runs 20 --warmup 5 --warmup-ms 300 --check-rows 8 --causal both"
echo "== plan d128,64 $(el)"
timeout 150 $B/attention $A --dims 128,64 --json $R/attention_plan.json > $R/attention_plan.txt 2>&1
grep -E "^\| NVIDIA|rror|panic|registers" $R/attention_plan.txt | cut -d'|' -f6-15 | tail -6
echo "== off d128,64 $(el)"
timeout 150 $B/attention $A --dims 128,64 --coop-elements off --json $R/attention_off.json > $R/attention_off.txt 2>&1
grep -E "^\| NVIDIA|rror|panic" $R/attention_off.txt | cut -d'|' -f6-15 | tail -4
echo "== sweep $(el)"
timeout 400 $B/attention $A --dims 32,64,96,128,160,192,256 --tiles 128x16x32x8,128x32x32x8,128x64x32x8,128x128x32x8 --json $R/sweep.json > $R/sweep.txt 2>&1
grep -E "^\| NVIDIA|rror|panic" $R/sweep.txt | cut -d'|' -f6-15
echo "== torch $(el)"; timeout 200 python3 .device/py/torch_sdpa.py --seqs 8192 --dims 128,64 --dtypes f16 --causal both --backends flash,cudnn --json $R/torch_sdpa.json > $R/torch_sdpa.txt 2>&1; tail -8 $R/torch_sdpa.txt
kill $CLK
echo "== done $(el)"
tar czf $OUT/results.tgz -C $R . && rm -r $R
