source .device/gpu/prelude.sh; export WGPU_BACKEND=vulkan
tar xzf .device/bin.tgz -C .device
R=$OUT/r; mkdir -p $R; B=.device/bin
T0=$(date +%s); el() { echo "[$(( $(date +%s) - T0 )) s]"; }
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | tee $R/gpu.txt
D="--batch 8 --heads 32 --heads-kv 8 --dim 128 --dtype f16 --seq-q 1 --runs 20 --warmup-ms 150 --check-rows 1"
echo "== decode short caches $(el)"
timeout 60 $B/decode $D --layouts contiguous --kv 16,256,1024,4096 --json $R/short.json > $R/short.txt 2>&1
grep -E "^\| [0-9]|rror|panic" $R/short.txt
timeout 60 $B/decode $D --layouts contiguous --kv 16,256 --splits 1,2 --json $R/short_splits.json > $R/short_splits.txt 2>&1
grep -E "^\| [0-9]|rror|panic" $R/short_splits.txt
echo "== torch decode short caches $(el)"
timeout 90 python3 .device/py/torch_decode.py --batch 8 --heads 32 --heads-kv 8 --dim 128 --kv 16,256,1024,4096 --json $R/torch_short.json > $R/torch_short.txt 2>&1
grep -E "sdpa|rror" $R/torch_short.txt | head -12
echo "== bandwidth, 64 invocations $(el)"
timeout 100 $B/bandwidth --mib 1024 --patterns heads --loads 4,8 --workgroup 64 --per-cu 4,6,8,10,12,16 --runs 10 --warmup-ms 100 --json $R/bandwidth64.json > $R/bandwidth64.txt 2>&1
cat $R/bandwidth64.txt
echo "== done $(el)"
tar czf $OUT/results.tgz -C $R . && rm -r $R
