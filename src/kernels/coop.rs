//! The tensor-core forward kernel (`shaders/flash_fwd_coop.wgsl`): Q K^T and P V through
//! cooperative matrices. It shares the portable kernel's bindings, params and encoding
//! ([`super::forward`]); only its source differs.

use crate::plan::Plan;

/// Elements of a 16x16 fragment each lane holds in a subgroup of 32, the only size the kernel's
/// element layout is written for (`EL` in the shader).
pub(crate) const FRAGMENT_ELEMENTS: u32 = 8;

/// The shader file, with default constants.
pub const SOURCE: &str = include_str!("../../shaders/flash_fwd_coop.wgsl");

/// The shader source specialised for a plan of [`crate::plan::Kernel::ForwardCoopMatrix`].
pub fn shader_source(plan: &Plan) -> String {
    shader_text(plan).render()
}

/// The shader text for such a plan, not yet rendered.
pub(crate) fn shader_text(plan: &Plan) -> super::ShaderText {
    let p = &plan.problem;
    let t = plan.tiles;
    let row_blocks = t.block_m / (16 * t.threads_y);
    let header = format!(
        "const D: u32 = {}u;\nconst BN: u32 = {}u;\nconst NS: u32 = {}u;\nconst R16: u32 = {}u;\n\
         const SG: u32 = {}u;\n{}const SUBGROUP_SYNC: bool = {};\nfn sync_subgroup() {{ {}(); }}\n\
         const ELEMENTS: bool = {};\nconst TWO_KV: bool = {};\n",
        p.head_dim,
        t.block_n,
        t.threads_y,
        row_blocks,
        t.threads_x,
        super::forward::option_consts(p),
        plan.subgroup_sync,
        if plan.subgroup_sync {
            "subgroupBarrier"
        } else {
            "workgroupBarrier"
        },
        plan.coop_elements,
        crate::plan::two_kv_tiles(p.head_dim, plan.coop_elements),
    );
    let lanes_per_row = t.threads_x / 16;
    let d16 = p.head_dim / 16;
    // Unrolled so that every index into the arrays of fragments and scores is a constant.
    let slots = if plan.coop_elements {
        2 * row_blocks
    } else {
        row_blocks
    };
    let text = super::ShaderText::new(SOURCE, header);
    let text = if plan.coop_elements {
        text.through_spirv(t.threads())
    } else {
        text
    };
    text.unrolled(&[
        ("D16", d16),
        ("R16 * D16", row_blocks * d16),
        ("R16", row_blocks),
        ("N16", t.block_n / 16),
        ("CPL4", t.block_n / lanes_per_row / 4),
        ("LOADS", (t.block_n * p.head_dim / 4).div_ceil(t.threads())),
        ("EL", FRAGMENT_ELEMENTS),
        ("HALVES", 2),
        ("SLOTS", slots),
    ])
}

/// The SPIR-V of a plan that keeps scores in registers ([`Plan::coop_elements`]): naga's, with
/// element access in place of the stubs.
#[cfg(not(target_arch = "wasm32"))]
pub fn spirv(plan: &Plan) -> Result<Vec<u32>, String> {
    super::spirv_elements::compile(
        &shader_source(plan),
        super::forward::ENTRY,
        false,
        FRAGMENT_ELEMENTS,
    )
}

/// Whether the tensor-core kernel may keep scores in registers on this device: it passes SPIR-V
/// through, has 16x16x16 f16 cooperative matrices on Vulkan and subgroups of exactly 32 lanes
/// (the element layout in the kernel is for 32), and the kernel's `probe_elements` finds every
/// element of C and A fragments where the kernel assumes it. One dispatch, waited for (with any
/// work already queued). A driver that fails to build the probe's pipeline outright may lose the
/// device, as with any pipeline; wgpu reports that through the device-lost callback.
#[cfg(not(target_arch = "wasm32"))]
pub(crate) fn elements_work(
    device: &wgpu::Device,
    queue: &wgpu::Queue,
    caps: &crate::plan::DeviceCaps,
) -> bool {
    if !(caps.coop_matrix_f16
        && caps.backend == "Vulkan"
        && caps.subgroup_sizes == Some((32, 32))
        && device
            .features()
            .contains(wgpu::Features::PASSTHROUGH_SHADERS))
    {
        return false;
    }
    const ENTRY: &str = "probe_elements";
    let source = super::unroll(SOURCE, &[("EL", FRAGMENT_ELEMENTS)]);
    let Ok(words) = super::spirv_elements::compile(&source, ENTRY, false, FRAGMENT_ELEMENTS) else {
        return false;
    };
    // Every kind of error the probe may raise is caught here (none reaches the device's handler).
    let scopes = [
        wgpu::ErrorFilter::Validation,
        wgpu::ErrorFilter::OutOfMemory,
        wgpu::ErrorFilter::Internal,
    ]
    .map(|filter| device.push_error_scope(filter));
    let module = super::spirv_elements::module(device, words, ENTRY, 32);
    // The probe's only binding is the kernel's lse_buf.
    let layout = device.create_bind_group_layout(&wgpu::BindGroupLayoutDescriptor {
        label: Some(ENTRY),
        entries: &[wgpu::BindGroupLayoutEntry {
            binding: 5,
            visibility: wgpu::ShaderStages::COMPUTE,
            ty: wgpu::BindingType::Buffer {
                ty: wgpu::BufferBindingType::Storage { read_only: false },
                has_dynamic_offset: false,
                min_binding_size: None,
            },
            count: None,
        }],
    });
    let pipeline = device.create_compute_pipeline(&wgpu::ComputePipelineDescriptor {
        label: Some(ENTRY),
        layout: Some(
            &device.create_pipeline_layout(&wgpu::PipelineLayoutDescriptor {
                label: Some(ENTRY),
                bind_group_layouts: &[Some(&layout)],
                immediate_size: 0,
            }),
        ),
        module: &module,
        entry_point: Some(ENTRY),
        compilation_options: Default::default(),
        cache: None,
    });
    let bytes = 32 * 4;
    // Not zero, so that a probe that never ran does not pass.
    let counts = device.create_buffer(&wgpu::BufferDescriptor {
        label: Some(ENTRY),
        size: bytes,
        usage: wgpu::BufferUsages::STORAGE | wgpu::BufferUsages::COPY_SRC,
        mapped_at_creation: true,
    });
    if let Ok(mut view) = counts.slice(..).get_mapped_range_mut() {
        view.copy_from_slice(&[0xff; 32 * 4]);
    }
    counts.unmap();
    let read = device.create_buffer(&wgpu::BufferDescriptor {
        label: Some(ENTRY),
        size: bytes,
        usage: wgpu::BufferUsages::MAP_READ | wgpu::BufferUsages::COPY_DST,
        mapped_at_creation: false,
    });
    let group = device.create_bind_group(&wgpu::BindGroupDescriptor {
        label: Some(ENTRY),
        layout: &layout,
        entries: &[wgpu::BindGroupEntry {
            binding: 5,
            resource: counts.as_entire_binding(),
        }],
    });
    let mut encoder = device.create_command_encoder(&Default::default());
    {
        let mut pass = encoder.begin_compute_pass(&Default::default());
        pass.set_pipeline(&pipeline);
        pass.set_bind_group(0, &group, &[]);
        pass.dispatch_workgroups(1, 1, 1);
    }
    encoder.copy_buffer_to_buffer(&counts, 0, &read, 0, bytes);
    queue.submit([encoder.finish()]);
    let mut failed = false;
    for scope in scopes.into_iter().rev() {
        failed |= futures::FutureExt::now_or_never(scope.pop())
            .flatten()
            .is_some();
    }
    if failed {
        return false;
    }
    pollster::block_on(crate::context::read_buffer(device, &read))
        .is_ok_and(|bytes| bytes.iter().all(|&b| b == 0))
}

#[cfg(test)]
mod tests {
    #[test]
    fn the_probe_compiles_with_element_access() {
        let source = super::super::unroll(super::SOURCE, &[("EL", super::FRAGMENT_ELEMENTS)]);
        let words = super::super::spirv_elements::compile(
            &source,
            "probe_elements",
            false,
            super::FRAGMENT_ELEMENTS,
        )
        .unwrap();
        assert!(words.len() > 100);
    }
}
