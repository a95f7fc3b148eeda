source .device/gpu/prelude.sh; export WGPU_BACKEND=vulkan
tar xzf .device/bin.tgz -C .device
R=$OUT/r; mkdir -p $R; B=.device/bin
T0=$(date +%s); el() { echo "[$(( $(date +%s) - T0 )) s]"; }
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | tee $R/gpu.txt
for t in "tiers_br 150" "variants_br 120" "kvcache_br 60"; do set -- $t; echo "== test $1 $(el)"; timeout $2 $B/$1 --test-threads=16 > $R/test-$1.txt 2>&1; echo "rc=$?"; grep -E "test result|panicked|FAILED" $R/test-$1.txt | head -8; done
echo "== serving fp0 $(el)"
timeout 120 $B/serving_br --forward-prefill 0 > $R/serving_fp0.txt 2>&1; echo rc=$?; tail -3 $R/serving_fp0.txt
echo "== serving fp1 $(el)"
timeout 120 $B/serving_br --forward-prefill 1 > $R/serving_fp1.txt 2>&1; echo rc=$?; tail -3 $R/serving_fp1.txt
A="--tokens 16384 --seqs 8192 --dtypes f16 --baseline off --kernels coop-matrix --runs 20 --warmup 5 --warmup-ms 300 --check-rows 8"
for v in attention_br attention_main; do echo "== $v $(el)"
timeout 60 $B/$v $A --dims 128,64 --causal both --json $R/$v.json > $R/$v.txt 2>&1
grep -E "^\| NVIDIA|rror" $R/$v.txt | cut -d'|' -f6-13; done
echo "== torch $(el)"
timeout 150 python3 .device/py/torch_sdpa.py --seqs 8192 --dims 128,64 --dtypes f16 --json $R/torch_8k.json > $R/torch_8k.txt 2>&1; echo rc=$?; tail -8 $R/torch_8k.txt
echo "== done $(el)"
tar czf $OUT/results.tgz -C $R . && rm -r $R
