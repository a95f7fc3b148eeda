# How call 3's diagnostic shader files were made from call 2's vP (pipelined-two-kv.diff applied
# to the tree at 0976374); line numbers are of that file. Each computes wrong output on purpose.
F=flash_fwd_coop.wgsl   # vP
sed '786s/let at = kv_off + (BN + nb \* 16u) \* RS + f \* 16u;/let at = kv_off + BN * RS + f * 16u;/' $F > D1/$F   # one V fragment per 16 columns of O
sed '634s/let at = next_kv + nb \* 16u \* RS + kd \* 16u;/let at = next_kv + nb * 16u * RS;/' $F > D2/$F      # one K fragment per key block (pipelined Q K^T: inactive at d >= 64)
sed '634s/let at = next_kv + nb \* 16u \* RS + kd \* 16u;/let at = next_kv + nb * 16u * RS;/' D1/$F > D12/$F
sed '668s/let pe = exp2(fma(/let pe = (fma(/' $F > D3/$F                                                    # no exp2
sed '518s/            workgroupBarrier();/            \/\/ no barrier (timing only)/' $F > D4/$F                 # TWO_KV barrier: inactive at d >= 64
