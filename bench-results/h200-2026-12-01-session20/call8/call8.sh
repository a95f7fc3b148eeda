# Session 20, call 8: do the slow series follow the upload path? Main's kernel; the caches either
# uploaded from the host through Queue::write_buffer (`--fill host`, as in every call so far) or
# written by a compute pass on the GPU (`--fill gpu`, the same values, no staging copy). Six
# processes alternating the two, each uploading KV 32k then 128k; after each upload contiguous
# twice, then paged; every run in the JSON.
source .device/gpu/prelude.sh; export WGPU_BACKEND=vulkan
tar xzf .device/bin.tgz -C .device
R=$OUT/r; mkdir -p $R; B=.device/bin
T0=$(date +%s); el() { echo "[$(( $(date +%s) - T0 )) s]"; }
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | tee $R/gpu.txt
nvidia-smi --query-gpu=timestamp,clocks.sm,clocks.mem,power.draw,temperature.gpu --format=csv -lms 100 > $R/clocks.csv 2>&1 &
CLK=$!
D="--batch 8 --heads 32 --heads-kv 8 --dim 128 --dtype f16 --seq-q 1 --warmup-ms 200 --page-size 16 --runs 40 --check-rows 2"
show() { grep -E "^\| [0-9]|rror|panic" $1 | cut -d'|' -f2,3,6,7,9 | paste -sd';'; }
for round in 1 2 3; do
  for f in host gpu; do echo "== fill $f round $round $(el)"
    timeout 150 $B/decode $D --fill $f --layouts contiguous,contiguous,paged --kv 32768,131072 --json $R/decode_${f}_$round.json > $R/decode_${f}_$round.txt 2>&1; show $R/decode_${f}_$round.txt
  done
done
kill $CLK
echo "== slow runs per configuration (above 1.5x the lowest median of the length's three series)"
python3 - $R <<'PY'
import json, sys, glob, os, statistics
for f in sorted(glob.glob(sys.argv[1] + "/decode_*.json"), key=lambda p: (p[-6], "gpu" in p)):
    rows = json.load(open(f))["rows"]
    out = []
    for kv in (32768, 131072):
        rs = [r for r in rows if r["kv_len"] == kv]
        ref = min(statistics.median(r["ms_runs"]) for r in rs)
        out.append(f"{kv}: " + " ".join(f"{sum(x > 1.5 * ref for x in r['ms_runs'])}/{len(r['ms_runs'])}" for r in rs))
    print(os.path.basename(f), "|", " | ".join(out))
PY
echo "== done $(el)"
tar czf $OUT/results.tgz -C $R . && rm -r $R
