source .device/gpu/prelude.sh; export WGPU_BACKEND=vulkan
tar xzf .device/bin.tgz -C .device
R=$OUT/r; mkdir -p $R; B=.device/bin
T0=$(date +%s); el() { echo "[$(( $(date +%s) - T0 )) s]"; }
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | tee $R/gpu.txt
echo "== bandwidth $(el)"
timeout 200 $B/bandwidth --mib 1024 --patterns flat,heads --loads 1,2,4,8 --workgroup 64,256 --per-cu 1,2,6,16 --runs 10 --warmup-ms 100 --json $R/bandwidth.json > $R/bandwidth.txt 2>&1
cat $R/bandwidth.txt
echo "== bandwidth again $(el)"
timeout 100 $B/bandwidth --mib 1024 --patterns heads --loads 1,2,4,8 --workgroup 64,256 --per-cu 6,16 --runs 10 --warmup-ms 100 --json $R/bandwidth_again.json > $R/bandwidth_again.txt 2>&1
cat $R/bandwidth_again.txt
echo "== done $(el)"
tar czf $OUT/results.tgz -C $R . && rm -r $R
