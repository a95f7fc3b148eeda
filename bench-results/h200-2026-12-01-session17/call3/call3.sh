# Session 17, call 3: banded query blocks longest first within groups of heads (variants g264 and
# g528 of both forward shaders: the heads split into max(1, heads * blocks / 264 or 528) groups of
# nearly equal size, each group's blocks longest first with its heads side by side) against the
# built-in order; two rounds alternating.
source .device/gpu/prelude.sh; export WGPU_BACKEND=vulkan
tar xzf .device/bin.tgz -C .device
R=$OUT/r; mkdir -p $R; B=.device/bin
T0=$(date +%s); el() { echo "[$(( $(date +%s) - T0 )) s]"; }
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | tee $R/gpu.txt
nvidia-smi --query-gpu=timestamp,clocks.sm,clocks.mem,power.draw,temperature.gpu --format=csv -lms 250 > $R/clocks.csv 2>&1 &
CLK=$!
show() { echo "$2 $(grep -E "^\| NVIDIA|rror|panic|skip" $1 | cut -d'|' -f6,7,8,9,13 | tr -s ' ' | paste -sd';')"; }
C="--tokens 16384 --dtypes f16 --baseline off --kernels coop-matrix --runs 20 --warmup 5 --warmup-ms 300 --check-rows 8"
S="--tokens 16384 --seqs 8192 --dtypes f32,f16 --baseline off --kernels subgroup --runs 10 --warmup 3 --warmup-ms 300 --check-rows 8 --causal on"
for round in 1 2; do
for v in base g264 g528; do echo "== $v round $round $(el)"
  if [ $v = base ]; then unset WGPU_FLASH_ATTN_SHADER_DIR; else export WGPU_FLASH_ATTN_SHADER_DIR=.device/var/$v; fi
  timeout 90 $B/attention $C --seqs 8192 --causal on --dims 32,64,96,128,160,192,256 --json $R/coop_${v}_$round.json > $R/coop_${v}_$round.txt 2>&1; show $R/coop_${v}_$round.txt $v
  timeout 90 $B/attention $C --seqs 2048,4096,16384 --causal on --dims 128 --json $R/coopN_${v}_$round.json > $R/coopN_${v}_$round.txt 2>&1; show $R/coopN_${v}_$round.txt $v
  timeout 90 $B/attention $S --dims 128,64 --json $R/sg_${v}_$round.json > $R/sg_${v}_$round.txt 2>&1; show $R/sg_${v}_$round.txt $v
done; done
unset WGPU_FLASH_ATTN_SHADER_DIR
kill $CLK
echo "== done $(el)"
tar czf $OUT/results.tgz -C $R . && rm -r $R
