# Session 16, call 3: a screening round (one run each) of syntactic forms of the key loop at the
# head dims other than 128, on the tree of call 2 (d = 128 wrapped) with shader copies through
# WGPU_FLASH_ATTN_SHADER_DIR: the loads ahead (vL), Q K^T (vQf), P V (vPf), or both loads and
# Q K^T (vLq) in functions of their own; the file's staging behind the wrapper with the loads
# (vWl) or Q K^T (vWq) in a function. At d = 96 and 192 the plan still puts K-rows-first
# staging in place of the file's STAGE block.
source .device/gpu/prelude.sh; export WGPU_BACKEND=vulkan
tar xzf .device/bin.tgz -C .device
R=$OUT/r; mkdir -p $R; B=.device/bin
T0=$(date +%s); el() { echo "[$(( $(date +%s) - T0 )) s]"; }
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | tee $R/gpu.txt
nvidia-smi --query-gpu=timestamp,clocks.sm,clocks.mem,power.draw,temperature.gpu --format=csv -lms 250 > $R/clocks.csv 2>&1 &
CLK=$!
V="base vL vQf vPf vWl vWq vLq"
DIMS=32,64,96,160,192,256
sd() { if [ $1 = base ]; then unset WGPU_FLASH_ATTN_SHADER_DIR; else export WGPU_FLASH_ATTN_SHADER_DIR=.device/$1; fi; }
echo "== stats $(el)"
for v in $V; do sd $v
  timeout 60 $B/kernel_stats --kernels coop-matrix --dims $DIMS --dtypes f16 > $R/stats_$v.txt 2>&1
  echo "$v $(grep -E "Register|rror" $R/stats_$v.txt | tr -s ' ' | cut -d' ' -f3 | paste -sd' ')"
done
A="--tokens 16384 --seqs 8192 --dtypes f16 --baseline off --kernels coop-matrix --runs 20 --warmup 5 --warmup-ms 300 --check-rows 8 --causal both"
echo "== runs $(el)"
for v in $V; do sd $v
  timeout 70 $B/attention $A --dims $DIMS --json $R/$v.json > $R/$v.txt 2>&1
  echo "$v $(grep -E "^\| NVIDIA|rror|panic|skip" $R/$v.txt | cut -d'|' -f7,9,13,19 | tr -s ' ' | paste -sd';')"
done
kill $CLK
echo "== done $(el)"
tar czf $OUT/results.tgz -C $R . && rm -r $R
