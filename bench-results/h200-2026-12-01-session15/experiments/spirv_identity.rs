// Writes the SPIR-V of the tensor-core kernel (scores in registers) that the H200's plan builds
// at d = 32-256, causal or not, into the folder given as the only argument. How it ran, once per
// tree (Cargo.lock copied from the repository; `path` pointing at the tree to dump):
//
//   [package] name = "spvdump", edition = "2021"
//   [dependencies] wgpu-flash-attn = { path = "/path/to/tree" }, wgpu = "30"
//   cargo run --release --offline -- OUT_DIR          (the committed tree; then 0976374's)
//   WGPU_FLASH_ATTN_SHADER_DIR=vB_dir cargo run --release --offline -- OUT_DIR_VB
//       (0976374's tree, vB_dir holding its shader with k-rows-then-v-rows.diff applied)
//   cmp NEW/d96_c0.spv OUT_DIR_VB/d96_c0.spv          (and so on: spirv-identity.txt)
use wgpu_flash_attn::plan::{plan_with, DeviceCaps};
use wgpu_flash_attn::{Attention, DType, PlanOptions};
fn main() {
    let out = std::env::args().nth(1).unwrap();
    std::fs::create_dir_all(&out).unwrap();
    let mut caps = DeviceCaps::from_limits(&wgpu::Limits {
        max_compute_workgroup_storage_size: 49152,
        max_compute_invocations_per_workgroup: 1024,
        max_compute_workgroup_size_x: 1024,
        max_storage_buffer_binding_size: 1 << 31,
        max_buffer_size: 1 << 32,
        ..Default::default()
    });
    caps.name = "NVIDIA H200".into();
    caps.backend = "Vulkan".into();
    caps.vendor = 0x10de;
    caps.device_type = "DiscreteGpu".into();
    caps.shader_f16 = true;
    caps.subgroup_sizes = Some((32, 32));
    caps.coop_matrix_f16 = true;
    caps.coop_elements = true;
    for d in [32u32, 64, 96, 128, 160, 192, 256] {
        for causal in [false, true] {
            let p = Attention::new(2, 16, 16, 8192, 8192, d).dtype(DType::F16).causal(causal);
            let plan = plan_with(&p, &caps, PlanOptions::default()).unwrap();
            let w = wgpu_flash_attn::kernels::coop::spirv(&plan).unwrap();
            let bytes: Vec<u8> = w.iter().flat_map(|x| x.to_le_bytes()).collect();
            std::fs::write(format!("{out}/d{d}_c{}.spv", causal as u8), bytes).unwrap();
        }
    }
}
