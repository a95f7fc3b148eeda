# Session 23, call 2: the tree with 64x32x16x16 as the second streamed-Q tile (the plan's d = 256
# tile now); the portable tier against the subgroup tier at every head dim, two rounds
# alternating; more subgroup tiles at d = 256, and P V unrolled there (attention_pv256: the same
# tree built with UNROLL_PV_MAX_HEAD_DIM = 256); the tensor-core tiles at d = 160, 192 and 256;
# PyTorch beside.
source .device/gpu/prelude.sh; export WGPU_BACKEND=vulkan
tar xzf .device/bin.tgz -C .device
R=$OUT/r; mkdir -p $R; B=.device/bin
T0=$(date +%s); el() { echo "[$(( $(date +%s) - T0 )) s]"; }
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | tee $R/gpu.txt
nvidia-smi --query-gpu=timestamp,clocks.sm,clocks.mem,power.draw,temperature.gpu --format=csv -lms 250 > $R/clocks.csv 2>&1 &
CLK=$!
show() { echo "$2 $(grep -E "^\| NVIDIA|rror|panic|SKIP|skip" $1 | cut -d"|" -f7,8,9,10,11,12,13,19 | tr -s ' ' | paste -sd';')"; }
S="--tokens 16384 --seqs 8192 --baseline off --runs 10 --warmup 3 --warmup-ms 300 --check-rows 8"
for round in 1 2; do
  for k in subgroup portable; do
    timeout 200 $B/attention $S --causal off --kernels $k --dtypes f32,f16 --dims 64,96,128,160,192,256 --json $R/${k}_$round.json > $R/${k}_$round.txt 2>&1; show $R/${k}_$round.txt "$k $round $(el)"
  done
done
for k in subgroup portable; do
  timeout 90 $B/attention $S --causal on --kernels $k --dtypes f32,f16 --dims 128 --json $R/${k}_causal.json > $R/${k}_causal.txt 2>&1; show $R/${k}_causal.txt "$k causal $(el)"
done
timeout 150 $B/attention $S --causal off --kernels subgroup --dtypes f32,f16 --dims 256 --tiles 64x32x16x16,32x32x16x8,64x16x16x16,128x16x16x16 --json $R/d256_tiles.json > $R/d256_tiles.txt 2>&1; show $R/d256_tiles.txt "d256 tiles $(el)"
timeout 90 $B/attention_pv256 $S --causal off --kernels subgroup --dtypes f32,f16 --dims 256 --json $R/d256_pv.json > $R/d256_pv.txt 2>&1; show $R/d256_pv.txt "d256 P V unrolled $(el)"
timeout 90 $B/attention $S --causal on --kernels subgroup --dtypes f32,f16 --dims 256 --json $R/d256_causal.json > $R/d256_causal.txt 2>&1; show $R/d256_causal.txt "d256 causal $(el)"
for d in 160 192 256; do
  timeout 60 $B/attention $S --causal off --kernels coop-matrix --dtypes f16 --dims $d --json $R/coop_plan_$d.json > $R/coop_plan_$d.txt 2>&1; show $R/coop_plan_$d.txt "coop plan $d $(el)"
  timeout 150 $B/attention $S --causal off --kernels coop-matrix --dtypes f16 --dims $d --tiles 128x16x32x8,64x32x32x4,64x16x32x4 --json $R/coop_$d.json > $R/coop_$d.txt 2>&1; show $R/coop_$d.txt "coop $d $(el)"
done
echo "== torch $(el)"; timeout 150 python3 .device/py/torch_sdpa.py --seqs 8192 --dims 128,256 --dtypes f32 --causal off --backends efficient,math --json $R/torch_f32.json > $R/torch_f32.txt 2>&1; tail -4 $R/torch_f32.txt
timeout 100 python3 .device/py/torch_sdpa.py --seqs 8192 --dims 160,192,256 --dtypes f16 --causal off --backends flash,cudnn --json $R/torch_f16.json > $R/torch_f16.txt 2>&1; tail -6 $R/torch_f16.txt
kill $CLK
echo "== done $(el)"
tar czf $OUT/results.tgz -C $R . && rm -r $R
