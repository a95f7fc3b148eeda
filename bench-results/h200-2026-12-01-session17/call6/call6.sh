# Session 17, call 6: the final tree (8e2cefe) against the tree before (9a7749e, `attention_old`)
# non-causal, where the code path did not change (the new block order sits behind BANDED),
# alternating new, old, new, old.
source .device/gpu/prelude.sh; export WGPU_BACKEND=vulkan
tar xzf .device/bin.tgz -C .device
R=$OUT/r; mkdir -p $R; B=.device/bin
T0=$(date +%s); el() { echo "[$(( $(date +%s) - T0 )) s]"; }
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | tee $R/gpu.txt
show() { echo "$2 $(grep -E "^\| NVIDIA|rror|panic|skip" $1 | cut -d'|' -f6,7,9,11,13,19 | tr -s ' ' | paste -sd';')"; }
A="--tokens 16384 --dtypes f16 --baseline off --kernels coop-matrix --runs 20 --warmup 5 --warmup-ms 300 --check-rows 8 --causal off --seqs 8192"
for v in new_1 old_1 new_2 old_2; do echo "== $v $(el)"
  if [ ${v%_*} = new ]; then X=$B/attention; else X=$B/attention_old; fi
  timeout 60 $X $A --dims 32,64,96,128,160,192,256 --json $R/$v.json > $R/$v.txt 2>&1; show $R/$v.txt $v
done
echo "== done $(el)"
tar czf $OUT/results.tgz -C $R . && rm -r $R
