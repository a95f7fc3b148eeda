# Session 10, call 1: _f (the subgroup KV-cache kernel merges its own splits: the last workgroup
# of each work item and KV head to finish reads the others' tagged partial states, no combine
# pass) against _m (main at 38b7573, combine pass). Registers at the plan's tiles; the kvcache
# suite on _f (with the new consecutive-steps test); two rounds of the decode goal shape beside
# PyTorch; a split sweep at 32k; plain multi-head decode and d = 64 / 256.
source .device/gpu/prelude.sh; export WGPU_BACKEND=vulkan
tar xzf .device/bin.tgz -C .device
R=$OUT/r; mkdir -p $R; B=.device/bin
T0=$(date +%s); el() { echo "[$(( $(date +%s) - T0 )) s]"; }
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | tee $R/gpu.txt
nvidia-smi --query-gpu=timestamp,clocks.sm,clocks.mem,power.draw,temperature.gpu --format=csv -lms 250 > $R/clocks.csv 2>&1 &
CLK=$!
for v in _m _f; do for h in 8 32; do timeout 60 $B/kernel_stats$v --dims 128 --dtypes f16 --kernels subgroup --decode --decode-heads-kv $h > $R/stats${v}_kv$h.txt 2>&1; echo "== stats$v heads_kv $h"; grep -E "^== |Register" $R/stats${v}_kv$h.txt | paste - - | cut -c1-150; done; done
echo "== test kvcache_f $(el)"; timeout 150 $B/kvcache_f --test-threads=16 > $R/test-kvcache_f.txt 2>&1; echo "rc=$?"; grep -E "test result|panicked|FAILED" $R/test-kvcache_f.txt | head -5
echo "== torch decode $(el)"; timeout 120 python3 .device/py/torch_decode.py --batch 8 --heads 32 --heads-kv 8 --dim 128 --kv 32768,131072 --json $R/torch_decode.json > $R/torch_decode.txt 2>&1; tail -4 $R/torch_decode.txt
D="--batch 8 --heads 32 --heads-kv 8 --dim 128 --dtype f16 --seq-q 1 --runs 30 --warmup-ms 200 --check-rows 2"
for round in 1 2; do for v in _m _f; do echo "== decode$v round $round $(el)"
timeout 90 $B/decode$v $D --layouts contiguous,paged --page-size 16 --kv 32768,131072 --json $R/decode${v}_r$round.json > $R/decode${v}_r$round.txt 2>&1
grep -E "^\| [0-9]|rror|panic" $R/decode${v}_r$round.txt | cut -c1-120; done; done
echo "== splits _f $(el)"
timeout 120 $B/decode_f $D --layouts contiguous --kv 32768 --splits 12,16,20,24,32 --json $R/splits32k_f.json > $R/splits32k_f.txt 2>&1
grep -E "^\| [0-9]|rror|panic" $R/splits32k_f.txt | cut -c1-120
echo "== torch decode again $(el)"; timeout 120 python3 .device/py/torch_decode.py --batch 8 --heads 32 --heads-kv 8 --dim 128 --kv 32768,131072 --json $R/torch_decode2.json > $R/torch_decode2.txt 2>&1; tail -4 $R/torch_decode2.txt
for v in _m _f; do echo "== mha and d=64/256 $v $(el)"
timeout 60 $B/decode$v --batch 4 --heads 32 --heads-kv 32 --dim 128 --dtype f16 --seq-q 1 --runs 30 --warmup-ms 200 --check-rows 2 --layouts contiguous --kv 32768 --json $R/mha$v.json > $R/mha$v.txt 2>&1
grep -E "^\| [0-9]|rror|panic" $R/mha$v.txt | cut -c1-120
for d in 64 256; do timeout 60 $B/decode$v --batch 8 --heads 32 --heads-kv 8 --dim $d --dtype f16 --seq-q 1 --runs 30 --warmup-ms 200 --check-rows 2 --layouts contiguous --kv 32768 --json $R/d$d$v.json > $R/d$d$v.txt 2>&1
grep -E "^\| [0-9]|rror|panic" $R/d$d$v.txt | cut -c1-120; done; done
kill $CLK
echo "== done $(el)"
tar czf $OUT/results.tgz -C $R . && rm -r $R
