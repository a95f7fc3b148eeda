source .device/gpu/prelude.sh; export WGPU_BACKEND=vulkan
tar xzf .device/bin.tgz -C .device
R=$OUT/r; mkdir -p $R; B=.device/bin
T0=$(date +%s); el() { echo "[$(( $(date +%s) - T0 )) s]"; }
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | tee $R/gpu.txt
for v in _old _a _ab; do timeout 60 $B/kernel_stats$v --dims 128 --dtypes f16 --kernels subgroup --decode > $R/stats$v.txt 2>&1; echo "$v $(grep -A3 '== decode' $R/stats$v.txt | grep Register)"; done
D="--batch 8 --heads 32 --heads-kv 8 --dim 128 --dtype f16 --seq-q 1 --runs 20 --warmup-ms 150 --check-rows 1"
for round in 1 2; do for v in _old _a _ab; do echo "== decode$v round $round $(el)"
timeout 60 $B/decode$v $D --layouts contiguous,paged --page-size 16 --kv 32768,131072 --json $R/decode${v}_$round.json > $R/decode${v}_$round.txt 2>&1
grep -E "^\| [0-9]|rror|panic" $R/decode${v}_$round.txt; done; done
for v in _a _ab; do echo "== decode$v splits $(el)"
timeout 90 $B/decode$v $D --layouts contiguous --kv 32768 --splits 12,14,16,24 --json $R/splits32k$v.json > $R/splits32k$v.txt 2>&1
timeout 90 $B/decode$v $D --layouts contiguous --kv 131072 --splits 24,28,32,48 --json $R/splits128k$v.json > $R/splits128k$v.txt 2>&1
grep -hE "^\| [0-9]|rror|panic" $R/splits32k$v.txt $R/splits128k$v.txt; done
echo "== test kvcache_ab $(el)"; timeout 100 $B/kvcache_ab --test-threads=16 > $R/test-kvcache_ab.txt 2>&1; echo "rc=$?"; grep -E "test result|panicked|FAILED" $R/test-kvcache_ab.txt | head -5
echo "== done $(el)"
tar czf $OUT/results.tgz -C $R . && rm -r $R
