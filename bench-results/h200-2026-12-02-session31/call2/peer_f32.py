# Which kernel PyTorch SDPA's mem-efficient backend runs for f32 on this card (its name, from the
# profiler), whether TF32 is allowed for matmuls, and its speed at d = 128, N = 8k.
import torch
import torch.nn.functional as F
from torch.nn.attention import SDPBackend, sdpa_kernel
import triton.testing

print("torch", torch.__version__, "capability", torch.cuda.get_device_capability())
print("allow_tf32 matmul", torch.backends.cuda.matmul.allow_tf32, "cudnn", torch.backends.cudnn.allow_tf32)
q, k, v = (torch.randn(2, 16, 8192, 128, device="cuda", dtype=torch.float32) for _ in range(3))
for causal in (False, True):
    with sdpa_kernel([SDPBackend.EFFICIENT_ATTENTION]):
        run = lambda: F.scaled_dot_product_attention(q, k, v, is_causal=causal)
        run()
        torch.cuda.synchronize()
        with torch.profiler.profile(activities=[torch.profiler.ProfilerActivity.CUDA]) as prof:
            run()
            torch.cuda.synchronize()
        names = sorted({e.name for e in prof.events() if e.device_type == torch.profiler.DeviceType.CUDA})
        ms = triton.testing.do_bench(run, warmup=100, rep=500)
    flops = 4 * 2 * 16 * 8192 * 8192 * 128 / (2 if causal else 1)
    print(f"efficient f32 causal={causal}: {flops / ms / 1e9:.1f} TFLOP/s; kernels: {names}")
