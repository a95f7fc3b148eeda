source .device/gpu/prelude.sh; export WGPU_BACKEND=vulkan
tar xzf .device/bin.tgz -C .device
R=$OUT/r; mkdir -p $R; B=.device/bin
T0=$(date +%s); el() { echo "[$(( $(date +%s) - T0 )) s]"; }
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | tee $R/gpu.txt
D="--batch 8 --heads 32 --heads-kv 8 --dim 128 --dtype f16 --seq-q 1 --runs 20 --warmup-ms 150 --check-rows 1"
for v in _old "" _old ""; do echo "== decode$v plan $(el)"
timeout 60 $B/decode$v $D --layouts contiguous,paged --page-size 16 --kv 32768,131072 --json $R/decode$v.json > $R/decode$v.txt 2>&1
grep -E "^\| [0-9]|rror|panic" $R/decode$v.txt; done
for v in _old ""; do echo "== decode$v splits $(el)"
timeout 150 $B/decode$v $D --layouts contiguous --kv 32768,131072 --splits 8,12,16,24,32 --tiles plan,sg:64/16/8 --json $R/splits$v.json > $R/splits$v.txt 2>&1
grep -E "^\| [0-9]|rror|panic" $R/splits$v.txt; done
echo "== decode_old small $(el)"
timeout 60 $B/decode_old $D --layouts contiguous --kv 2048 --splits 1,2,4,8 --json $R/small.json > $R/small.txt 2>&1
grep -E "^\| [0-9]|rror|panic" $R/small.txt
echo "== test kvcache $(el)"; timeout 100 $B/kvcache --test-threads=16 > $R/test-kvcache.txt 2>&1; echo "rc=$?"; grep -E "test result|panicked|FAILED" $R/test-kvcache.txt | head -5
echo "== done $(el)"
tar czf $OUT/results.tgz -C $R . && rm -r $R
