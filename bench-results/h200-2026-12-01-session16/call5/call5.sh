# Session 16, call 5: the final tree (call 4's) against shader copies through
# WGPU_FLASH_ATTN_SHADER_DIR at d = 64, 96 and 128, two rounds alternating: O's rescale in a
# function of its own (vO), P V with the key blocks outermost (vPo), Q K^T with the head-dim
# blocks outermost (vQo), both orders (vC). The plan's blocks (staging at d = 96 and 128, the
# loads' function at d = 64) are put in place in every copy.
source .device/gpu/prelude.sh; export WGPU_BACKEND=vulkan
tar xzf .device/bin.tgz -C .device
R=$OUT/r; mkdir -p $R; B=.device/bin
T0=$(date +%s); el() { echo "[$(( $(date +%s) - T0 )) s]"; }
nvidia-smi --query-gpu=timestamp,clocks.sm,clocks.mem,power.draw,temperature.gpu --format=csv -lms 250 > $R/clocks.csv 2>&1 &
CLK=$!
A="--tokens 16384 --seqs 8192 --dtypes f16 --baseline off --kernels coop-matrix --runs 20 --warmup 5 --warmup-ms 300 --check-rows 8 --causal both"
sd() { if [ $1 = base ]; then unset WGPU_FLASH_ATTN_SHADER_DIR; else export WGPU_FLASH_ATTN_SHADER_DIR=.device/$1; fi; }
for round in 1 2; do echo "== round $round $(el)"
  for v in base vO vPo vQo vC; do sd $v
    timeout 60 $B/attention $A --dims 64,96,128 --json $R/${v}_$round.json > $R/${v}_$round.txt 2>&1
    echo "$v $(grep -E "^\| NVIDIA|rror|panic|skip" $R/${v}_$round.txt | cut -d'|' -f7,9,13,19 | tr -s ' ' | paste -sd';')"
  done
done
kill $CLK
echo "== done $(el)"
tar czf $OUT/results.tgz -C $R . && rm -r $R
