# Session 8, call 1: the KV-cache kernel with one K/V register set (_sb) and that plus Q as stored
# (_sq) against main (_m): registers, then decode at the plan's splits and over split counts, with
# PyTorch in the same call. Builds: main at cc1e8c0, the others with experiments/*.diff applied.
source .device/gpu/prelude.sh; export WGPU_BACKEND=vulkan
tar xzf .device/bin.tgz -C .device
R=$OUT/r; mkdir -p $R; B=.device/bin
T0=$(date +%s); el() { echo "[$(( $(date +%s) - T0 )) s]"; }
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | tee $R/gpu.txt
for v in _m _sb _sq; do timeout 60 $B/kernel_stats$v --dims 128 --dtypes f16 --kernels subgroup --decode --decode-tiles plan,sg:64/16/2,sg:64/16/8,sg:128/16/4 > $R/stats$v.txt 2>&1; echo "== stats$v"; grep -E "decode|Register" $R/stats$v.txt | head -12; done
D="--batch 8 --heads 32 --heads-kv 8 --dim 128 --dtype f16 --seq-q 1 --runs 20 --warmup-ms 150 --check-rows 1"
for round in 1 2; do for v in _m _sb _sq; do echo "== decode$v round $round $(el)"
timeout 60 $B/decode$v $D --layouts contiguous,paged --page-size 16 --kv 32768,131072 --json $R/decode${v}_r$round.json > $R/decode${v}_r$round.txt 2>&1
grep -E "^\| [0-9]|rror|panic" $R/decode${v}_r$round.txt; done; done
for v in _sb _sq _m; do echo "== decode$v splits $(el)"
timeout 120 $B/decode$v $D --layouts contiguous --kv 32768 --splits 12,16,20,24 --tiles plan,sg:64/16/8 --json $R/splits32k$v.json > $R/splits32k$v.txt 2>&1
timeout 120 $B/decode$v $D --layouts contiguous --kv 131072 --splits 24,33,40,48 --tiles plan,sg:64/16/8 --json $R/splits128k$v.json > $R/splits128k$v.txt 2>&1
grep -hE "^\| [0-9]|rror|panic" $R/splits32k$v.txt $R/splits128k$v.txt; done
echo "== torch $(el)"; timeout 120 python3 .device/py/torch_decode.py --batch 8 --heads 32 --heads-kv 8 --dim 128 --kv 32768,131072 --json $R/torch_decode.json > $R/torch_decode.txt 2>&1; tail -8 $R/torch_decode.txt
for v in _sb _sq; do echo "== test kvcache$v $(el)"; timeout 100 $B/kvcache$v --test-threads=16 > $R/test-kvcache$v.txt 2>&1; echo "rc=$?"; grep -E "test result|panicked|FAILED" $R/test-kvcache$v.txt | head -5; done
echo "== done $(el)"
tar czf $OUT/results.tgz -C $R . && rm -r $R
