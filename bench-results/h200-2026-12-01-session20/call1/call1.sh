# Session 20, call 1: the KV-cache kernel with two roles (ROLES variant: the workgroup's first
# half scores, the second half accumulates P V one tile behind; each lane holds Q or O, K or V)
# against main's kernel: registers (kernel_stats), then the decode benchmark, builds alternating
# over two rounds, split counts swept for the variant (its workgroups are twice as large, so one
# wave holds fewer of them), PyTorch beside in each round.
source .device/gpu/prelude.sh; export WGPU_BACKEND=vulkan
tar xzf .device/bin.tgz -C .device
R=$OUT/r; mkdir -p $R; B=.device/bin
T0=$(date +%s); el() { echo "[$(( $(date +%s) - T0 )) s]"; }
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | tee $R/gpu.txt
nvidia-smi --query-gpu=timestamp,clocks.sm,clocks.mem,power.draw,temperature.gpu --format=csv -lms 100 > $R/clocks.csv 2>&1 &
CLK=$!
for v in main roles; do
  [ $v = main ] && unset WGPU_FLASH_ATTN_SHADER_DIR || export WGPU_FLASH_ATTN_SHADER_DIR=.device/var/$v
  for kv in 32768 131072; do
    timeout 60 $B/kernel_stats --dims 128 --dtypes f16 --kernels portable --decode --decode-kv $kv > $R/stats_${v}_$kv.txt 2>&1
    echo "== stats $v $kv"; grep -iE "decode|register|spill" $R/stats_${v}_$kv.txt | head -12
  done
done
unset WGPU_FLASH_ATTN_SHADER_DIR
D="--batch 8 --heads 32 --heads-kv 8 --dim 128 --dtype f16 --seq-q 1 --warmup-ms 200 --page-size 16 --runs 40 --check-rows 2"
show() { grep -E "^\| [0-9]|rror|panic" $1 | cut -d'|' -f2,3,4,6,7,9 | paste -sd';'; }
for round in 1 2; do
  for v in main roles; do echo "== decode $v round $round $(el)"
    S=""; [ $v = roles ] && S="--splits 0,8,10,12,14"
    [ $v = main ] && unset WGPU_FLASH_ATTN_SHADER_DIR || export WGPU_FLASH_ATTN_SHADER_DIR=.device/var/$v
    timeout 150 $B/decode $D $S --layouts contiguous,contiguous,paged --kv 32768,131072 --json $R/decode_${v}_$round.json > $R/decode_${v}_$round.txt 2>&1; show $R/decode_${v}_$round.txt
  done
  unset WGPU_FLASH_ATTN_SHADER_DIR
  echo "== torch round $round $(el)"
  timeout 90 python3 .device/py/torch_decode.py --batch 8 --heads 32 --heads-kv 8 --dim 128 --kv 32768,131072 --json $R/torch_decode_$round.json > $R/torch_decode_$round.txt 2>&1; tail -4 $R/torch_decode_$round.txt
done
kill $CLK
echo "== done $(el)"
tar czf $OUT/results.tgz -C $R . && rm -r $R
