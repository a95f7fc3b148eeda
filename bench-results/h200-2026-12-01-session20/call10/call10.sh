# Session 20, call 10: do the slow series follow new allocations? Main's kernel; each process
# writes KV 32k, 128k, 32k, 128k from the host, either into new buffers per length (as in every
# call so far; the previous length's are dropped) or, with --reuse-caches, into one pair of buffers
# allocated once at the 128k size. Two processes of each, alternating; after each write contiguous
# twice, then paged; every run in the JSON.
source .device/gpu/prelude.sh; export WGPU_BACKEND=vulkan
tar xzf .device/bin.tgz -C .device
R=$OUT/r; mkdir -p $R; B=.device/bin
T0=$(date +%s); el() { echo "[$(( $(date +%s) - T0 )) s]"; }
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | tee $R/gpu.txt
nvidia-smi --query-gpu=timestamp,clocks.sm,clocks.mem,power.draw,temperature.gpu --format=csv -lms 100 > $R/clocks.csv 2>&1 &
CLK=$!
D="--batch 8 --heads 32 --heads-kv 8 --dim 128 --dtype f16 --seq-q 1 --warmup-ms 200 --page-size 16 --runs 40 --check-rows 2 --layouts contiguous,contiguous,paged --kv 32768,131072,32768,131072"
show() { grep -E "^\| [0-9]|rror|panic" $1 | cut -d'|' -f2,3,6 | paste -sd';'; }
for round in 1 2; do
  for m in new reuse; do echo "== $m round $round $(el)"
    X=""; [ $m = reuse ] && X="--reuse-caches"
    timeout 200 $B/decode $D $X --json $R/decode_${m}_$round.json > $R/decode_${m}_$round.txt 2>&1; show $R/decode_${m}_$round.txt
  done
done
kill $CLK
echo "== slow runs per configuration (above 1.5x the lowest median of the length's series in that process), per write"
python3 - $R <<'PY'
import json, sys, statistics
for n in (1, 2):
    for m in ("new", "reuse"):
        rows = json.load(open(f"{sys.argv[1]}/decode_{m}_{n}.json"))["rows"]
        ref = {kv: min(statistics.median(r["ms_runs"]) for r in rows if r["kv_len"] == kv) for kv in (32768, 131072)}
        groups = [rows[i:i + 3] for i in range(0, len(rows), 3)]
        print(f"{m} {n} |", " | ".join(f"{g[0]['kv_len']}: " + " ".join(f"{sum(x > 1.5 * ref[r['kv_len']] for x in r['ms_runs'])}" for r in g) for g in groups))
PY
echo "== done $(el)"
tar czf $OUT/results.tgz -C $R . && rm -r $R
