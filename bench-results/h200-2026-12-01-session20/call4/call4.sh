# Session 20, call 4: disassemble call 3's machine code of the arithmetic probe's forms (unpacked
# from call 3's pipeline caches here, where zstd is; nvdisasm from Triton's wheel there).
R=$OUT/r; mkdir -p $R
NVD=$(python3 -c "import triton, os; print(os.path.join(os.path.dirname(triton.__file__), 'backends/nvidia/bin/nvdisasm'))")
for f in .device/raw/*.sm90; do n=$(basename $f .sm90); $NVD -b SM90 $f > $R/$n.sass 2>&1; done
for n in f32x4 f32x4-fma f16x4 f16x2; do echo "== $n"; grep -E "^\s+/\*[0-9a-f]+\*/" $R/$n.sass | sed 's/ *\/\* 0x[0-9a-f]* \*\///' | head -90; done
tar czf $OUT/results.tgz -C $R . && rm -r $R
