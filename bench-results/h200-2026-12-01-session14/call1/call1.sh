# Session 14, call 1: the driver's pipeline cache data (its binary container around the machine code)
# of the plan's tensor-core kernels and the decode kernel, to disassemble; a first look with the
# machine's own nvdisasm / cuobjdump at whatever ELF images the containers hold.
source .device/gpu/prelude.sh; export WGPU_BACKEND=vulkan
tar xzf .device/bin.tgz -C .device
R=$OUT/r; mkdir -p $R/cache $R/cache_causal $R/ir; B=.device/bin
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | tee $R/gpu.txt
timeout 120 $B/kernel_stats --kernels coop-matrix --dims 32,64,96,128 --dtypes f16 --decode --cache $R/cache --ir $R/ir > $R/kernel_stats.txt 2>&1; echo "rc=$?"
timeout 60 $B/kernel_stats --kernels coop-matrix --dims 128 --dtypes f16 --causal --cache $R/cache_causal > $R/kernel_stats_causal.txt 2>&1; echo "rc=$?"
grep -E "^== |Register|cache" $R/kernel_stats.txt | head -40; ls -la $R/cache $R/ir | head -30
which nvdisasm cuobjdump; ls /usr/local/cuda*/bin 2>/dev/null | head
python3 - $R/cache <<'PY' > $R/elf_scan.txt 2>&1
import sys, os
d = sys.argv[1]
for f in sorted(os.listdir(d)):
    b = open(os.path.join(d, f), 'rb').read()
    offs = [i for i in range(len(b)) if b.startswith(b'\x7fELF', i)]
    print(f, len(b), 'ELF at', offs[:10], 'head', b[:64].hex())
PY
cat $R/elf_scan.txt
tar czf $OUT/results.tgz -C $R . && rm -r $R
