# Session 11, call 3: the tensor-core kernel with scores and probabilities in registers
# (ELEMENTS, branch coop-elements; WGPU_FLASH_ATTN_COOP_ELEMENTS=1) against the same binary
# without it (the kernel of main); correctness suites with it; PyTorch in the same call.
source .device/gpu/prelude.sh; export WGPU_BACKEND=vulkan
tar xzf .device/bin.tgz -C .device
R=$OUT/r; mkdir -p $R; B=.device/bin
T0=$(date +%s); el() { echo "[$(( $(date +%s) - T0 )) s]"; }
nvidia-smi --query-gpu=timestamp,clocks.sm,clocks.mem,power.draw,temperature.gpu --format=csv -lms 250 > $R/clocks.csv 2>&1 &
CLK=$!
for t in tiers variants forward; do echo "== test $t (elements) $(el)"
WGPU_FLASH_ATTN_COOP_ELEMENTS=1 timeout 150 $B/$t --test-threads=8 > $R/test-$t-elements.txt 2>&1; echo "rc=$?"; grep -E "test result|panicked|FAILED|failed" $R/test-$t-elements.txt | head -8; done
A="--tokens 16384 --seqs 8192 --dtypes f16 --baseline off --kernels coop-matrix --runs 20 --warmup 5 --warmup-ms 300 --check-rows 8 --dims 128,64 --causal both"
for round in 1 2; do for v in main elements; do echo "== attention $v round $round $(el)"
if [ $v = elements ]; then export WGPU_FLASH_ATTN_COOP_ELEMENTS=1; else unset WGPU_FLASH_ATTN_COOP_ELEMENTS; fi
timeout 120 $B/attention $A --json $R/attention_${v}_r$round.json > $R/attention_${v}_r$round.txt 2>&1
grep -E "^\| |rror|panic" $R/attention_${v}_r$round.txt | cut -c1-150 | tail -6; done; done
unset WGPU_FLASH_ATTN_COOP_ELEMENTS
echo "== torch $(el)"; timeout 200 python3 .device/py/torch_sdpa.py --seqs 8192 --dims 128,64 --dtypes f16 --causal both --backends flash,cudnn --json $R/torch_sdpa.json > $R/torch_sdpa.txt 2>&1; tail -8 $R/torch_sdpa.txt
echo "== kernel_stats $(el)"; WGPU_FLASH_ATTN_COOP_ELEMENTS=1 timeout 60 $B/kernel_stats --kernels coop-matrix --dims 128,64 --dtypes f16 > $R/kernel_stats_elements.txt 2>&1; grep -i -E "regist|coop|error" $R/kernel_stats_elements.txt | head -12
kill $CLK
echo "== done $(el)"
tar czf $OUT/results.tgz -C $R . && rm -r $R
