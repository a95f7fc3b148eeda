# Session 20, call 7: (1) the machine code of call 6's arithmetic forms with 8 steps per loop trip
# (unpacked here from call 6's pipeline caches); (2) main's decode benchmark and PyTorch's, two
# rounds, PyTorch keeping every run (--all-runs): does the peer show slow series right after its
# caches are allocated, as ours does after an upload?
source .device/gpu/prelude.sh; export WGPU_BACKEND=vulkan
tar xzf .device/bin.tgz -C .device
R=$OUT/r; mkdir -p $R; B=.device/bin
T0=$(date +%s); el() { echo "[$(( $(date +%s) - T0 )) s]"; }
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | tee $R/gpu.txt
NVD=$(python3 -c "import triton, os; print(os.path.join(os.path.dirname(triton.__file__), 'backends/nvidia/bin/nvdisasm'))")
mkdir -p $R/sass
for f in .device/raw/*.sm90; do n=$(basename $f .sm90); $NVD -b SM90 $f > $R/sass/$n.sass 2>&1
  echo "$n: $(grep -oE '\b(FFMA|FMUL|FADD|HFMA2|HMUL2|HADD2)\b' $R/sass/$n.sass | sort | uniq -c | paste -sd' ')"; done
nvidia-smi --query-gpu=timestamp,clocks.sm,clocks.mem,power.draw,temperature.gpu --format=csv -lms 100 > $R/clocks.csv 2>&1 &
CLK=$!
D="--batch 8 --heads 32 --heads-kv 8 --dim 128 --dtype f16 --seq-q 1 --warmup-ms 200 --page-size 16 --runs 40 --check-rows 2"
show() { grep -E "^\| [0-9]|rror|panic" $1 | cut -d'|' -f2,3,4,6,7,9 | paste -sd';'; }
for round in 1 2; do
  echo "== decode round $round $(el)"
  timeout 150 $B/decode $D --layouts contiguous,contiguous,paged --kv 32768,131072 --json $R/decode_$round.json > $R/decode_$round.txt 2>&1; show $R/decode_$round.txt
  echo "== torch round $round $(el)"
  timeout 120 python3 .device/py/torch_decode.py --batch 8 --heads 32 --heads-kv 8 --dim 128 --kv 32768,131072 --all-runs --json $R/torch_decode_$round.json > $R/torch_decode_$round.txt 2>&1; tail -4 $R/torch_decode_$round.txt
  python3 - $R/torch_decode_$round.json <<'PY'
import json, sys, statistics
for r in json.load(open(sys.argv[1]))["rows"]:
    t = r.get("ms_runs") or []
    if t:
        med = statistics.median(t)
        print(f"  {r['backend']} kv={r['kv_len']}: {len(t)} runs, median {med:.4f}, min {min(t):.4f}, max {max(t):.4f}, above 1.5x median {sum(x > 1.5 * med for x in t)}")
PY
done
kill $CLK
echo "== done $(el)"
tar czf $OUT/results.tgz -C $R . && rm -r $R
