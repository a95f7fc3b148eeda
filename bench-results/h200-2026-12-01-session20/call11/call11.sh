# Session 20, call 11: does a large host-to-GPU transfer alone slow the steps after it? Main's
# kernel, KV 32k five times in a row in one pair of caches written once (--reuse-caches
# --keep-caches), either with nothing else written (`keep`) or with 4 GiB written from the host
# into a buffer of its own before each length's configurations (`scratch`). Two processes of
# each, alternating; contiguous twice, then paged, per length; every run in the JSON.
source .device/gpu/prelude.sh; export WGPU_BACKEND=vulkan
tar xzf .device/bin.tgz -C .device
R=$OUT/r; mkdir -p $R; B=.device/bin
T0=$(date +%s); el() { echo "[$(( $(date +%s) - T0 )) s]"; }
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | tee $R/gpu.txt
nvidia-smi --query-gpu=timestamp,clocks.sm,clocks.mem,power.draw,temperature.gpu --format=csv -lms 100 > $R/clocks.csv 2>&1 &
CLK=$!
D="--batch 8 --heads 32 --heads-kv 8 --dim 128 --dtype f16 --seq-q 1 --warmup-ms 200 --page-size 16 --runs 40 --check-rows 2 --layouts contiguous,contiguous,paged --kv 32768,32768,32768,32768,32768 --reuse-caches --keep-caches"
show() { grep -E "^\| [0-9]|rror|panic" $1 | cut -d'|' -f3,6 | paste -sd';'; }
for round in 1 2; do
  for m in keep scratch; do echo "== $m round $round $(el)"
    X=""; [ $m = scratch ] && X="--scratch-write-mib 4096"
    timeout 200 $B/decode $D $X --json $R/decode_${m}_$round.json > $R/decode_${m}_$round.txt 2>&1; show $R/decode_${m}_$round.txt
  done
done
kill $CLK
echo "== slow runs per configuration (above 1.5x the lowest median in that process), per length"
python3 - $R <<'PY'
import json, sys, statistics
for n in (1, 2):
    for m in ("keep", "scratch"):
        rows = json.load(open(f"{sys.argv[1]}/decode_{m}_{n}.json"))["rows"]
        ref = min(statistics.median(r["ms_runs"]) for r in rows)
        groups = [rows[i:i + 3] for i in range(0, len(rows), 3)]
        print(f"{m} {n} |", " | ".join(" ".join(str(sum(x > 1.5 * ref for x in r["ms_runs"])) for r in g) for g in groups))
PY
echo "== done $(el)"
tar czf $OUT/results.tgz -C $R . && rm -r $R
