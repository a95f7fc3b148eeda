# Session 18, call 1: does the contiguous cache's read order cost the 128k decode? The cache at
# 131072 keys (a power of two: 256 MiB between sequences) and at 130048, contiguous and paged;
# the KV-cache kernel on main (`base`) against each split visiting its tiles from a point hashed
# from the sequence (`rot`) or from the sequence and KV head (`roth`); two rounds alternating;
# PyTorch beside. Then the kvcache tests on both variants and main, and the whole tiers suite.
source .device/gpu/prelude.sh; export WGPU_BACKEND=vulkan
tar xzf .device/bin.tgz -C .device
R=$OUT/r; mkdir -p $R; B=.device/bin
T0=$(date +%s); el() { echo "[$(( $(date +%s) - T0 )) s]"; }
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | tee $R/gpu.txt
nvidia-smi --query-gpu=timestamp,clocks.sm,clocks.mem,power.draw,temperature.gpu --format=csv -lms 250 > $R/clocks.csv 2>&1 &
CLK=$!
D="--batch 8 --heads 32 --heads-kv 8 --dim 128 --dtype f16 --seq-q 1 --runs 30 --warmup-ms 200 --check-rows 2 --layouts contiguous,paged --page-size 16"
for round in 1 2; do
for v in base rot roth; do echo "== decode $v round $round $(el)"
  if [ $v = base ]; then unset WGPU_FLASH_ATTN_SHADER_DIR; else export WGPU_FLASH_ATTN_SHADER_DIR=.device/var/$v; fi
  timeout 100 $B/decode $D --kv 32768,130048,131072 --json $R/decode_${v}_$round.json > $R/decode_${v}_$round.txt 2>&1; grep -E "^\| [0-9]|rror|panic" $R/decode_${v}_$round.txt | cut -d'|' -f2,3,4,6,7,8 | paste -sd';'
done; done
unset WGPU_FLASH_ATTN_SHADER_DIR
echo "== torch $(el)"
timeout 90 python3 .device/py/torch_decode.py --batch 8 --heads 32 --heads-kv 8 --dim 128 --kv 32768,130048,131072 --json $R/torch_decode.json > $R/torch_decode.txt 2>&1; tail -5 $R/torch_decode.txt
kill $CLK
for v in rot roth; do echo "== test kvcache ($v) $(el)"
  WGPU_FLASH_ATTN_SHADER_DIR=.device/var/$v timeout 60 $B/kvcache --test-threads=16 > $R/test-kvcache-$v.txt 2>&1; echo "rc=$?"; grep -E "test result|panicked|FAILED|failed" $R/test-kvcache-$v.txt | head -8
done
echo "== test tiers (whole) $(el)"
timeout $(( 560 - ($(date +%s) - T0) )) $B/tiers --test-threads=16 > $R/test-tiers.txt 2>&1; echo "rc=$?"; grep -E "^test |test result|panicked|FAILED|failed|SKIP" $R/test-tiers.txt | head -30
echo "== done $(el)"
tar czf $OUT/results.tgz -C $R . && rm -r $R
