# Session 17, call 2: banded (causal) query blocks longest first over all heads and batches
# (variant `ord` of both forward shaders) against the built-in order (the tensor-core kernel:
# longest first within each head; the portable and subgroup kernel: shortest first), and the
# subgroup kernel longest first within each head (`rev`); two rounds alternating; PyTorch beside;
# decoding beside PyTorch (unchanged kernel); the forward and variants tests on `ord`.
source .device/gpu/prelude.sh; export WGPU_BACKEND=vulkan
tar xzf .device/bin.tgz -C .device
R=$OUT/r; mkdir -p $R; B=.device/bin
T0=$(date +%s); el() { echo "[$(( $(date +%s) - T0 )) s]"; }
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | tee $R/gpu.txt
nvidia-smi --query-gpu=timestamp,clocks.sm,clocks.mem,power.draw,temperature.gpu --format=csv -lms 250 > $R/clocks.csv 2>&1 &
CLK=$!
show() { echo "$2 $(grep -E "^\| NVIDIA|rror|panic|skip" $1 | cut -d'|' -f6,7,8,9,11,13,19 | tr -s ' ' | paste -sd';')"; }
C="--tokens 16384 --dtypes f16 --baseline off --kernels coop-matrix --runs 20 --warmup 5 --warmup-ms 300 --check-rows 8"
S="--tokens 16384 --seqs 8192 --dtypes f32,f16 --baseline off --kernels subgroup --runs 10 --warmup 3 --warmup-ms 300 --check-rows 8 --causal on"
for round in 1 2; do
for v in base ord; do echo "== coop $v round $round $(el)"
  if [ $v = base ]; then unset WGPU_FLASH_ATTN_SHADER_DIR; else export WGPU_FLASH_ATTN_SHADER_DIR=.device/var/$v; fi
  timeout 90 $B/attention $C --seqs 8192 --causal on --dims 32,64,96,128,160,192,256 --json $R/coop_${v}_$round.json > $R/coop_${v}_$round.txt 2>&1; show $R/coop_${v}_$round.txt $v
  timeout 90 $B/attention $C --seqs 2048,4096,8192 --causal both --dims 128 --json $R/coopN_${v}_$round.json > $R/coopN_${v}_$round.txt 2>&1; show $R/coopN_${v}_$round.txt $v
done
for v in base rev ord; do echo "== subgroup $v round $round $(el)"
  if [ $v = base ]; then unset WGPU_FLASH_ATTN_SHADER_DIR; else export WGPU_FLASH_ATTN_SHADER_DIR=.device/var/$v; fi
  timeout 90 $B/attention $S --dims 128,64 --json $R/sg_${v}_$round.json > $R/sg_${v}_$round.txt 2>&1; show $R/sg_${v}_$round.txt $v
done; done
unset WGPU_FLASH_ATTN_SHADER_DIR
echo "== torch $(el)"; timeout 90 python3 .device/py/torch_sdpa.py --seqs 2048,4096,8192 --dims 128,64 --dtypes f16 --causal both --backends flash,cudnn --json $R/torch_sdpa.json > $R/torch_sdpa.txt 2>&1; tail -12 $R/torch_sdpa.txt
echo "== decode $(el)"
timeout 90 $B/decode --batch 8 --heads 32 --heads-kv 8 --dim 128 --dtype f16 --seq-q 1 --runs 30 --warmup-ms 200 --check-rows 2 --layouts contiguous,paged --page-size 16 --kv 32768,131072 --json $R/decode.json > $R/decode.txt 2>&1; grep -E "^\| NVIDIA|^\| [0-9]|rror|panic" $R/decode.txt | head -8
timeout 90 python3 .device/py/torch_decode.py --batch 8 --heads 32 --heads-kv 8 --dim 128 --kv 32768,131072 --json $R/torch_decode.json > $R/torch_decode.txt 2>&1; tail -4 $R/torch_decode.txt
kill $CLK
echo "== test forward (ord) $(el)"
WGPU_FLASH_ATTN_SHADER_DIR=.device/var/ord timeout 60 $B/forward --test-threads=16 > $R/test-forward-ord.txt 2>&1; echo "rc=$?"; grep -E "test result|panicked|FAILED|failed" $R/test-forward-ord.txt | head -8
echo "== test variants (ord) $(el)"
WGPU_FLASH_ATTN_SHADER_DIR=.device/var/ord timeout 120 $B/variants --test-threads=16 > $R/test-variants-ord.txt 2>&1; echo "rc=$?"; grep -E "test result|panicked|FAILED|failed" $R/test-variants-ord.txt | head -8
echo "== done $(el)"
tar czf $OUT/results.tgz -C $R . && rm -r $R
