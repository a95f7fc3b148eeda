//! A digest of the SPIR-V of every tensor-core forward kernel the plan can make for a 32-lane
//! NVIDIA-like device (no GPU needed): each head dim from 16 to 256 in steps of 16, without and
//! with masks and a softcap, with scores in registers and through workgroup memory, the plan's
//! tiles and every tile of the tables. One line per kernel; run it on two commits and compare
//! the outputs to see which kernels a change of the shader text or the plan reaches. A change
//! that only adds comments, or a form that only some head dims take, leaves the other lines as
//! they were (the driver's compiler then has nothing new to compile there).
//!
//! ```sh
//! cargo run --release --example kernel_digests > after.txt
//! git stash; cargo run --release --example kernel_digests > before.txt; git stash pop
//! diff before.txt after.txt
//! ```

#[cfg(target_arch = "wasm32")]
fn main() {}

#[cfg(not(target_arch = "wasm32"))]
fn main() {
    use wgpu_flash_attn::kernels::{coop, forward};
    use wgpu_flash_attn::plan::{plan_with, DeviceCaps, Kernel, PlanOptions};
    use wgpu_flash_attn::{Attention, DType};

    let mut caps = DeviceCaps::webgpu_defaults();
    caps.max_workgroup_storage_bytes = 49152;
    caps.max_invocations_per_workgroup = 1024;
    caps.max_workgroup_size_x = 1024;
    caps.shader_f16 = true;
    caps.coop_matrix_f16 = true;
    caps.subgroup_barrier = true;
    caps.subgroup_sizes = Some((32, 32));
    let probed = DeviceCaps {
        coop_elements: true,
        ..caps.clone()
    };
    for d in (16..=256).step_by(16) {
        for masked in [false, true] {
            let mut p = Attention::new(1, 1, 1, 4, 4, d)
                .dtype(DType::F16)
                .causal(masked)
                .with_lse(masked);
            if masked {
                p = p.window_size(3, 2).softcap(10.0);
            }
            for (caps, elements) in [(&caps, false), (&probed, true)] {
                let tables = wgpu_flash_attn::tuning::coop_tiles(d, 32, elements).map(Some);
                for tiles in std::iter::once(None).chain(tables) {
                    let options = PlanOptions {
                        tiles,
                        kernel: Some(Kernel::ForwardCoopMatrix),
                        ..Default::default()
                    };
                    let Ok(plan) = plan_with(&p, caps, options) else {
                        continue; // a table tile this head dim cannot take
                    };
                    let words = if plan.coop_elements {
                        coop::spirv(&plan).expect("the kernel compiles")
                    } else {
                        spirv(&forward::shader_source(&plan))
                    };
                    let chosen = if tiles.is_some() { "forced" } else { "plan's" };
                    println!(
                        "d={d} masked={masked} registers={} {chosen} {} {:016x}",
                        plan.coop_elements,
                        plan.tiles,
                        fnv1a(&words)
                    );
                }
            }
        }
    }
}

/// naga's SPIR-V of a WGSL kernel, with its default options.
#[cfg(not(target_arch = "wasm32"))]
fn spirv(source: &str) -> Vec<u32> {
    let module = naga::front::wgsl::parse_str(source).expect("the kernel parses");
    let info = naga::valid::Validator::new(
        naga::valid::ValidationFlags::all(),
        naga::valid::Capabilities::all(),
    )
    .validate(&module)
    .expect("the kernel validates");
    naga::back::spv::write_vec(&module, &info, &Default::default(), None).expect("SPIR-V")
}

/// FNV-1a over the words' bytes: the same on every machine and toolchain.
#[cfg(not(target_arch = "wasm32"))]
fn fnv1a(words: &[u32]) -> u64 {
    words
        .iter()
        .flat_map(|w| w.to_le_bytes())
        .fold(0xcbf2_9ce4_8422_2325, |h, b| {
            (h ^ u64::from(b)).wrapping_mul(0x0000_0100_0000_01b3)
        })
}
