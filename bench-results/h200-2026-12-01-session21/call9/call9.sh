# Session 21, call 9: the portable KV-cache kernel (flash_decode.wgsl, forced with --tiles
# portable) with its scores as chains of fma (the tree) against its previous text (portold: the
# file before the change, through WGPU_FLASH_ATTN_SHADER_DIR), KV 32k and 128k contiguous (the
# first configuration uncounted), caches written by a compute pass, three rounds alternating.
source .device/gpu/prelude.sh; export WGPU_BACKEND=vulkan
tar xzf .device/bin.tgz -C .device
R=$OUT/r; mkdir -p $R; B=.device/bin
T0=$(date +%s); el() { echo "[$(( $(date +%s) - T0 )) s]"; }
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | tee $R/gpu.txt
use() { [ $1 = new ] && unset WGPU_FLASH_ATTN_SHADER_DIR || export WGPU_FLASH_ATTN_SHADER_DIR=.device/var/$1; }
D="--batch 8 --heads 32 --heads-kv 8 --dim 128 --dtype f16 --seq-q 1 --warmup-ms 200 --runs 30 --check-rows 2 --fill gpu --tiles portable"
show() { grep -E "^\| [0-9]|rror|panic" $1 | cut -d'|' -f2,3,4,5,6,7,9 | paste -sd';'; }
for round in 1 2 3; do
  for v in new portold; do use $v
    timeout 100 $B/decode $D --layouts contiguous,contiguous --kv 32768,131072 --json $R/decode_${v}_$round.json > $R/decode_${v}_$round.txt 2>&1
    echo "== $v $round $(el): $(show $R/decode_${v}_$round.txt)"
  done
done
echo "== done $(el)"
tar czf $OUT/results.tgz -C $R . && rm -r $R
