# Session 19, call 10: call 9 with contiguous-padded first after each upload (in call 9 the
# slow series hit the first configuration after an upload, always contiguous there): is it the
# layout or the place after the upload? Main's kernel; contiguous-padded (entries of kv + 40
# tokens), contiguous and paged, cycled after each cache upload: KV 128k twice, 32k once.
source .device/gpu/prelude.sh; export WGPU_BACKEND=vulkan
tar xzf .device/bin.tgz -C .device
R=$OUT/r; mkdir -p $R; B=.device/bin
T0=$(date +%s); el() { echo "[$(( $(date +%s) - T0 )) s]"; }
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | tee $R/gpu.txt
nvidia-smi --query-gpu=timestamp,clocks.sm,clocks.mem,power.draw,temperature.gpu --format=csv -lms 100 > $R/clocks.csv 2>&1 &
CLK=$!
D="--batch 8 --heads 32 --heads-kv 8 --dim 128 --dtype f16 --seq-q 1 --warmup-ms 200 --page-size 16 --runs 30 --check-rows 1 --pad-tokens 40"
L="contiguous-padded,contiguous,paged,contiguous-padded,contiguous,paged,contiguous-padded,contiguous,paged,contiguous-padded,contiguous,paged"
show() { grep -E "^\| [0-9]|rror|panic" $1 | cut -d'|' -f3,6 | paste -sd';'; }
for run in 128k_1 32k 128k_2; do echo "== $run $(el)"
  kv=131072; [ $run = 32k ] && kv=32768
  timeout 150 $B/decode $D --layouts $L --kv $kv --json $R/pad_$run.json > $R/pad_$run.txt 2>&1; show $R/pad_$run.txt
done
kill $CLK
echo "== done $(el)"
tar czf $OUT/results.tgz -C $R . && rm -r $R
