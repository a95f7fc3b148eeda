# Session 11, call 4: the plan with scores in registers where the device's probe passes (the
# commit after 019e154 on the branch coop-elements, as merged), against the same binary with
# --coop-elements off (the kernel of main), at every head dim; the suites on the H200; and the
# KV-cache decoding goal shape (this kernel is unchanged) beside PyTorch, three rounds.
source .device/gpu/prelude.sh; export WGPU_BACKEND=vulkan
tar xzf .device/bin.tgz -C .device
R=$OUT/r; mkdir -p $R; B=.device/bin
T0=$(date +%s); el() { echo "[$(( $(date +%s) - T0 )) s]"; }
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | tee $R/gpu.txt
nvidia-smi --query-gpu=timestamp,clocks.sm,clocks.mem,power.draw,temperature.gpu --format=csv -lms 250 > $R/clocks.csv 2>&1 &
CLK=$!
echo "== torch decode $(el)"; timeout 120 python3 .device/py/torch_decode.py --batch 8 --heads 32 --heads-kv 8 --dim 128 --kv 32768,131072 --json $R/torch_decode.json > $R/torch_decode.txt 2>&1; tail -4 $R/torch_decode.txt
D="--batch 8 --heads 32 --heads-kv 8 --dim 128 --dtype f16 --seq-q 1 --runs 30 --warmup-ms 200 --check-rows 2 --layouts contiguous,paged --page-size 16 --kv 32768,131072"
for round in 1 2 3; do echo "== decode round $round $(el)"
timeout 90 $B/decode $D --json $R/decode_r$round.json > $R/decode_r$round.txt 2>&1
grep -E "^\| [0-9]|rror|panic" $R/decode_r$round.txt | cut -c1-120; done
echo "== torch decode again $(el)"; timeout 120 python3 .device/py/torch_decode.py --batch 8 --heads 32 --heads-kv 8 --dim 128 --kv 32768,131072 --json $R/torch_decode2.json > $R/torch_decode2.txt 2>&1; tail -4 $R/torch_decode2.txt
A="--tokens 16384 --seqs 8192 --dtypes f16 --baseline off --kernels coop-matrix --runs 20 --warmup 5 --warmup-ms 300 --check-rows 8 --causal both"
for round in 1 2; do for v in auto off; do echo "== attention $v round $round $(el)"
timeout 150 $B/attention $A --dims 128,64 --coop-elements $v --json $R/attention_${v}_r$round.json > $R/attention_${v}_r$round.txt 2>&1
grep -E "^\| NVIDIA|rror|panic" $R/attention_${v}_r$round.txt | cut -d'|' -f6-15 | tail -6; done; done
for v in auto off; do echo "== attention other dims $v $(el)"
timeout 150 $B/attention $A --dims 32,96,160,192,256 --coop-elements $v --json $R/attention_dims_$v.json > $R/attention_dims_$v.txt 2>&1
grep -E "^\| NVIDIA|rror|panic" $R/attention_dims_$v.txt | cut -d'|' -f6-15 | tail -10; done
echo "== torch $(el)"; timeout 200 python3 .device/py/torch_sdpa.py --seqs 8192 --dims 128,64 --dtypes f16 --causal both --backends flash,cudnn --json $R/torch_sdpa.json > $R/torch_sdpa.txt 2>&1; tail -8 $R/torch_sdpa.txt
echo "== kernel_stats $(el)"; timeout 60 $B/kernel_stats --kernels coop-matrix --dims 32,64,96,128,160,192,256 --dtypes f16 > $R/kernel_stats.txt 2>&1; grep -E "^== |Register" $R/kernel_stats.txt | head -20
for t in tiers variants forward kvcache; do echo "== test $t $(el)"
timeout 300 $B/$t --test-threads=16 > $R/test-$t.txt 2>&1; echo "rc=$?"; grep -E "test result|panicked|FAILED|failed" $R/test-$t.txt | head -8; done
kill $CLK
echo "== done $(el)"
tar czf $OUT/results.tgz -C $R . && rm -r $R
