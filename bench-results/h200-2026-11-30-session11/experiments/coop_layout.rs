//! Probe: which (row, column) of a 16x16 cooperative matrix each lane holds in each of its
//! elements, read through element access (OpCompositeExtract) in SPIR-V passed through to the
//! Vulkan driver. Prints the maps for C (f32), A and B (f16) and checks element insertion.
use std::borrow::Cow;

#[path = "../src/kernels/spirv_elements.rs"]
#[allow(dead_code)]
mod spirv_elements;

const PROBE: &str = r#"
enable f16;
enable wgpu_cooperative_matrix;
@group(0) @binding(0) var<storage, read_write> out_buf: array<f32>;
var<workgroup> tile: array<f32, 256>;
var<workgroup> tile_h: array<f16, 256>;

fn coop_get_c(m: coop_mat16x16<f32, C>, i: u32) -> f32 { return 0.0; }
fn coop_get_a(m: coop_mat16x16<f16, A>, i: u32) -> f16 { return 0.0h; }
fn coop_get_b(m: coop_mat16x16<f16, B>, i: u32) -> f16 { return 0.0h; }
fn coop_set_a(m: coop_mat16x16<f16, A>, i: u32, x: f16) -> coop_mat16x16<f16, A> { return m; }

@compute @workgroup_size(32)
fn probe(@builtin(local_invocation_index) lid: u32) {
    for (var e = lid; e < 256u; e += 32u) {
        tile[e] = f32(e);
        tile_h[e] = f16(e);
    }
    workgroupBarrier();
    let c = coopLoadT<coop_mat16x16<f32, C>>(&tile[0], 16u);
    let a = coopLoadT<coop_mat16x16<f16, A>>(&tile_h[0], 16u);
    let b = coopLoadT<coop_mat16x16<f16, B>>(&tile_h[0], 16u);
    out_buf[lid * 8u + 0u] = coop_get_c(c, 0u);
    out_buf[lid * 8u + 1u] = coop_get_c(c, 1u);
    out_buf[lid * 8u + 2u] = coop_get_c(c, 2u);
    out_buf[lid * 8u + 3u] = coop_get_c(c, 3u);
    out_buf[lid * 8u + 4u] = coop_get_c(c, 4u);
    out_buf[lid * 8u + 5u] = coop_get_c(c, 5u);
    out_buf[lid * 8u + 6u] = coop_get_c(c, 6u);
    out_buf[lid * 8u + 7u] = coop_get_c(c, 7u);
    out_buf[256u + lid * 8u + 0u] = f32(coop_get_a(a, 0u));
    out_buf[256u + lid * 8u + 1u] = f32(coop_get_a(a, 1u));
    out_buf[256u + lid * 8u + 2u] = f32(coop_get_a(a, 2u));
    out_buf[256u + lid * 8u + 3u] = f32(coop_get_a(a, 3u));
    out_buf[256u + lid * 8u + 4u] = f32(coop_get_a(a, 4u));
    out_buf[256u + lid * 8u + 5u] = f32(coop_get_a(a, 5u));
    out_buf[256u + lid * 8u + 6u] = f32(coop_get_a(a, 6u));
    out_buf[256u + lid * 8u + 7u] = f32(coop_get_a(a, 7u));
    out_buf[512u + lid * 8u + 0u] = f32(coop_get_b(b, 0u));
    out_buf[512u + lid * 8u + 1u] = f32(coop_get_b(b, 1u));
    out_buf[512u + lid * 8u + 2u] = f32(coop_get_b(b, 2u));
    out_buf[512u + lid * 8u + 3u] = f32(coop_get_b(b, 3u));
    out_buf[512u + lid * 8u + 4u] = f32(coop_get_b(b, 4u));
    out_buf[512u + lid * 8u + 5u] = f32(coop_get_b(b, 5u));
    out_buf[512u + lid * 8u + 6u] = f32(coop_get_b(b, 6u));
    out_buf[512u + lid * 8u + 7u] = f32(coop_get_b(b, 7u));
    // Insertion: lane l's element i becomes 1000 + 8 l + i (exact in f16 below 2048).
    var a2 = a;
    a2 = coop_set_a(a2, 0u, f16(1000u + lid * 8u + 0u));
    a2 = coop_set_a(a2, 1u, f16(1000u + lid * 8u + 1u));
    a2 = coop_set_a(a2, 2u, f16(1000u + lid * 8u + 2u));
    a2 = coop_set_a(a2, 3u, f16(1000u + lid * 8u + 3u));
    a2 = coop_set_a(a2, 4u, f16(1000u + lid * 8u + 4u));
    a2 = coop_set_a(a2, 5u, f16(1000u + lid * 8u + 5u));
    a2 = coop_set_a(a2, 6u, f16(1000u + lid * 8u + 6u));
    a2 = coop_set_a(a2, 7u, f16(1000u + lid * 8u + 7u));
    workgroupBarrier();
    coopStoreT(a2, &tile_h[0], 16u);
    workgroupBarrier();
    for (var e = lid; e < 256u; e += 32u) {
        out_buf[768u + e] = f32(tile_h[e]);
    }
}
"#;

fn main() {
    let words = spirv_elements::compile(PROBE).expect("compile");
    println!("SPIR-V: {} words", words.len());
    if std::env::args().any(|a| a == "--compile-only") {
        return;
    }
    let instance = wgpu::Instance::new(wgpu::InstanceDescriptor {
        backends: wgpu::Backends::VULKAN,
        ..wgpu::InstanceDescriptor::new_without_display_handle()
    });
    let adapter = pollster::block_on(instance.request_adapter(&wgpu::RequestAdapterOptions {
        power_preference: wgpu::PowerPreference::HighPerformance,
        ..Default::default()
    }))
    .expect("adapter");
    println!("{:?}", adapter.get_info());
    let wanted = wgpu::Features::PASSTHROUGH_SHADERS
        | wgpu::Features::EXPERIMENTAL_COOPERATIVE_MATRIX
        | wgpu::Features::SHADER_F16;
    assert!(adapter.features().contains(wanted), "missing features");
    let (device, queue) = pollster::block_on(adapter.request_device(&wgpu::DeviceDescriptor {
        required_features: wanted,
        required_limits: adapter.limits(),
        experimental_features: unsafe { wgpu::ExperimentalFeatures::enabled() },
        ..Default::default()
    }))
    .expect("device");
    let module = unsafe {
        device.create_shader_module_passthrough(wgpu::ShaderModuleDescriptorPassthrough {
            label: Some("probe"),
            entry_points: Cow::Borrowed(&[wgpu::PassthroughShaderEntryPoint {
                name: Cow::Borrowed("probe"),
                workgroup_size: (32, 1, 1),
            }]),
            spirv: Some(Cow::Owned(words)),
            ..Default::default()
        })
    };
    let bgl = device.create_bind_group_layout(&wgpu::BindGroupLayoutDescriptor {
        label: None,
        entries: &[wgpu::BindGroupLayoutEntry {
            binding: 0,
            visibility: wgpu::ShaderStages::COMPUTE,
            ty: wgpu::BindingType::Buffer {
                ty: wgpu::BufferBindingType::Storage { read_only: false },
                has_dynamic_offset: false,
                min_binding_size: None,
            },
            count: None,
        }],
    });
    let layout = device.create_pipeline_layout(&wgpu::PipelineLayoutDescriptor {
        label: None,
        bind_group_layouts: &[Some(&bgl)],
        immediate_size: 0,
    });
    let pipeline = device.create_compute_pipeline(&wgpu::ComputePipelineDescriptor {
        label: Some("probe"),
        layout: Some(&layout),
        module: &module,
        entry_point: Some("probe"),
        compilation_options: Default::default(),
        cache: None,
    });
    let size = 1024 * 4;
    let out = device.create_buffer(&wgpu::BufferDescriptor {
        label: None,
        size,
        usage: wgpu::BufferUsages::STORAGE | wgpu::BufferUsages::COPY_SRC,
        mapped_at_creation: false,
    });
    let read = device.create_buffer(&wgpu::BufferDescriptor {
        label: None,
        size,
        usage: wgpu::BufferUsages::MAP_READ | wgpu::BufferUsages::COPY_DST,
        mapped_at_creation: false,
    });
    let bg = device.create_bind_group(&wgpu::BindGroupDescriptor {
        label: None,
        layout: &bgl,
        entries: &[wgpu::BindGroupEntry { binding: 0, resource: out.as_entire_binding() }],
    });
    let mut enc = device.create_command_encoder(&Default::default());
    {
        let mut pass = enc.begin_compute_pass(&Default::default());
        pass.set_pipeline(&pipeline);
        pass.set_bind_group(0, &bg, &[]);
        pass.dispatch_workgroups(1, 1, 1);
    }
    enc.copy_buffer_to_buffer(&out, 0, &read, 0, size);
    queue.submit([enc.finish()]);
    read.slice(..).map_async(wgpu::MapMode::Read, |r| r.unwrap());
    device.poll(wgpu::PollType::wait_indefinitely()).unwrap();
    let data: Vec<f32> = bytemuck::cast_slice(&read.slice(..).get_mapped_range().unwrap()).to_vec();
    for (name, base) in [("C f32", 0usize), ("A f16", 256), ("B f16", 512)] {
        println!("{name}: lane: (row,col) of elements 0..8");
        let mut seen = [0u32; 256];
        for lane in 0..32 {
            let cells: Vec<String> = (0..8)
                .map(|i| {
                    let v = data[base + lane * 8 + i] as usize;
                    if v < 256 {
                        seen[v] += 1;
                    }
                    format!("({},{})", v / 16, v % 16)
                })
                .collect();
            println!("  {lane:2}: {}", cells.join(" "));
        }
        let covered = seen.iter().all(|&n| n == 1);
        println!("  every position exactly once: {covered}");
    }
    // Insertion: position of lane l's element i (from the A map) must hold 1000 + 8 l + i.
    let mut ok = true;
    for lane in 0..32 {
        for i in 0..8 {
            let pos = data[256 + lane * 8 + i] as usize;
            let got = data[768 + pos];
            if got != (1000 + lane * 8 + i) as f32 {
                ok = false;
            }
        }
    }
    println!("insertion agrees with the A map: {ok}");
}
