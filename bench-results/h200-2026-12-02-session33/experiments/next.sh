# Prepared in the thirty-third round as its call 6, not run (the device time was spent). Binary:
# .device/bin/attention_xp, built as described below (cargo bench --bench attention --no-run on
# cef3a39 or later with xp.diff (beside this file) applied: git apply, build, git checkout).
# At d = 256 the driver's register allocation decides the speed
# (call 5: the banded code alone, +8%). The other code forms the plan picks by head dim, screened
# again at d = 256 on top of it, one round each, between two rounds of the plan's own form:
# `attention_xp` is cef3a39's benchmark with plan.rs reading (at d = 256 only) XP_RA (rescale O
# every tile), XP_NOTREE (no tree form, no stepped loads), XP_LF (loads through load_tile), XP_KF
# and XP_WR (the K-rows-first and wrapped staging texts). f16, and f32 / bf16 with f16 products,
# N = 8k, both masks. Then PyTorch's FlashAttention-2 and cuDNN at d = 256, f16, in the same call.
source .device/gpu/prelude.sh; export WGPU_BACKEND=vulkan
R=$OUT; B=.device/bin  # files straight into $OUT, so that a run cut short keeps what it made
T0=$(date +%s); el() { echo "[$(( $(date +%s) - T0 )) s]"; }
show() { echo "$2 $(grep -E "^\| NVIDIA|rror|panic" $1 | cut -d"|" -f8,9,13,19 | tr -s ' ' | paste -sd';')"; }
A="--tokens 16384 --kernels coop-matrix --baseline off --runs 8 --warmup 3 --warmup-ms 300 --check-rows 4 --causal both --seqs 8192 --dims 256 --f16-products --dtypes f16,f32,bf16"
for v in plan XP_RA XP_NOTREE XP_LF XP_KF XP_WR plan2; do
  case $v in plan|plan2) env -u XP_RA timeout 100 $B/attention_xp $A --json $R/$v.json > $R/$v.txt 2>&1 ;;
    *) env $v=1 timeout 100 $B/attention_xp $A --json $R/$v.json > $R/$v.txt 2>&1 ;; esac
  show $R/$v.txt "$v $(el)"
done
timeout 120 python3 benches/torch_sdpa.py --seqs 8192 --dims 256 --dtypes f16 --backends flash,cudnn --json $R/torch.json > $R/torch.txt 2>&1
echo "torch rc=$? $(el)"; tail -4 $R/torch.txt
echo "== done $(el)"
