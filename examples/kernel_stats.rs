//! What the Vulkan driver reports about each kernel it compiles: registers per invocation,
//! workgroup memory, spills, instruction counts (whatever the driver lists through
//! `VK_KHR_pipeline_executable_properties`). These decide how many workgroups fit a compute unit,
//! which a timing alone cannot tell.
//!
//! The plan and the WGSL come from the crate, on the default adapter (`WGPU_ADAPTER_NAME` picks
//! another), exactly as `FlashContext` would build them; naga turns the WGSL into SPIR-V with the
//! options wgpu's Vulkan backend uses for the crate's kernels (no index clamps; with
//! `WGPU_FLASH_ATTN_SHADER_CHECKS=1`, the clamps), and a pipeline is created on the same physical
//! device through Vulkan directly, so the driver can be asked for its statistics.
//!
//! ```sh
//! cargo run --release --example kernel_stats -- --dims 64,128 --dtypes f32,f16 \
//!     --kernels portable,subgroup,coop-matrix --tiles 128x32x32x8,64x16x32x4 --decode \
//!     --decode-tiles plan,sg:64/16/8
//! ```
//!
//! Vulkan only. A driver without the extension (lavapipe, for one) still compiles every kernel,
//! which checks the SPIR-V, but reports no statistics.
//!
//! `--cache DIR` also writes, per kernel, the data of a Vulkan pipeline cache that holds only that
//! kernel: the driver's own container around its machine code (a header alone on lavapipe). On
//! NVIDIA `scripts/nv_sass.py` unpacks it (a zstd frame holding the raw sm_90 code), disassembles
//! it with `nvdisasm` (CUDA's, or the copy in Triton's Python package) and counts the instructions
//! of the kernel's main loop:
//!
//! ```sh
//! kernel_stats --kernels coop-matrix --dims 128 --dtypes f16 --cache caches
//! NVDISASM=/path/to/nvdisasm python3 scripts/nv_sass.py --sass sass caches/*.bin
//! ```
//!
//! `--wgsl FILE=ENTRY` adds any WGSL file, such as the forms of the arithmetic probe as
//! `cargo bench --bench arith -- --wgsl-dir DIR` writes them (entry point `run`). It is translated
//! as the crate's kernels are (without index clamps), which need not be how the program that owns
//! it builds it: the probe's own shader modules keep wgpu's clamps.

#[cfg(target_arch = "wasm32")]
fn main() {}

#[cfg(not(target_arch = "wasm32"))]
fn main() {
    if let Err(e) = native::main() {
        eprintln!("error: {e}");
        std::process::exit(1);
    }
}

#[cfg(not(target_arch = "wasm32"))]
mod native {
    use std::ffi::{CStr, CString};

    use ash::vk;
    use clap::Parser;
    use wgpu_flash_attn::kernels::{decode, forward};
    use wgpu_flash_attn::kvcache::DecodeTilesSpec;
    use wgpu_flash_attn::{
        Attention, DType, FlashContext, Kernel, KvCacheAttention, PlanOptions, Tiles,
    };

    type Error = Box<dyn std::error::Error>;

    #[derive(Parser, Debug)]
    #[command(about = "Driver statistics (registers, memory, spills) of the crate's kernels")]
    struct Args {
        /// Head dimensions.
        #[arg(long, value_delimiter = ',', default_value = "64,128")]
        dims: Vec<u32>,
        /// Storage types: f32, f16, bf16.
        #[arg(long, value_delimiter = ',', default_value = "f32,f16")]
        dtypes: Vec<String>,
        /// Tiers: portable, subgroup, coop-matrix, auto (the plan's choice).
        #[arg(long, value_delimiter = ',', default_value = "auto")]
        kernels: Vec<String>,
        /// Forced tiles BMxBNxTXxTY; default: the plan's.
        #[arg(long, value_delimiter = ',', value_parser = |s: &str| s.parse::<Tiles>().map_err(|e| e.to_string()))]
        tiles: Vec<Tiles>,
        /// Causal (the banded variant of each kernel).
        #[arg(long)]
        causal: bool,
        /// A sliding window LEFT,RIGHT (the banded variant of each kernel, -1 = unbounded).
        #[arg(long, allow_hyphen_values = true, value_parser = parse_window)]
        window: Option<(i32, i32)>,
        /// f32 and bf16 on the tensor-core tier too (`Attention::allow_f16_products`).
        #[arg(long)]
        f16_products: bool,
        /// The portable and subgroup kernels' products unrolled: auto (the plan's choice), on, off.
        #[arg(long, default_value = "auto")]
        unroll: String,
        /// Also the KV-cache decode kernel of the plan (batch 8, 32 query heads over
        /// --decode-heads-kv KV heads, d = 128, f16, --decode-kv cached keys, one new token).
        #[arg(long)]
        decode: bool,
        /// With --decode: KV heads (8: 4 query heads share one; 32: plain multi-head attention).
        #[arg(long, default_value_t = 8)]
        decode_heads_kv: u32,
        /// With --decode: cached keys per sequence.
        #[arg(long, default_value_t = 32768)]
        decode_kv: u32,
        /// With --decode: the KV-cache kernel's tiles, as `decode --tiles` takes them (`plan`,
        /// `portable`, `subgroup`, THREADS/THREADS_PER_KEY/KEYS_PER_THREAD/THREADS_V or
        /// sg:THREADS/THREADS_PER_KEY/KEYS_PER_THREAD).
        #[arg(long, value_delimiter = ',', default_value = "plan",
              value_parser = |s: &str| s.parse::<DecodeTilesSpec>().map_err(|e| e.to_string()))]
        decode_tiles: Vec<DecodeTilesSpec>,
        /// Also any WGSL file, as FILE=ENTRY (a compute entry point), e.g. a benchmark's kernel
        /// with its header filled in, or a variant of a crate kernel as rendered.
        #[arg(long, value_delimiter = ',')]
        wgsl: Vec<String>,
        /// Also write each kernel's internal representations (where the driver offers them) to
        /// files in this folder.
        #[arg(long)]
        ir: Option<std::path::PathBuf>,
        /// Also write the driver's pipeline cache data of each kernel (compiled into a fresh,
        /// empty cache: the driver's own binary container) to files in this folder.
        #[arg(long)]
        cache: Option<std::path::PathBuf>,
    }

    fn parse_window(s: &str) -> Result<(i32, i32), String> {
        let (left, right) = s.split_once(',').ok_or("LEFT,RIGHT")?;
        let side = |x: &str| x.trim().parse::<i32>().map_err(|e| format!("{x}: {e}"));
        Ok((side(left)?, side(right)?))
    }

    /// One kernel to compile: a label, its WGSL and its entry point.
    struct Variant {
        label: String,
        source: String,
        entry: String,
        /// SPIR-V made by the crate itself (element access), used instead of `source`'s.
        spirv: Option<Vec<u32>>,
    }

    pub fn main() -> Result<(), Error> {
        let args = Args::parse();
        let ctx = pollster::block_on(FlashContext::new_default())?;
        let caps = ctx.caps().clone();
        println!("adapter: {} ({})", caps.name, caps.backend);
        if let Err(why) = ctx.coop_elements_status() {
            println!("tensor-core scores in registers: unavailable ({why})");
        }
        if caps.backend != "Vulkan" {
            return Err("the default adapter is not a Vulkan one (set WGPU_BACKEND=vulkan)".into());
        }

        let mut variants = Vec::new();
        for &d in &args.dims {
            for dtype in &args.dtypes {
                let dtype: DType = dtype.parse()?;
                // The kernel source depends on head_dim, dtype, tiles and options, not on the
                // sequence length: a short one stays within every device's binding limits.
                let problem = Attention::new(1, 2048 / d, 2048 / d, 1024, 1024, d)
                    .dtype(dtype)
                    .allow_f16_products(args.f16_products)
                    .causal(args.causal)
                    .window_size(
                        args.window.map_or(-1, |w| w.0),
                        args.window.map_or(-1, |w| w.1),
                    );
                let tiles: Vec<Option<Tiles>> = if args.tiles.is_empty() {
                    vec![None]
                } else {
                    args.tiles.iter().copied().map(Some).collect()
                };
                for kernel in &args.kernels {
                    let kernel = match kernel.as_str() {
                        "auto" => None,
                        "portable" => Some(Kernel::ForwardPortable),
                        "subgroup" => Some(Kernel::ForwardSubgroup),
                        "coop-matrix" => Some(Kernel::ForwardCoopMatrix),
                        other => return Err(format!("unknown kernel {other:?}").into()),
                    };
                    for &tiles in &tiles {
                        let options = PlanOptions {
                            kernel,
                            tiles,
                            unroll: match args.unroll.as_str() {
                                "auto" => None,
                                "on" => Some(true),
                                "off" => Some(false),
                                other => return Err(format!("unknown --unroll {other:?}").into()),
                            },
                            ..Default::default()
                        };
                        match ctx.plan_with(&problem, options) {
                            Ok(planned) => {
                                let plan = planned.plan();
                                variants.push(Variant {
                                    label: format!(
                                        "forward d={d} {dtype:?} causal={}{} {} {}",
                                        args.causal,
                                        args.window.map_or(String::new(), |(l, r)| {
                                            format!(" window={l},{r}")
                                        }),
                                        plan.kernel.name(),
                                        plan.tiles_label(),
                                    ),
                                    source: forward::shader_source(plan),
                                    entry: "forward".into(),
                                    // Kernels with element access run as the context compiles them.
                                    spirv: if plan.coop_elements {
                                        Some(wgpu_flash_attn::kernels::coop::spirv(plan)?)
                                    } else {
                                        None
                                    },
                                });
                            }
                            Err(e) => println!("skipped d={d} {dtype:?} {kernel:?} {tiles:?}: {e}"),
                        }
                    }
                }
            }
        }
        if args.decode {
            let problem = KvCacheAttention::decode(
                32,
                args.decode_heads_kv,
                128,
                1,
                &[args.decode_kv; 8],
                args.decode_kv,
            )
            .dtype(DType::F16);
            for spec in &args.decode_tiles {
                let tiles = spec.resolve(&problem, ctx.caps())?;
                let planned = ctx.plan_kv_cache_with(&problem, tiles)?;
                let plan = planned.plan();
                variants.push(Variant {
                    label: format!(
                        "decode kv={} splits={} tiles {}",
                        args.decode_kv, plan.splits, plan.tiles
                    ),
                    source: decode::attention_source(plan),
                    entry: "decode".into(),
                    spirv: None,
                });
            }
        }

        for spec in &args.wgsl {
            let (file, entry) = spec
                .rsplit_once('=')
                .ok_or_else(|| format!("--wgsl {spec}: want FILE=ENTRY"))?;
            let source = std::fs::read_to_string(file)
                .map_err(|e| format!("--wgsl {spec}: cannot read {file}: {e}"))?;
            let module = naga::front::wgsl::parse_str(&source)
                .map_err(|e| format!("--wgsl {file}: {}", e.emit_to_string(&source)))?;
            if !module.entry_points.iter().any(|ep| ep.name == entry) {
                return Err(format!("--wgsl {file}: no entry point {entry:?}").into());
            }
            variants.push(Variant {
                label: format!("wgsl {file} {entry}"),
                source,
                entry: entry.into(),
                spirv: None,
            });
        }

        let vulkan = Vulkan::new(&caps.name)?;
        for v in &variants {
            let (spirv, bindings) = match &v.spirv {
                Some(words) => (
                    words.clone(),
                    bindings(&naga::front::wgsl::parse_str(&v.source)?),
                ),
                None => to_spirv(&v.source, &v.entry)?,
            };
            println!("\n== {}", v.label);
            if !vulkan.has_statistics() {
                println!("  compiled (no statistics from this driver)");
            }
            let (executables, cache) = vulkan.statistics(
                &spirv,
                &bindings,
                &v.entry,
                args.ir.is_some(),
                args.cache.is_some(),
            )?;
            if let (Some(dir), Some(data)) = (&args.cache, cache) {
                std::fs::create_dir_all(dir)?;
                let file = format!("{}.bin", v.label).replace(
                    |c: char| !c.is_ascii_alphanumeric() && c != '-' && c != '.',
                    "_",
                );
                println!("  pipeline cache: {} bytes", data.len());
                std::fs::write(dir.join(file), data)?;
            }
            for (name, stats, reps) in executables {
                println!("  executable: {name}");
                for (stat, value) in stats {
                    println!("    {stat}: {value}");
                }
                if let Some(dir) = &args.ir {
                    std::fs::create_dir_all(dir)?;
                    for (rep, text) in reps {
                        let file = format!("{}-{name}-{rep}.txt", v.label)
                            .replace(|c: char| !c.is_ascii_alphanumeric() && c != '-', "_");
                        std::fs::write(dir.join(file), text)?;
                    }
                }
            }
        }
        Ok(())
    }

    /// SPIR-V as wgpu's Vulkan backend writes it for the crate's kernels: SPIR-V 1.6, no debug
    /// info, no index clamps unless asked for, loop bounding on, workgroup memory not zeroed.
    fn to_spirv(source: &str, entry: &str) -> Result<(Vec<u32>, Bindings), Error> {
        use naga::back::spv;
        use naga::proc::{BoundsCheckPolicies, BoundsCheckPolicy};
        let module = naga::front::wgsl::parse_str(source)?;
        let info = naga::valid::Validator::new(
            naga::valid::ValidationFlags::all(),
            naga::valid::Capabilities::all(),
        )
        .validate(&module)?;
        let index = if std::env::var("WGPU_FLASH_ATTN_SHADER_CHECKS").is_ok_and(|v| v == "1") {
            BoundsCheckPolicy::Restrict
        } else {
            BoundsCheckPolicy::Unchecked
        };
        let options = spv::Options {
            lang_version: (1, 6),
            flags: spv::WriterFlags::empty(),
            bounds_check_policies: BoundsCheckPolicies {
                index,
                buffer: BoundsCheckPolicy::Unchecked,
                image_load: BoundsCheckPolicy::Unchecked,
                binding_array: BoundsCheckPolicy::Unchecked,
            },
            zero_initialize_workgroup_memory: spv::ZeroInitializeWorkgroupMemoryMode::None,
            ..Default::default()
        };
        let pipeline = spv::PipelineOptions {
            shader_stage: naga::ShaderStage::Compute,
            entry_point: entry.into(),
        };
        let spirv = spv::write_vec(&module, &info, &options, Some(&pipeline))?;
        Ok((spirv, bindings(&module)))
    }

    /// A Vulkan device on the adapter's physical device, with pipeline statistics enabled.
    struct Vulkan {
        _entry: ash::Entry,
        instance: ash::Instance,
        device: ash::Device,
        /// `None` where the driver does not offer the statistics.
        stats: Option<ash::khr::pipeline_executable_properties::Device>,
    }

    type Statistics = Vec<(String, String)>;
    /// (binding, is a uniform buffer) of each buffer a kernel binds in group 0.
    type Bindings = Vec<(u32, bool)>;
    type Representations = Vec<(String, String)>;
    /// Per executable the driver made of a kernel: its name, statistics and representations.
    type Executables = Vec<(String, Statistics, Representations)>;

    impl Vulkan {
        fn new(adapter_name: &str) -> Result<Vulkan, Error> {
            // SAFETY: plain Vulkan setup; every handle made here lives as long as `Vulkan`.
            unsafe {
                let entry = ash::Entry::load()?;
                let app = vk::ApplicationInfo::default().api_version(vk::API_VERSION_1_3);
                let instance = entry.create_instance(
                    &vk::InstanceCreateInfo::default().application_info(&app),
                    None,
                )?;
                let physical = instance
                    .enumerate_physical_devices()?
                    .into_iter()
                    .find(|&p| {
                        let props = instance.get_physical_device_properties(p);
                        CStr::from_ptr(props.device_name.as_ptr()).to_string_lossy() == adapter_name
                    })
                    .ok_or_else(|| format!("no Vulkan physical device named {adapter_name:?}"))?;
                let offered: Vec<CString> = instance
                    .enumerate_device_extension_properties(physical)?
                    .iter()
                    .map(|e| CStr::from_ptr(e.extension_name.as_ptr()).to_owned())
                    .collect();
                let has = |name: &CStr| offered.iter().any(|e| e.as_c_str() == name);
                // Without the extension the kernels are still compiled (so their SPIR-V is checked
                // by the driver), but there are no statistics to print.
                let with_stats = has(ash::khr::pipeline_executable_properties::NAME);
                if !with_stats {
                    println!(
                        "{adapter_name} does not offer VK_KHR_pipeline_executable_properties: \
                         kernels are compiled, without statistics"
                    );
                }
                let mut extensions = Vec::new();
                if with_stats {
                    extensions.push(ash::khr::pipeline_executable_properties::NAME.as_ptr());
                }
                let coop = has(ash::khr::cooperative_matrix::NAME);
                if coop {
                    extensions.push(ash::khr::cooperative_matrix::NAME.as_ptr());
                }

                // Every feature the device has, so that any kernel's SPIR-V is accepted.
                let mut v11 = vk::PhysicalDeviceVulkan11Features::default();
                let mut v12 = vk::PhysicalDeviceVulkan12Features::default();
                let mut v13 = vk::PhysicalDeviceVulkan13Features::default();
                let mut exec = vk::PhysicalDevicePipelineExecutablePropertiesFeaturesKHR::default();
                let mut coop_features = vk::PhysicalDeviceCooperativeMatrixFeaturesKHR::default();
                let mut features = vk::PhysicalDeviceFeatures2::default()
                    .push_next(&mut v11)
                    .push_next(&mut v12)
                    .push_next(&mut v13);
                if with_stats {
                    features = features.push_next(&mut exec);
                }
                if coop {
                    features = features.push_next(&mut coop_features);
                }
                instance.get_physical_device_features2(physical, &mut features);

                let family = instance
                    .get_physical_device_queue_family_properties(physical)
                    .iter()
                    .position(|q| q.queue_flags.contains(vk::QueueFlags::COMPUTE))
                    .ok_or("no compute queue")? as u32;
                let priorities = [1.0];
                let queues = [vk::DeviceQueueCreateInfo::default()
                    .queue_family_index(family)
                    .queue_priorities(&priorities)];
                let info = vk::DeviceCreateInfo::default()
                    .queue_create_infos(&queues)
                    .enabled_extension_names(&extensions)
                    .push_next(&mut features);
                let device = instance.create_device(physical, &info, None)?;
                let stats = with_stats.then(|| {
                    ash::khr::pipeline_executable_properties::Device::new(&instance, &device)
                });
                Ok(Vulkan {
                    _entry: entry,
                    instance,
                    device,
                    stats,
                })
            }
        }

        fn has_statistics(&self) -> bool {
            self.stats.is_some()
        }

        /// Compiles the kernel and returns, per executable the driver made of it, its name, its
        /// statistics and (when asked) its internal representations; and (when asked) the data
        /// of a pipeline cache that held only this pipeline.
        fn statistics(
            &self,
            spirv: &[u32],
            bindings: &[(u32, bool)],
            entry: &str,
            with_ir: bool,
            with_cache: bool,
        ) -> Result<(Executables, Option<Vec<u8>>), Error> {
            // SAFETY: the handles created here are destroyed before returning; the SPIR-V was
            // validated by naga.
            unsafe {
                let d = &self.device;
                let shader = d.create_shader_module(
                    &vk::ShaderModuleCreateInfo::default().code(spirv),
                    None,
                )?;
                let layout_bindings: Vec<_> = bindings
                    .iter()
                    .map(|&(binding, uniform)| {
                        vk::DescriptorSetLayoutBinding::default()
                            .binding(binding)
                            .descriptor_type(if uniform {
                                vk::DescriptorType::UNIFORM_BUFFER
                            } else {
                                vk::DescriptorType::STORAGE_BUFFER
                            })
                            .descriptor_count(1)
                            .stage_flags(vk::ShaderStageFlags::COMPUTE)
                    })
                    .collect();
                let set_layout = d.create_descriptor_set_layout(
                    &vk::DescriptorSetLayoutCreateInfo::default().bindings(&layout_bindings),
                    None,
                )?;
                let set_layouts = [set_layout];
                let layout = d.create_pipeline_layout(
                    &vk::PipelineLayoutCreateInfo::default().set_layouts(&set_layouts),
                    None,
                )?;
                let name = CString::new(entry)?;
                let mut flags = vk::PipelineCreateFlags::empty();
                if self.stats.is_some() {
                    flags |= vk::PipelineCreateFlags::CAPTURE_STATISTICS_KHR;
                    if with_ir {
                        flags |= vk::PipelineCreateFlags::CAPTURE_INTERNAL_REPRESENTATIONS_KHR;
                    }
                }
                let info = vk::ComputePipelineCreateInfo::default()
                    .flags(flags)
                    .stage(
                        vk::PipelineShaderStageCreateInfo::default()
                            .stage(vk::ShaderStageFlags::COMPUTE)
                            .module(shader)
                            .name(&name),
                    )
                    .layout(layout);
                let cache = if with_cache {
                    d.create_pipeline_cache(&vk::PipelineCacheCreateInfo::default(), None)?
                } else {
                    vk::PipelineCache::null()
                };
                let pipeline = d
                    .create_compute_pipelines(cache, &[info], None)
                    .map_err(|(_, e)| e)?[0];
                let cache_data = if with_cache {
                    let data = d.get_pipeline_cache_data(cache)?;
                    d.destroy_pipeline_cache(cache, None);
                    Some(data)
                } else {
                    None
                };

                let mut out = Vec::new();
                let executables = match &self.stats {
                    Some(stats) => stats.get_pipeline_executable_properties(
                        &vk::PipelineInfoKHR::default().pipeline(pipeline),
                    )?,
                    None => Vec::new(),
                };
                let stats_fns = self.stats.as_ref();
                for (index, exe) in executables.iter().enumerate() {
                    let exe_info = vk::PipelineExecutableInfoKHR::default()
                        .pipeline(pipeline)
                        .executable_index(index as u32);
                    let stats_fns = stats_fns.expect("executables come from the statistics");
                    let stats = stats_fns
                        .get_pipeline_executable_statistics(&exe_info)?
                        .iter()
                        .map(|s| (text(&s.name), value(s)))
                        .collect();
                    let reps = if with_ir {
                        representations(stats_fns, &exe_info)?
                    } else {
                        Vec::new()
                    };
                    out.push((text(&exe.name), stats, reps));
                }
                d.destroy_pipeline(pipeline, None);
                d.destroy_pipeline_layout(layout, None);
                d.destroy_descriptor_set_layout(set_layout, None);
                d.destroy_shader_module(shader, None);
                Ok((out, cache_data))
            }
        }
    }

    impl Drop for Vulkan {
        fn drop(&mut self) {
            // SAFETY: nothing made from these handles outlives them.
            unsafe {
                self.device.destroy_device(None);
                self.instance.destroy_instance(None);
            }
        }
    }

    /// The driver's text of each internal representation of one executable (two calls: sizes,
    /// then the text into buffers of those sizes).
    unsafe fn representations(
        stats: &ash::khr::pipeline_executable_properties::Device,
        exe_info: &vk::PipelineExecutableInfoKHR<'_>,
    ) -> Result<Representations, Error> {
        // SAFETY: the buffers given to the second call have the sizes the first call returned.
        unsafe {
            let sized = stats.get_pipeline_executable_internal_representations(exe_info)?;
            let mut buffers: Vec<Vec<u8>> = sized.iter().map(|r| vec![0u8; r.data_size]).collect();
            let mut reps: Vec<_> = sized
                .iter()
                .zip(buffers.iter_mut())
                .map(|(r, buf)| {
                    let mut rep = *r;
                    rep.p_data = buf.as_mut_ptr().cast();
                    rep
                })
                .collect();
            let mut count = reps.len() as u32;
            (stats
                .fp()
                .get_pipeline_executable_internal_representations_khr)(
                stats.device(),
                exe_info,
                &mut count,
                reps.as_mut_ptr(),
            )
            .result()?;
            Ok(reps
                .iter()
                .zip(&buffers)
                .map(|(r, buf)| {
                    (
                        text(&r.name),
                        String::from_utf8_lossy(buf)
                            .trim_end_matches('\0')
                            .to_string(),
                    )
                })
                .collect())
        }
    }

    fn text(chars: &[std::ffi::c_char]) -> String {
        // SAFETY: Vulkan's fixed-size name arrays are NUL-terminated.
        unsafe { CStr::from_ptr(chars.as_ptr()) }
            .to_string_lossy()
            .into_owned()
    }

    fn value(s: &vk::PipelineExecutableStatisticKHR<'_>) -> String {
        // SAFETY: `format` says which member of the union the driver wrote.
        unsafe {
            match s.format {
                vk::PipelineExecutableStatisticFormatKHR::BOOL32 => (s.value.b32 != 0).to_string(),
                vk::PipelineExecutableStatisticFormatKHR::INT64 => s.value.i64.to_string(),
                vk::PipelineExecutableStatisticFormatKHR::UINT64 => s.value.u64.to_string(),
                vk::PipelineExecutableStatisticFormatKHR::FLOAT64 => s.value.f64.to_string(),
                other => format!("(format {other:?})"),
            }
        }
    }

    /// Every buffer the module binds (all in group 0).
    fn bindings(module: &naga::Module) -> Bindings {
        module
            .global_variables
            .iter()
            .filter_map(|(_, var)| {
                let binding = var.binding.as_ref()?;
                match var.space {
                    naga::AddressSpace::Uniform => Some((binding.binding, true)),
                    naga::AddressSpace::Storage { .. } => Some((binding.binding, false)),
                    _ => None,
                }
            })
            .collect()
    }
}
