# Session 12, call 1: the committed plan (HEAD 664b85e: attention_base) against the working tree
# (attention: the visibility test skipped on every interior tile, not only banded ones; K/V tile
# count chosen by fit), alternating, at d = 128 and 64; the other head dims; a tile sweep with the
# working tree (BN = 64 and 4-subgroup tiles, now allowed one K/V tile where two do not fit);
# kernel statistics; PyTorch beside; one decode round beside PyTorch.
source .device/gpu/prelude.sh; export WGPU_BACKEND=vulkan
tar xzf .device/bin.tgz -C .device
R=$OUT/r; mkdir -p $R; B=.device/bin
T0=$(date +%s); el() { echo "[$(( $(date +%s) - T0 )) s]"; }
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | tee $R/gpu.txt
nvidia-smi --query-gpu=timestamp,clocks.sm,clocks.mem,power.draw,temperature.gpu --format=csv -lms 250 > $R/clocks.csv 2>&1 &
CLK=$!
A="--tokens 16384 --seqs 8192 --dtypes f16 --baseline off --kernels coop-matrix --runs 20 --warmup 5 --warmup-ms 300 --check-rows 8 --causal both"
for round in 1 2; do for b in attention_base attention; do echo "== $b round $round $(el)"
timeout 150 $B/$b $A --dims 128,64 --json $R/${b}_r$round.json > $R/${b}_r$round.txt 2>&1
grep -E "^\| NVIDIA|rror|panic" $R/${b}_r$round.txt | cut -d'|' -f6-15 | tail -6; done; done
echo "== other dims $(el)"
timeout 150 $B/attention $A --dims 32,96,160,192,256 --json $R/attention_dims.json > $R/attention_dims.txt 2>&1
grep -E "^\| NVIDIA|rror|panic" $R/attention_dims.txt | cut -d'|' -f6-15 | tail -10
echo "== sweep d128 $(el)"
timeout 200 $B/attention $A --dims 128 --tiles 128x32x32x8,128x64x32x8,64x64x32x4,64x32x32x4,128x32x32x4,128x16x32x4 --json $R/sweep128.json > $R/sweep128.txt 2>&1
grep -E "^\| NVIDIA|rror|panic|skip" $R/sweep128.txt | cut -d'|' -f4-15 | tail -14
echo "== sweep d64 $(el)"
timeout 200 $B/attention $A --dims 64 --tiles 128x16x32x8,128x32x32x8,128x64x32x8,64x64x32x4,64x32x32x4,128x32x32x4 --json $R/sweep64.json > $R/sweep64.txt 2>&1
grep -E "^\| NVIDIA|rror|panic|skip" $R/sweep64.txt | cut -d'|' -f4-15 | tail -14
echo "== kernel_stats $(el)"
timeout 60 $B/kernel_stats --kernels coop-matrix --dims 32,64,96,128,160,192,256 --dtypes f16 > $R/kernel_stats.txt 2>&1; grep -E "^== |Register" $R/kernel_stats.txt | head -20
timeout 60 $B/kernel_stats --kernels coop-matrix --dims 128,64 --dtypes f16 --tiles 128x64x32x8,64x64x32x4,64x32x32x4,128x32x32x4,128x16x32x4,128x32x32x8 > $R/kernel_stats_tiles.txt 2>&1; grep -E "^== |Register" $R/kernel_stats_tiles.txt | head -30
echo "== torch $(el)"; timeout 200 python3 .device/py/torch_sdpa.py --seqs 8192 --dims 128,64 --dtypes f16 --causal both --backends flash,cudnn --json $R/torch_sdpa.json > $R/torch_sdpa.txt 2>&1; tail -8 $R/torch_sdpa.txt
echo "== decode $(el)"
timeout 120 python3 .device/py/torch_decode.py --batch 8 --heads 32 --heads-kv 8 --dim 128 --kv 32768,131072 --json $R/torch_decode.json > $R/torch_decode.txt 2>&1; tail -4 $R/torch_decode.txt
timeout 90 $B/decode --batch 8 --heads 32 --heads-kv 8 --dim 128 --dtype f16 --seq-q 1 --runs 30 --warmup-ms 200 --check-rows 2 --layouts contiguous,paged --page-size 16 --kv 32768,131072 --json $R/decode.json > $R/decode.txt 2>&1
grep -E "^\| [0-9]|rror|panic" $R/decode.txt | cut -c1-120
kill $CLK
echo "== done $(el)"
tar czf $OUT/results.tgz -C $R . && rm -r $R
