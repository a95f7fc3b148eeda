# Session 12, call 5: (a) compute blocks: each staged tile of BN keys scored, softmaxed and
# multiplied into O in blocks of SUB keys (attention: SUB = BN, as committed; _sub32 / _sub64:
# SUB = 32 / 64 where scores are in registers), forced long tiles, alternating, two rounds;
# (b) the plan of HEAD (49633db, *_head) at every head dim, two rounds, PyTorch beside; the
# KV-cache decoding goal shape beside PyTorch, two rounds.
source .device/gpu/prelude.sh; export WGPU_BACKEND=vulkan
tar xzf .device/bin.tgz -C .device
R=$OUT/r; mkdir -p $R; B=.device/bin
T0=$(date +%s); el() { echo "[$(( $(date +%s) - T0 )) s]"; }
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | tee $R/gpu.txt
nvidia-smi --query-gpu=timestamp,clocks.sm,clocks.mem,power.draw,temperature.gpu --format=csv -lms 250 > $R/clocks.csv 2>&1 &
CLK=$!
for v in "" _sub32 _sub64; do timeout 60 $B/kernel_stats$v --kernels coop-matrix --dims 128,64 --dtypes f16 --tiles 128x64x32x8,128x128x32x8 > $R/kernel_stats$v.txt 2>&1; echo "kernel_stats$v"; grep -E "^== |Register" $R/kernel_stats$v.txt; done
A="--tokens 16384 --seqs 8192 --dtypes f16 --baseline off --kernels coop-matrix --runs 20 --warmup 5 --warmup-ms 300 --check-rows 8 --causal both"
for round in 1 2; do for v in "" _sub32 _sub64; do echo "== attention$v round $round $(el)"
timeout 150 $B/attention$v $A --dims 32,64,96,128 --tiles 128x64x32x8,128x128x32x8 --json $R/sub${v}_r$round.json > $R/sub${v}_r$round.txt 2>&1
grep -E "^\| NVIDIA|rror|panic" $R/sub${v}_r$round.txt | cut -d'|' -f6-15; done; done
for round in 1 2; do echo "== plan round $round $(el)"
timeout 200 $B/attention_head $A --dims 32,64,96,128,160,192,256 --json $R/plan_r$round.json > $R/plan_r$round.txt 2>&1
grep -E "^\| NVIDIA|rror|panic|registers" $R/plan_r$round.txt | cut -d'|' -f6-15; done
echo "== plan off $(el)"
timeout 200 $B/attention_head $A --dims 32,64,96,128,160,192,256 --coop-elements off --json $R/plan_off.json > $R/plan_off.txt 2>&1
grep -E "^\| NVIDIA|rror|panic" $R/plan_off.txt | cut -d'|' -f6-15
echo "== torch $(el)"; timeout 200 python3 .device/py/torch_sdpa.py --seqs 8192 --dims 128,64 --dtypes f16 --causal both --backends flash,cudnn --json $R/torch_sdpa.json > $R/torch_sdpa.txt 2>&1; tail -8 $R/torch_sdpa.txt
D="--batch 8 --heads 32 --heads-kv 8 --dim 128 --dtype f16 --seq-q 1 --runs 30 --warmup-ms 200 --check-rows 2 --layouts contiguous,paged --page-size 16 --kv 32768,131072"
for round in 1 2; do echo "== decode round $round $(el)"
timeout 120 python3 .device/py/torch_decode.py --batch 8 --heads 32 --heads-kv 8 --dim 128 --kv 32768,131072 --json $R/torch_decode_r$round.json > $R/torch_decode_r$round.txt 2>&1; tail -4 $R/torch_decode_r$round.txt
timeout 90 $B/decode_head $D --json $R/decode_r$round.json > $R/decode_r$round.txt 2>&1
grep -E "^\| [0-9]|rror|panic" $R/decode_r$round.txt | cut -c1-120; done
kill $CLK
echo "== done $(el)"
tar czf $OUT/results.tgz -C $R . && rm -r $R
