# Session 18, call 4: the order in which each split visits its tiles (the KV-cache kernel of
# main, `base`: tiles split, split + splits, ... in order; `spread`: the same tiles, from the
# split's own fraction of the keys on; `scramble`: from there with a stride of 7919 tiles modulo
# their count), contiguous and paged, two rounds alternating, registers of each, PyTorch beside;
# then main with the layouts in the other order and repeated (does the first layout after a
# cache upload time slower?), every run kept in the JSON (`ms_runs`); the kvcache tests on the
# variants.
source .device/gpu/prelude.sh; export WGPU_BACKEND=vulkan
tar xzf .device/bin.tgz -C .device
R=$OUT/r; mkdir -p $R; B=.device/bin
T0=$(date +%s); el() { echo "[$(( $(date +%s) - T0 )) s]"; }
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | tee $R/gpu.txt
nvidia-smi --query-gpu=timestamp,clocks.sm,clocks.mem,power.draw,temperature.gpu --format=csv -lms 100 > $R/clocks.csv 2>&1 &
CLK=$!
setv() { if [ $1 = base ]; then unset WGPU_FLASH_ATTN_SHADER_DIR; else export WGPU_FLASH_ATTN_SHADER_DIR=.device/var/$1; fi; }
for v in base spread scramble; do setv $v
  timeout 60 $B/kernel_stats --dims 128 --dtypes f16 --kernels portable --decode --decode-kv 131072 > $R/stats_$v.txt 2>&1
  echo "stats $v: $(grep -iE "decode|register count" $R/stats_$v.txt | tr -s ' ' | paste -sd';' | cut -c1-300)"
done
D0="--batch 8 --heads 32 --heads-kv 8 --dim 128 --dtype f16 --seq-q 1 --warmup-ms 200 --check-rows 2 --page-size 16"
for round in 1 2; do
for v in base spread scramble; do echo "== decode $v round $round $(el)"; setv $v
  timeout 100 $B/decode $D0 --runs 30 --layouts contiguous,paged --kv 32768,131072 --json $R/decode_${v}_$round.json > $R/decode_${v}_$round.txt 2>&1; grep -E "^\| [0-9]|rror|panic" $R/decode_${v}_$round.txt | cut -d'|' -f2,3,4,6,7,8 | paste -sd';'
done; done
unset WGPU_FLASH_ATTN_SHADER_DIR
echo "== torch $(el)"
timeout 90 python3 .device/py/torch_decode.py --batch 8 --heads 32 --heads-kv 8 --dim 128 --kv 32768,131072 --json $R/torch_decode.json > $R/torch_decode.txt 2>&1; tail -4 $R/torch_decode.txt
echo "== decode base, layouts reordered $(el)"
timeout 120 $B/decode $D0 --runs 60 --layouts paged,contiguous,paged,contiguous --kv 131072 --json $R/decode_order.json > $R/decode_order.txt 2>&1; grep -E "^\| [0-9]|rror|panic" $R/decode_order.txt | cut -d'|' -f2,3,4,6,7,8 | paste -sd';'
kill $CLK
for v in spread scramble; do echo "== test kvcache ($v) $(el)"; setv $v
  timeout 60 $B/kvcache --test-threads=16 > $R/test-kvcache-$v.txt 2>&1; echo "rc=$?"; grep -E "test result|panicked|FAILED|failed" $R/test-kvcache-$v.txt | head -8
done
echo "== done $(el)"
tar czf $OUT/results.tgz -C $R . && rm -r $R
