# Session 8, call 4. (1) Where the tensor-core kernel's time goes: _n is main at 4a63ecf; each
# other build removes one part of flash_fwd_coop.wgsl (experiments/ablation/make_ablation.py:
# nosoftmax = P is S as f16 without mask/max/exp; noqk = no Q K^T products; nopv = no P V;
# noglobal = K/V never read from memory; fewfrag = one K and N16 V fragments read per tile and
# reused for every product). Their outputs are wrong by construction (the check fails); only
# the times mean something. (2) The KV-cache kernel in f32 and the split tuner, on 4a63ecf.
source .device/gpu/prelude.sh; export WGPU_BACKEND=vulkan
tar xzf .device/bin.tgz -C .device
R=$OUT/r; mkdir -p $R; B=.device/bin
T0=$(date +%s); el() { echo "[$(( $(date +%s) - T0 )) s]"; }
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | tee $R/gpu.txt
A="--tokens 16384 --seqs 8192 --dtypes f16 --baseline off --kernels coop-matrix --runs 15 --warmup 5 --warmup-ms 300 --check-rows 1"
for round in 1 2; do for v in _n _nosoftmax _noqk _nopv _noglobal _fewfrag; do echo "== attention$v round $round $(el)"
timeout 40 $B/attention$v $A --dims 128 --causal both --json $R/coop${v}_r$round.json > $R/coop${v}_r$round.txt 2>&1
grep -E "^\| NVIDIA|rror" $R/coop${v}_r$round.txt | cut -d'|' -f5-13; done; done
for v in _n _nosoftmax _noqk _nopv _noglobal _fewfrag; do timeout 60 $B/kernel_stats$v --dims 128 --dtypes f16 --kernels coop-matrix > $R/stats_coop$v.txt 2>&1; echo "$v $(grep Register $R/stats_coop$v.txt)"; done
D="--batch 8 --heads 32 --heads-kv 8 --dim 128 --seq-q 1 --runs 20 --warmup-ms 200 --check-rows 1"
echo "== decode f32 $(el)"; timeout 100 $B/decode_n $D --dtype f32 --layouts contiguous,paged --kv 32768,131072 --json $R/decode_f32.json > $R/decode_f32.txt 2>&1
grep -E "^\| [0-9]|rror|panic" $R/decode_f32.txt
echo "== decode tune $(el)"; timeout 150 $B/decode_n $D --dtype f16 --layouts contiguous,paged --kv 32768,131072 --tune --json $R/tune.json > $R/tune.txt 2>&1
grep -E "^\| [0-9]|trial|rror|panic" $R/tune.txt | head -40
echo "== done $(el)"
tar czf $OUT/results.tgz -C $R . && rm -r $R
