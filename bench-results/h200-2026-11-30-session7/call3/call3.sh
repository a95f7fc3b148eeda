source .device/gpu/prelude.sh; export WGPU_BACKEND=vulkan
tar xzf .device/bin.tgz -C .device
R=$OUT/r; mkdir -p $R; B=.device/bin
T0=$(date +%s); el() { echo "[$(( $(date +%s) - T0 )) s]"; }
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | tee $R/gpu.txt
D="--batch 8 --heads 32 --heads-kv 8 --dim 128 --dtype f16 --seq-q 1 --runs 20 --warmup-ms 150 --check-rows 1"
echo "== decode, plan, by length $(el)"
timeout 90 $B/decode_old $D --layouts contiguous --kv 2048,4096,8192,16384,32768,65536,131072 --json $R/lengths.json > $R/lengths.txt 2>&1
grep -E "^\| [0-9]|rror|panic" $R/lengths.txt
echo "== torch decode by length $(el)"
timeout 120 python3 .device/py/torch_decode.py --batch 8 --heads 32 --heads-kv 8 --dim 128 --kv 2048,4096,8192,16384,32768,65536,131072 --json $R/torch_lengths.json > $R/torch_lengths.txt 2>&1
grep -E "sdpa|rror" $R/torch_lengths.txt | head -20
echo "== decode, 8 keys per lane, one wave $(el)"
timeout 120 $B/decode_old $D --layouts contiguous --kv 32768 --splits 9,10,11 --tiles sg:64/16/8 --json $R/kk8_64.json > $R/kk8_64.txt 2>&1
timeout 120 $B/decode_old $D --layouts contiguous --kv 32768 --splits 18,20,22 --tiles sg:32/16/8 --json $R/kk8_32.json > $R/kk8_32.txt 2>&1
timeout 120 $B/decode_old $D --layouts contiguous --kv 131072 --splits 10,20 --tiles sg:64/16/8,sg:32/16/8 --json $R/kk8_128k.json > $R/kk8_128k.txt 2>&1
grep -hE "^\| [0-9]|rror|panic" $R/kk8_*.txt
echo "== done $(el)"
tar czf $OUT/results.tgz -C $R . && rm -r $R
