# Session 20, call 9: the final tree's benchmarks. The arithmetic probe in its final form (steps
# counted and checked, the sum in f32) at 8 and 1 steps per loop trip; then main's decode (caches
# uploaded from the host) and PyTorch's (every timed run kept, the median taken as ours), two
# rounds alternating.
source .device/gpu/prelude.sh; export WGPU_BACKEND=vulkan
tar xzf .device/bin.tgz -C .device
R=$OUT/r; mkdir -p $R; B=.device/bin
T0=$(date +%s); el() { echo "[$(( $(date +%s) - T0 )) s]"; }
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | tee $R/gpu.txt
nvidia-smi --query-gpu=timestamp,clocks.sm,clocks.mem,power.draw,temperature.gpu --format=csv -lms 100 > $R/clocks.csv 2>&1 &
CLK=$!
for st in 8 1; do echo "== arith steps $st $(el)"
  timeout 120 $B/arith --forms f32x4,f32x2,f16x4,f16x2 --workgroup 256 --per-cu 32 --iters $((4096 / st)) --steps $st --runs 10 --warmup-ms 300 --json $R/arith_s$st.json > $R/arith_s$st.txt 2>&1; grep -E "^\| f|rror|skipped" $R/arith_s$st.txt | cut -d'|' -f2,3,5,8 | paste -sd';'
done
D="--batch 8 --heads 32 --heads-kv 8 --dim 128 --dtype f16 --seq-q 1 --warmup-ms 200 --page-size 16 --runs 40 --check-rows 2"
show() { grep -E "^\| [0-9]|rror|panic" $1 | cut -d'|' -f2,3,4,6,7,9 | paste -sd';'; }
for round in 1 2; do
  echo "== decode round $round $(el)"
  timeout 150 $B/decode $D --layouts contiguous,contiguous,paged --kv 32768,131072 --json $R/decode_$round.json > $R/decode_$round.txt 2>&1; show $R/decode_$round.txt
  echo "== torch round $round $(el)"
  timeout 120 python3 .device/py/torch_decode.py --batch 8 --heads 32 --heads-kv 8 --dim 128 --kv 32768,131072 --all-runs --json $R/torch_decode_$round.json > $R/torch_decode_$round.txt 2>&1; tail -4 $R/torch_decode_$round.txt
done
kill $CLK
echo "== slow runs per series (above 1.5x the series' median; ours: the lowest median of the length's three)"
python3 - $R <<'PY'
import json, sys, statistics
for n in (1, 2):
    rows = json.load(open(f"{sys.argv[1]}/decode_{n}.json"))["rows"]
    out = []
    for kv in (32768, 131072):
        rs = [r for r in rows if r["kv_len"] == kv]
        ref = min(statistics.median(r["ms_runs"]) for r in rs)
        out.append(f"{kv}: " + " ".join(f"{sum(x > 1.5 * ref for x in r['ms_runs'])}/{len(r['ms_runs'])}" for r in rs))
    print(f"ours {n} |", " | ".join(out))
    for r in json.load(open(f"{sys.argv[1]}/torch_decode_{n}.json"))["rows"]:
        t = r.get("ms_runs") or []
        if t:
            m = statistics.median(t)
            print(f"  torch {n} {r['backend']} kv={r['kv_len']}: {sum(x > 1.5 * m for x in t)}/{len(t)}, median {m:.4f}")
PY
echo "== done $(el)"
tar czf $OUT/results.tgz -C $R . && rm -r $R
