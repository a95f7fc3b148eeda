# Session 8, call 3: _n (the one-register-set KV-cache kernel, 8 keys per lane, as in call 2)
# against _s (experiments/decode-staggered-kv.diff: the next tile's K loads right after this
# tile's scores, V at the top of a tile), three rounds each, PyTorch before and after.
source .device/gpu/prelude.sh; export WGPU_BACKEND=vulkan
tar xzf .device/bin.tgz -C .device
R=$OUT/r; mkdir -p $R; B=.device/bin
T0=$(date +%s); el() { echo "[$(( $(date +%s) - T0 )) s]"; }
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | tee $R/gpu.txt
for v in _n _s; do timeout 60 $B/kernel_stats$v --dims 128 --dtypes f16 --kernels subgroup --decode --decode-tiles plan,sg:64/16/4 > $R/stats$v.txt 2>&1; echo "== stats$v"; grep -E "== decode|Register" $R/stats$v.txt | tail -4; done
echo "== torch 1 $(el)"; timeout 120 python3 .device/py/torch_decode.py --batch 8 --heads 32 --heads-kv 8 --dim 128 --kv 32768,131072 --json $R/torch_decode_1.json > $R/torch_decode_1.txt 2>&1; tail -4 $R/torch_decode_1.txt
D="--batch 8 --heads 32 --heads-kv 8 --dim 128 --dtype f16 --seq-q 1 --runs 30 --warmup-ms 200 --check-rows 1"
for round in 1 2 3; do for v in _n _s; do echo "== decode$v round $round $(el)"
timeout 60 $B/decode$v $D --layouts contiguous,paged --page-size 16 --kv 32768,131072 --json $R/decode${v}_r$round.json > $R/decode${v}_r$round.txt 2>&1
grep -E "^\| [0-9]|rror|panic" $R/decode${v}_r$round.txt; done; done
echo "== decode_s splits $(el)"
timeout 100 $B/decode_s $D --layouts contiguous --kv 32768 --splits 12,16 --tiles plan,sg:64/16/4 --json $R/splits32k_s.json > $R/splits32k_s.txt 2>&1
grep -E "^\| [0-9]|rror|panic" $R/splits32k_s.txt
echo "== torch 2 $(el)"; timeout 120 python3 .device/py/torch_decode.py --batch 8 --heads 32 --heads-kv 8 --dim 128 --kv 32768,131072 --json $R/torch_decode_2.json > $R/torch_decode_2.txt 2>&1; tail -4 $R/torch_decode_2.txt
echo "== test kvcache_s $(el)"; timeout 100 $B/kvcache_s --test-threads=16 > $R/test-kvcache_s.txt 2>&1; echo "rc=$?"; grep -E "test result|panicked|FAILED" $R/test-kvcache_s.txt | head -5
echo "== done $(el)"
tar czf $OUT/results.tgz -C $R . && rm -r $R
