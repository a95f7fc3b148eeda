# Session 13, call 2: scores through workgroup memory (--coop-elements off) with the committed
# kernel (attention = 2bdcb0d), the inline load site (attention_inl, fast path with scores in
# registers only) and the inline site with its fast path on for both ways (attention_all), at every
# head dim; tile sweeps at d = 64 and 96 with the inline site; d = 96 with the inline site but
# no fast path there (attention_no96).
source .device/gpu/prelude.sh; export WGPU_BACKEND=vulkan
tar xzf .device/bin.tgz -C .device
R=$OUT/r; mkdir -p $R; B=.device/bin
T0=$(date +%s); el() { echo "[$(( $(date +%s) - T0 )) s]"; }
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | tee $R/gpu.txt
nvidia-smi --query-gpu=timestamp,clocks.sm,clocks.mem,power.draw,temperature.gpu --format=csv -lms 250 > $R/clocks.csv 2>&1 &
CLK=$!
A="--tokens 16384 --seqs 8192 --dtypes f16 --baseline off --kernels coop-matrix --runs 20 --warmup 5 --warmup-ms 300 --check-rows 8 --causal both"
for v in "" _inl _all; do echo "== attention$v off $(el)"
timeout 110 $B/attention$v $A --dims 32,64,96,128,160,192,256 --coop-elements off --json $R/off$v.json > $R/off$v.txt 2>&1
grep -E "^\| NVIDIA|rror|panic|registers:" $R/off$v.txt | cut -d'|' -f6-15; done
echo "== sweep d=64 $(el)"
timeout 80 $B/attention_all $A --dims 64 --tiles 128x32x32x8,128x64x32x8,128x128x32x8 --json $R/sweep64.json > $R/sweep64.txt 2>&1
grep -E "^\| NVIDIA|rror|panic" $R/sweep64.txt | cut -d'|' -f6-15
echo "== sweep d=96 $(el)"
timeout 80 $B/attention_all $A --dims 96 --tiles 128x16x32x8,128x32x32x8,128x64x32x8 --json $R/sweep96.json > $R/sweep96.txt 2>&1
grep -E "^\| NVIDIA|rror|panic" $R/sweep96.txt | cut -d'|' -f6-15
for v in _no96 _all ""; do echo "== d=96 attention$v $(el)"
timeout 60 $B/attention$v $A --dims 96 --tiles 128x32x32x8,128x64x32x8 --json $R/d96$v.json > $R/d96$v.txt 2>&1
grep -E "^\| NVIDIA|rror|panic" $R/d96$v.txt | cut -d'|' -f6-15; done
kill $CLK
echo "== done $(el)"
tar czf $OUT/results.tgz -C $R . && rm -r $R
