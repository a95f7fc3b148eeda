# Session 16, call 2: the tree with the wrapped staging at d = 128 (plan::coop_stage; its
# SPIR-V is vW1's at d = 128 and 1eb9f1f's elsewhere), its plan at every head dim, two rounds;
# 1eb9f1f's binary (`_old`) with shader copies through WGPU_FLASH_ATTN_SHADER_DIR at d = 64, 128
# and 160: base, vW (call 1's wrapper, with an unused stage_rows), vW1 (without it), and vW1 with
# Q K^T (vWq), P V (vWp) or the loads ahead (vWl) in a function of their own; PyTorch beside;
# the forward and variants tests of the new tree.
source .device/gpu/prelude.sh; export WGPU_BACKEND=vulkan
tar xzf .device/bin.tgz -C .device
R=$OUT/r; mkdir -p $R; B=.device/bin
T0=$(date +%s); el() { echo "[$(( $(date +%s) - T0 )) s]"; }
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | tee $R/gpu.txt
nvidia-smi --query-gpu=timestamp,clocks.sm,clocks.mem,power.draw,temperature.gpu --format=csv -lms 250 > $R/clocks.csv 2>&1 &
CLK=$!
V="base vW vW1 vWq vWp vWl"
sd() { if [ $1 = base ]; then unset WGPU_FLASH_ATTN_SHADER_DIR; else export WGPU_FLASH_ATTN_SHADER_DIR=.device/$1; fi; }
echo "== stats $(el)"
timeout 60 $B/kernel_stats --kernels coop-matrix --dims 32,64,96,128,160,192,256 --dtypes f16 > $R/stats_new.txt 2>&1
echo "new $(grep -E "Register|rror" $R/stats_new.txt | tr -s ' ' | paste -sd';')"
for v in $V; do sd $v
  timeout 60 $B/kernel_stats_old --kernels coop-matrix --dims 64,128,160 --dtypes f16 > $R/stats_$v.txt 2>&1
  echo "$v $(grep -E "Register|rror" $R/stats_$v.txt | tr -s ' ' | paste -sd';')"
done
unset WGPU_FLASH_ATTN_SHADER_DIR
A="--tokens 16384 --seqs 8192 --dtypes f16 --baseline off --kernels coop-matrix --runs 20 --warmup 5 --warmup-ms 300 --check-rows 8 --causal both"
show() { grep -E "^\| NVIDIA|rror|panic|skip" $1 | cut -d'|' -f7,9,11,13,19 | tr -s ' ' | sed "s/^/$2 /"; }
for round in 1 2; do echo "== round $round $(el)"
  unset WGPU_FLASH_ATTN_SHADER_DIR
  timeout 90 $B/attention $A --dims 32,64,96,128,160,192,256 --json $R/new_$round.json > $R/new_$round.txt 2>&1; show $R/new_$round.txt new
  for v in $V; do sd $v
    timeout 60 $B/attention_old $A --dims 64,128,160 --json $R/${v}_$round.json > $R/${v}_$round.txt 2>&1; show $R/${v}_$round.txt $v
  done
done
unset WGPU_FLASH_ATTN_SHADER_DIR
echo "== torch $(el)"; timeout 90 python3 .device/py/torch_sdpa.py --seqs 8192 --dims 128,64 --dtypes f16 --causal both --backends flash,cudnn --json $R/torch_sdpa.json > $R/torch_sdpa.txt 2>&1; tail -8 $R/torch_sdpa.txt
kill $CLK
echo "== test forward $(el)"
timeout 60 $B/forward --test-threads=16 > $R/test-forward.txt 2>&1; echo "rc=$?"; grep -E "test result|panicked|FAILED|failed" $R/test-forward.txt | head -8
echo "== test variants $(el)"
timeout 120 $B/variants --test-threads=16 > $R/test-variants.txt 2>&1; echo "rc=$?"; grep -E "test result|panicked|FAILED|failed" $R/test-variants.txt | head -8
echo "== done $(el)"
tar czf $OUT/results.tgz -C $R . && rm -r $R
