# Session 20, call 2: the multiply-add rate through wgpu (benches/arith.rs) in f32 and f16, as
# vec4 and vec2, written as a multiply and an add or as fma(): does any f16 form issue two f16
# multiply-adds per lane and instruction (twice the f32 rate)? Two workgroup sizes, two rounds.
source .device/gpu/prelude.sh; export WGPU_BACKEND=vulkan
tar xzf .device/bin.tgz -C .device
R=$OUT/r; mkdir -p $R; B=.device/bin
T0=$(date +%s); el() { echo "[$(( $(date +%s) - T0 )) s]"; }
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | tee $R/gpu.txt
F=f32x4,f32x4-fma,f32x2,f16x4,f16x4-fma,f16x2,f16x2-fma
for round in 1 2; do
  for wg in 256 128; do echo "== arith wg $wg round $round $(el)"
    timeout 120 $B/arith --forms $F --workgroup $wg --per-cu $((4096 / wg * 2)) --iters 4096 --runs 10 --json $R/arith_${wg}_$round.json > $R/arith_${wg}_$round.txt 2>&1; grep -E "^\| f|rror" $R/arith_${wg}_$round.txt | cut -d'|' -f2,3,5,6,7 | paste -sd';'
  done
done
echo "== done $(el)"
tar czf $OUT/results.tgz -C $R . && rm -r $R
