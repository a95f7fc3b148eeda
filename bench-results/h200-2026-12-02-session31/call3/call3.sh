# Thirty-first round, call 3: call 2's last step again, fixed. The machine code of the kernel
# PyTorch's mem-efficient backend runs for f32 on this card (call 2's profiler named it), for
# sm_90, read with the cuobjdump of Triton's wheel: does it hold tensor-core instructions (HMMA)
# or only FFMA? Call 2 gave each of the three matching symbols the same output file, and the last
# (not a kernel) overwrote the others.
R=$OUT/r; mkdir -p $R
TL=$(python3 -c "import torch, os; print(os.path.join(os.path.dirname(torch.__file__), 'lib', 'libtorch_cuda.so'))")
BIN=$(python3 -c "import triton, os; print(os.path.join(os.path.dirname(triton.__file__), 'backends', 'nvidia', 'bin'))")
K=_Z40fmha_cutlassF_f32_aligned_64x128_rf_sm80N22PyTorchMemEffAttention15AttentionKernelIfN7cutlass4arch4Sm80ELb1ELi64ELi128ELi128ELb1ELb1EE6ParamsE
timeout 300 $BIN/cuobjdump -sass -arch sm_90 -fun $K $TL > $R/sass_raw.txt 2>&1
echo "rc=$? lines=$(wc -l < $R/sass_raw.txt)"
# Keep only the function's own listing (the other ELFs print a not-found warning each).
awk '/Function : /{on=1} on' $R/sass_raw.txt > $R/sass_memeff_f32_sm90.txt
echo "function listings: $(grep -c 'Function : ' $R/sass_memeff_f32_sm90.txt)"
for op in HMMA FFMA FMUL LDSM MUFU.EX2; do echo "$op $(grep -cE "\b$op[ .]" $R/sass_memeff_f32_sm90.txt)"; done
grep -m3 -E "HMMA" $R/sass_memeff_f32_sm90.txt
rm $R/sass_raw.txt; gzip $R/sass_memeff_f32_sm90.txt
tar czf $OUT/results.tgz -C $R . && rm -r $R
