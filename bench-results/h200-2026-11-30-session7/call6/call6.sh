source .device/gpu/prelude.sh; export WGPU_BACKEND=vulkan
tar xzf .device/bin.tgz -C .device
R=$OUT/r; mkdir -p $R; B=.device/bin
T0=$(date +%s); el() { echo "[$(( $(date +%s) - T0 )) s]"; }
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | tee $R/gpu.txt
echo "== bandwidth $(el)"
timeout 200 $B/bandwidth --mib 1024 --patterns flat,heads --bounds branch,clamp --loads 1,2,4,8 --workgroup 64,256 --per-cu 2,6,16 --runs 10 --warmup-ms 100 --json $R/bandwidth.json > $R/bandwidth.txt 2>&1
cat $R/bandwidth.txt
D="--batch 8 --heads 32 --heads-kv 8 --dim 128 --dtype f16 --seq-q 1 --runs 20 --warmup-ms 150 --check-rows 1"
for v in _old "" _old ""; do echo "== decode$v plan $(el)"
timeout 60 $B/decode$v $D --layouts contiguous,paged --page-size 16 --kv 32768,131072 --json $R/decode$v.json > $R/decode$v.txt 2>&1
grep -E "^\| [0-9]|rror|panic" $R/decode$v.txt; done
echo "== torch decode $(el)"
timeout 90 python3 .device/py/torch_decode.py --batch 8 --heads 32 --heads-kv 8 --dim 128 --kv 32768,131072 --json $R/torch_decode.json > $R/torch_decode.txt 2>&1
grep -E "sdpa|rror" $R/torch_decode.txt | head -8
echo "== decode splits $(el)"
timeout 150 $B/decode $D --layouts contiguous --kv 32768,131072 --splits 8,12,16,24 --tiles plan,sg:64/16/8,sg:128/16/4 --json $R/splits.json > $R/splits.txt 2>&1
grep -E "^\| [0-9]|rror|panic" $R/splits.txt
echo "== test kvcache $(el)"; timeout 100 $B/kvcache --test-threads=16 > $R/test-kvcache.txt 2>&1; echo "rc=$?"; grep -E "test result|panicked|FAILED" $R/test-kvcache.txt | head -5
echo "== done $(el)"
tar czf $OUT/results.tgz -C $R . && rm -r $R
