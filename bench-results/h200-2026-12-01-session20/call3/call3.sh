# Session 20, call 3: call 2's arithmetic probe again with the SM clock logged, at two
# occupancies, and the machine code of each form (kernel_stats --wgsl --cache, then
# scripts/nv_sass.py with the nvdisasm of Triton's wheel): which instructions do the forms become?
source .device/gpu/prelude.sh; export WGPU_BACKEND=vulkan
tar xzf .device/bin.tgz -C .device
R=$OUT/r; mkdir -p $R; B=.device/bin
T0=$(date +%s); el() { echo "[$(( $(date +%s) - T0 )) s]"; }
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | tee $R/gpu.txt
nvidia-smi --query-gpu=timestamp,clocks.sm,clocks.mem,power.draw,temperature.gpu,clocks_event_reasons.active --format=csv -lms 50 > $R/clocks.csv 2>&1 &
CLK=$!
F=f32x4,f32x4-fma,f32x2,f32x2-fma,f16x4,f16x4-fma,f16x2,f16x2-fma
for round in 1 2; do
  for pc in 32 8; do echo "== arith per-cu $pc round $round $(el)"
    timeout 120 $B/arith --forms $F --workgroup 256 --per-cu $pc --iters 4096 --runs 10 --warmup-ms 500 --wgsl-dir $R/wgsl --json $R/arith_${pc}_$round.json > $R/arith_${pc}_$round.txt 2>&1; grep -E "^\| f|rror" $R/arith_${pc}_$round.txt | cut -d'|' -f2,3,5 | paste -sd';'
  done
done
kill $CLK
echo "== clocks (MHz: min, median, max of samples above 1000)"
python3 - $R/clocks.csv <<'PY'
import sys, csv
v = sorted(int(r[1].split()[0]) for r in list(csv.reader(open(sys.argv[1])))[1:] if r[1].strip().split()[0].isdigit())
v = [x for x in v if x > 1000]; print(len(v), v[0] if v else '', v[len(v)//2] if v else '', v[-1] if v else '')
PY
W=$(ls $R/wgsl/*.wgsl | sed 's/$/=run/' | paste -sd,)
timeout 120 $B/kernel_stats --dims 128 --dtypes f16 --kernels portable --wgsl $W --cache $R/caches > $R/stats.txt 2>&1
grep -E "^== wgsl|Register" $R/stats.txt | paste -sd' ' | sed 's/== /\n/g'
NVD=$(python3 -c "import triton, os; print(os.path.join(os.path.dirname(triton.__file__), 'backends/nvidia/bin/nvdisasm'))" 2>/dev/null)
echo "nvdisasm: $NVD; zstd: $(which zstd)"
NVDISASM=$NVD timeout 120 python3 scripts/nv_sass.py --sass $R/sass $R/caches/*wgsl*.bin > $R/sass.txt 2>&1; tail -12 $R/sass.txt
for f in $R/sass/*; do echo "$(basename $f): $(grep -oE '\b(FFMA|FMUL|FADD|HFMA2|HMUL2|HADD2|HFMA2\.MMA|FFMA2)\b[.A-Z0-9]*' $f | sort | uniq -c | paste -sd' ')"; done
echo "== done $(el)"
tar czf $OUT/results.tgz -C $R . && rm -r $R
