//! [`FlashContext`]: the device, its capabilities, and the pipelines built for it.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};

use futures::FutureExt;
use wgpu::util::DeviceExt;

use crate::error::{FlashError, Result};
use crate::kernels::{forward, ShaderText};
use crate::plan::{self, DeviceCaps, Plan, PlanOptions};
use crate::problem::{Attention, DType, MaskKind, Tensor};

/// Owns a wgpu device and queue, what the planner knows about them, and a pipeline cache.
///
/// Build one per device and keep it: pipelines are compiled on first use of a shape class and
/// reused afterwards. Cloning is cheap and shares the cache.
#[derive(Clone, Debug)]
pub struct FlashContext {
    device: wgpu::Device,
    queue: wgpu::Queue,
    caps: DeviceCaps,
    forward_layout: wgpu::BindGroupLayout,
    forward_pipeline_layout: wgpu::PipelineLayout,
    /// Bound where a plan uses no LSE (0: a writable slot) or no ALiBi slopes or sinks (1: read-only
    /// slots); one buffer cannot be both in one dispatch, nor fill two writable slots of one (2: a
    /// second writable one, for the KV-cache kernels).
    pub(crate) placeholders: [wgpu::Buffer; 3],
    pipelines: Arc<Mutex<HashMap<(String, &'static str), wgpu::ComputePipeline>>>,
    /// Why the tensor-core tier cannot keep scores in registers here, if it cannot.
    elements_probe: std::result::Result<(), String>,
}

/// Features the context asks for when it creates the device itself, where the adapter has them.
///
/// This includes wgpu's `EXPERIMENTAL_COOPERATIVE_MATRIX`, which the tensor-core tier needs,
/// `SUBGROUP_BARRIER`, which it uses on NVIDIA, and `PASSTHROUGH_SHADERS`, through which it keeps
/// its scores in registers where a probe kernel approves the device
/// ([`DeviceCaps::coop_elements`](crate::DeviceCaps::coop_elements)): the context opts in to wgpu's
/// experimental features for cooperative matrices when the adapter offers them. Create the
/// device yourself and pass it to [`FlashContext::new`] to decide otherwise.
pub const WANTED_FEATURES: wgpu::Features = wgpu::Features::SHADER_F16
    .union(wgpu::Features::TIMESTAMP_QUERY)
    .union(wgpu::Features::SUBGROUP)
    .union(wgpu::Features::SUBGROUP_BARRIER)
    .union(wgpu::Features::EXPERIMENTAL_COOPERATIVE_MATRIX)
    .union(wgpu::Features::PASSTHROUGH_SHADERS);

impl FlashContext {
    /// Wraps a device the caller created from `adapter`. The plan uses the device's enabled
    /// features and limits (not the adapter's), so ask for `SHADER_F16` and generous limits when
    /// creating it if the adapter has them. On a Vulkan device with cooperative matrices,
    /// `PASSTHROUGH_SHADERS` and 32-lane subgroups, this runs one small probe dispatch and waits for
    /// it ([`DeviceCaps::coop_elements`](crate::DeviceCaps::coop_elements)).
    pub fn new(device: wgpu::Device, queue: wgpu::Queue, adapter: &wgpu::Adapter) -> Result<Self> {
        let caps = caps_of(&device, adapter);
        #[cfg(not(target_arch = "wasm32"))]
        let elements_probe = crate::kernels::coop::elements_work(&device, &queue, &caps);
        #[cfg(target_arch = "wasm32")]
        let elements_probe = Err("the browser takes no SPIR-V".to_string());
        let caps = DeviceCaps {
            coop_elements: elements_probe.is_ok(),
            ..caps
        };
        Ok(Self::from_parts(device, queue, caps, elements_probe))
    }

    /// Finds the default adapter (honouring `WGPU_BACKEND` and `WGPU_ADAPTER_NAME`), creates a device
    /// with the adapter's limits and the useful features it offers, and wraps it.
    pub async fn new_default() -> Result<Self> {
        let instance =
            wgpu::Instance::new(wgpu::InstanceDescriptor::new_without_display_handle_from_env());
        let adapter = match wgpu::util::initialize_adapter_from_env(&instance, None).await {
            Ok(a) => a,
            Err(_) => instance
                .request_adapter(&wgpu::RequestAdapterOptions {
                    power_preference: wgpu::PowerPreference::HighPerformance,
                    ..Default::default()
                })
                .await
                .map_err(|e| FlashError::NoDevice(e.to_string()))?,
        };
        Self::from_adapter(&adapter).await
    }

    /// Creates a device on `adapter` with its full limits and the features of [`WANTED_FEATURES`]
    /// that it offers, and wraps it.
    pub async fn from_adapter(adapter: &wgpu::Adapter) -> Result<Self> {
        let features = adapter.features() & WANTED_FEATURES;
        let experimental_features =
            if features.contains(wgpu::Features::EXPERIMENTAL_COOPERATIVE_MATRIX) {
                // SAFETY: the only experimental feature requested is cooperative matrices, used by
                // one kernel whose every variant naga validates and the test suite checks against
                // the f64 oracle on a device that has them.
                unsafe { wgpu::ExperimentalFeatures::enabled() }
            } else {
                wgpu::ExperimentalFeatures::disabled()
            };
        let (device, queue) = adapter
            .request_device(&wgpu::DeviceDescriptor {
                label: Some("wgpu-flash-attn"),
                required_features: features,
                required_limits: adapter.limits(),
                experimental_features,
                ..Default::default()
            })
            .await
            .map_err(|e| FlashError::NoDevice(e.to_string()))?;
        Self::new(device, queue, adapter)
    }

    /// Blocking [`FlashContext::new_default`] (not on wasm, where nothing may block).
    #[cfg(not(target_arch = "wasm32"))]
    pub fn default_blocking() -> Result<Self> {
        pollster::block_on(Self::new_default())
    }

    fn from_parts(
        device: wgpu::Device,
        queue: wgpu::Queue,
        caps: DeviceCaps,
        elements_probe: std::result::Result<(), String>,
    ) -> Self {
        let storage = storage_entry;
        let forward_layout = device.create_bind_group_layout(&wgpu::BindGroupLayoutDescriptor {
            label: Some("flash forward"),
            entries: &[
                wgpu::BindGroupLayoutEntry {
                    binding: 0,
                    visibility: wgpu::ShaderStages::COMPUTE,
                    ty: wgpu::BindingType::Buffer {
                        ty: wgpu::BufferBindingType::Uniform,
                        has_dynamic_offset: false,
                        min_binding_size: None,
                    },
                    count: None,
                },
                storage(1, true),
                storage(2, true),
                storage(3, true),
                storage(4, false),
                storage(5, false),
                storage(6, true),
                storage(7, true),
                storage(8, true),
            ],
        });
        let forward_pipeline_layout =
            device.create_pipeline_layout(&wgpu::PipelineLayoutDescriptor {
                label: Some("flash forward"),
                bind_group_layouts: &[Some(&forward_layout)],
                immediate_size: 0,
            });
        let placeholders = [
            "unused writable binding",
            "unused read-only binding",
            "second unused writable binding",
        ]
        .map(|label| {
            device.create_buffer(&wgpu::BufferDescriptor {
                label: Some(label),
                size: 16,
                usage: wgpu::BufferUsages::STORAGE,
                mapped_at_creation: false,
            })
        });
        FlashContext {
            device,
            queue,
            caps,
            forward_layout,
            forward_pipeline_layout,
            placeholders,
            pipelines: Arc::default(),
            elements_probe,
        }
    }

    /// The device.
    pub fn device(&self) -> &wgpu::Device {
        &self.device
    }

    /// The queue.
    pub fn queue(&self) -> &wgpu::Queue {
        &self.queue
    }

    /// What the planner knows about the device.
    pub fn caps(&self) -> &DeviceCaps {
        &self.caps
    }

    /// `Ok` where the tensor-core tier keeps its scores in registers on this device
    /// ([`DeviceCaps::coop_elements`](crate::DeviceCaps::coop_elements)); otherwise why not: the
    /// features it needs, or what the probe dispatch found. Without it the tier still runs, with
    /// scores through workgroup memory.
    ///
    /// ```no_run
    /// let ctx = wgpu_flash_attn::FlashContext::default_blocking()?;
    /// if let Err(why) = ctx.coop_elements_status() {
    ///     eprintln!("tensor-core scores through workgroup memory: {why}");
    /// }
    /// # Ok::<(), wgpu_flash_attn::FlashError>(())
    /// ```
    pub fn coop_elements_status(&self) -> std::result::Result<(), &str> {
        self.elements_probe
            .as_ref()
            .map(|_| ())
            .map_err(String::as_str)
    }

    /// Plans `problem` for this device and compiles (or fetches) its pipeline.
    pub fn plan(&self, problem: &Attention) -> Result<FlashPlan> {
        self.plan_with(problem, PlanOptions::default())
    }

    /// Like [`FlashContext::plan`], with some choices forced (the kernel, tiles, the packed f16
    /// path, scores in registers). Scores in registers forced where the context's probe refused
    /// them are a [`FlashError::Unavailable`] that carries the probe's reason.
    pub fn plan_with(&self, problem: &Attention, options: PlanOptions) -> Result<FlashPlan> {
        let plan = plan::plan_with(problem, &self.caps, options).map_err(|e| match e {
            FlashError::MissingFeature { what, .. } if what == plan::SCORES_IN_REGISTERS => {
                match self.coop_elements_status() {
                    Err(why) => FlashError::Unavailable {
                        what,
                        why: why.to_string(),
                    },
                    Ok(()) => e,
                }
            }
            e => e,
        })?;
        self.flash_plan(plan)
    }

    /// A plan made for this context's device, with its pipeline (from the cache or compiled) and
    /// the buffer of its sequence lengths and block table, which travel with every dispatch.
    pub(crate) fn flash_plan(&self, plan: Plan) -> Result<FlashPlan> {
        let words = forward::sequence_words(&plan.problem);
        let sequences = (!words.is_empty()).then(|| SequenceWords {
            buffer: self
                .device
                .create_buffer_init(&wgpu::util::BufferInitDescriptor {
                    label: Some("cu_seqlens and block table"),
                    contents: bytemuck::cast_slice(&words),
                    usage: wgpu::BufferUsages::STORAGE,
                }),
            first: 0,
        });
        self.flash_plan_in(plan, sequences)
    }

    /// Like [`FlashContext::flash_plan`] for a paged problem of fixed lengths, whose block table
    /// is already on the device: `table` from word `first` on (a KV-cache step's meta buffer).
    pub(crate) fn flash_plan_with_table(
        &self,
        plan: Plan,
        table: &wgpu::Buffer,
        first: u32,
    ) -> Result<FlashPlan> {
        // Without prefix sums the table is all the kernel reads there; a variable-length plan
        // would read them from the table.
        assert!(
            plan.problem.paged_kv.is_some() && plan.problem.cu_seqlens.is_none(),
            "flash_plan_with_table: a paged problem of fixed lengths"
        );
        let sequences = SequenceWords {
            buffer: table.clone(),
            first,
        };
        self.flash_plan_in(plan, Some(sequences))
    }

    fn flash_plan_in(&self, plan: Plan, sequences: Option<SequenceWords>) -> Result<FlashPlan> {
        let pipeline = self.pipeline(&forward::shader_text(&plan), forward::ENTRY, || {
            self.forward_pipeline_layout.clone()
        })?;
        Ok(FlashPlan {
            plan,
            pipeline,
            device: self.device.clone(),
            layout: self.forward_layout.clone(),
            placeholders: [self.placeholders[0].clone(), self.placeholders[1].clone()],
            sequences,
        })
    }

    /// `source` compiled to SPIR-V here, its element-access stubs replaced
    /// ([`crate::kernels::spirv_elements`]), for the driver to take as it is.
    #[cfg(not(target_arch = "wasm32"))]
    fn spirv_words(&self, source: &str, entry: &str) -> Result<Vec<u32>> {
        if !self
            .device
            .features()
            .contains(wgpu::Features::PASSTHROUGH_SHADERS)
        {
            return Err(FlashError::Wgpu("SPIR-V passthrough is not enabled".into()));
        }
        crate::kernels::spirv_elements::compile(
            source,
            entry,
            shader_checks_forced(),
            crate::kernels::coop::FRAGMENT_ELEMENTS,
        )
        .map_err(FlashError::Wgpu)
    }

    #[cfg(target_arch = "wasm32")]
    fn spirv_words(&self, _: &str, _: &str) -> Result<Vec<u32>> {
        Err(FlashError::Wgpu("no SPIR-V passthrough on the web".into()))
    }

    /// A compute pipeline for `text`, from the cache (found by the text's key, without rendering
    /// it) or freshly compiled with the pipeline layout `layout` makes (only then called: plans
    /// made every step find their pipelines cached). Compilation errors that wgpu reports
    /// synchronously (all native backends) come back as [`FlashError::Wgpu`].
    pub(crate) fn pipeline(
        &self,
        text: &ShaderText,
        entry: &'static str,
        layout: impl FnOnce() -> wgpu::PipelineLayout,
    ) -> Result<wgpu::ComputePipeline> {
        let key = (text.key(), entry);
        if let Some(p) = self.pipelines.lock().map_err(|_| poisoned())?.get(&key) {
            return Ok(p.clone());
        }
        let source = text.render();
        // Kernels with element access: their SPIR-V, and the workgroup size to pass it with.
        let spirv = match text.spirv {
            Some(threads) => Some((self.spirv_words(&source, entry)?, threads)),
            None => None,
        };
        let scope = self.device.push_error_scope(wgpu::ErrorFilter::Validation);
        let desc = wgpu::ShaderModuleDescriptor {
            label: Some(entry),
            source: wgpu::ShaderSource::Wgsl(source.as_str().into()),
        };
        // SAFETY: these are the crate's own kernels. They index workgroup and private arrays only
        // with indices bounded by construction (constants once loops are unrolled, or ranges set
        // by the tile constants), and guard every storage access by the tensor extents that the
        // plan validated against the bound buffers. The index clamps wgpu would add cost the
        // tensor-core kernel 10% of its speed on an H200, and half of it for some tiles
        // (BENCHMARKS.md). Loop bounding and the integer-division checks stay on.
        // WGPU_FLASH_ATTN_SHADER_CHECKS=1 puts the clamps back, for debugging.
        let checks = wgpu::ShaderRuntimeChecks {
            bounds_checks: shader_checks_forced(),
            ..wgpu::ShaderRuntimeChecks::checked()
        };
        let module = match spirv {
            #[cfg(not(target_arch = "wasm32"))]
            Some((words, threads)) => {
                crate::kernels::spirv_elements::module(&self.device, words, entry, threads)
            }
            _ => unsafe { self.device.create_shader_module_trusted(desc, checks) },
        };
        let layout = layout();
        let pipeline = self
            .device
            .create_compute_pipeline(&wgpu::ComputePipelineDescriptor {
                label: Some(entry),
                layout: Some(&layout),
                module: &module,
                entry_point: Some(entry),
                // Every kernel writes its workgroup memory before reading it, so the zero-fill that
                // wgpu would add is wasted work; on the GL backend it also becomes one giant array
                // constructor that took Mesa's GLSL compiler 15 to 55 s per kernel variant.
                compilation_options: wgpu::PipelineCompilationOptions {
                    zero_initialize_workgroup_memory: false,
                    ..Default::default()
                },
                cache: None,
            });
        if let Some(Some(err)) = scope.pop().now_or_never() {
            return Err(FlashError::Wgpu(err.to_string()));
        }
        self.pipelines
            .lock()
            .map_err(|_| poisoned())?
            .insert(key, pipeline.clone());
        Ok(pipeline)
    }

    /// Number of compiled pipelines in the cache.
    pub fn cached_pipelines(&self) -> usize {
        self.pipelines.lock().map(|m| m.len()).unwrap_or(0)
    }

    /// Convenience: uploads host tensors (f32 values, converted to the problem's dtype), runs the
    /// forward pass and reads O (and LSE, when the problem asks for it) back as f32.
    ///
    /// Each slice holds its tensor as the problem's strides lay it out, starting at element 0.
    /// Problems with ALiBi or sinks take their extra inputs through [`FlashContext::run_with`].
    pub async fn run(
        &self,
        problem: &Attention,
        q: &[f32],
        k: &[f32],
        v: &[f32],
    ) -> Result<AttentionOutput> {
        self.run_with(
            problem,
            HostInputs {
                q,
                k,
                v,
                ..Default::default()
            },
        )
        .await
    }

    /// [`FlashContext::run`] with every input the problem may need.
    pub async fn run_with(
        &self,
        problem: &Attention,
        inputs: HostInputs<'_>,
    ) -> Result<AttentionOutput> {
        let HostInputs {
            q,
            k,
            v,
            alibi_slopes,
            sinks,
            mask,
        } = inputs;
        let plan = self.plan(problem)?;
        let extras = [
            ("alibi_slopes", alibi_slopes, problem.alibi_len()),
            (
                "sinks",
                sinks,
                if problem.sinks {
                    problem.heads_q as u64
                } else {
                    0
                },
            ),
            ("mask", mask, problem.mask_len()),
        ];
        for (tensor, data, expected) in extras {
            let got = data.map_or(0, |d| d.len() as u64);
            if got != expected {
                return Err(FlashError::ShapeMismatch {
                    tensor,
                    expected,
                    got,
                });
            }
        }
        for (tensor, data) in [(Tensor::Q, q), (Tensor::K, k), (Tensor::V, v)] {
            let expected = problem.span_of(tensor);
            if data.len() as u64 != expected {
                return Err(FlashError::ShapeMismatch {
                    tensor: tensor.name(),
                    expected,
                    got: data.len() as u64,
                });
            }
        }
        let scope = self.device.push_error_scope(wgpu::ErrorFilter::Validation);
        let oom = self.device.push_error_scope(wgpu::ErrorFilter::OutOfMemory);
        let buffers = self.upload(problem, inputs);
        let mut encoder = self.device.create_command_encoder(&Default::default());
        plan.encode(&mut encoder, &buffers.attention())?;
        let (ob, lb) = (&buffers.out, &buffers.lse);
        let o_read = self.readback_buffer(&mut encoder, ob);
        let l_read = lb.as_ref().map(|lb| self.readback_buffer(&mut encoder, lb));
        self.queue.submit([encoder.finish()]);
        let oom_err = oom.pop().await;
        if let Some(err) = scope.pop().await.or(oom_err) {
            return Err(FlashError::Wgpu(err.to_string()));
        }
        let out_bytes = self.read(&o_read).await?;
        let out = from_dtype_bytes(&out_bytes, problem.dtype);
        let lse = match l_read {
            Some(b) => Some(bytemuck::pod_collect_to_vec(&self.read(&b).await?)),
            None => None,
        };
        Ok(AttentionOutput { out, lse })
    }

    /// Blocking [`FlashContext::run`] (not on wasm).
    #[cfg(not(target_arch = "wasm32"))]
    pub fn run_blocking(
        &self,
        problem: &Attention,
        q: &[f32],
        k: &[f32],
        v: &[f32],
    ) -> Result<AttentionOutput> {
        pollster::block_on(self.run(problem, q, k, v))
    }

    /// Device copies of the inputs (converted to the problem's dtype; the optional ones where
    /// given) and zeroed output and LSE buffers, ready for [`FlashPlan::encode`]. The lengths are
    /// the caller's to check ([`FlashContext::run_with`] does).
    pub(crate) fn upload(&self, problem: &Attention, inputs: HostInputs<'_>) -> ProblemBuffers {
        let init = |name, bytes: &[u8]| {
            self.device
                .create_buffer_init(&wgpu::util::BufferInitDescriptor {
                    label: Some(name),
                    contents: bytes,
                    usage: wgpu::BufferUsages::STORAGE,
                })
        };
        let tensor = |name, data: &[f32]| init(name, &to_dtype_bytes(data, problem.dtype));
        let f32s = |name, data: Option<&[f32]>| data.map(|d| init(name, bytemuck::cast_slice(d)));
        ProblemBuffers {
            q: tensor("q", inputs.q),
            k: tensor("k", inputs.k),
            v: tensor("v", inputs.v),
            out: self.tensor_buffer(problem, Tensor::O),
            lse: problem.with_lse.then(|| self.lse_buffer(problem)),
            alibi_slopes: f32s("alibi_slopes", inputs.alibi_slopes),
            sinks: f32s("sinks", inputs.sinks),
            mask: inputs.mask.map(|m| init("mask", &mask_bytes(problem, m))),
        }
    }

    /// A zeroed buffer (`STORAGE | COPY_SRC | COPY_DST`) sized for one tensor of `problem` as its
    /// strides lay it out, in the problem's dtype.
    pub fn tensor_buffer(&self, problem: &Attention, tensor: Tensor) -> wgpu::Buffer {
        let bytes = (problem.span_of(tensor) * problem.dtype.size()).next_multiple_of(4);
        self.storage_buffer(tensor.name(), bytes)
    }

    /// A zeroed buffer (`STORAGE | COPY_SRC | COPY_DST`) sized for the problem's LSE (f32).
    pub fn lse_buffer(&self, problem: &Attention) -> wgpu::Buffer {
        self.storage_buffer("lse", problem.lse_len() * 4)
    }

    /// Blocking [`FlashContext::run_with`] (not on wasm).
    #[cfg(not(target_arch = "wasm32"))]
    pub fn run_with_blocking(
        &self,
        problem: &Attention,
        inputs: HostInputs<'_>,
    ) -> Result<AttentionOutput> {
        pollster::block_on(self.run_with(problem, inputs))
    }

    pub(crate) fn storage_buffer(&self, label: &str, size: u64) -> wgpu::Buffer {
        self.device.create_buffer(&wgpu::BufferDescriptor {
            label: Some(label),
            size: size.max(4),
            usage: wgpu::BufferUsages::STORAGE
                | wgpu::BufferUsages::COPY_SRC
                | wgpu::BufferUsages::COPY_DST,
            mapped_at_creation: false,
        })
    }

    fn readback_buffer(
        &self,
        encoder: &mut wgpu::CommandEncoder,
        src: &wgpu::Buffer,
    ) -> wgpu::Buffer {
        let dst = self.device.create_buffer(&wgpu::BufferDescriptor {
            label: Some("readback"),
            size: src.size(),
            usage: wgpu::BufferUsages::MAP_READ | wgpu::BufferUsages::COPY_DST,
            mapped_at_creation: false,
        });
        encoder.copy_buffer_to_buffer(src, 0, &dst, 0, src.size());
        dst
    }

    /// Maps a `MAP_READ` buffer and copies its bytes out.
    pub async fn read(&self, buffer: &wgpu::Buffer) -> Result<Vec<u8>> {
        read_buffer(&self.device, buffer).await
    }
}

/// A layout entry for a storage buffer at `binding`, seen by compute shaders.
pub(crate) fn storage_entry(binding: u32, read_only: bool) -> wgpu::BindGroupLayoutEntry {
    wgpu::BindGroupLayoutEntry {
        binding,
        visibility: wgpu::ShaderStages::COMPUTE,
        ty: wgpu::BindingType::Buffer {
            ty: wgpu::BufferBindingType::Storage { read_only },
            has_dynamic_offset: false,
            min_binding_size: None,
        },
        count: None,
    }
}

/// Maps a `MAP_READ` buffer of `device` and copies its bytes out (waiting for the device first,
/// outside the browser).
pub(crate) async fn read_buffer(device: &wgpu::Device, buffer: &wgpu::Buffer) -> Result<Vec<u8>> {
    let (tx, rx) = futures::channel::oneshot::channel();
    buffer.slice(..).map_async(wgpu::MapMode::Read, move |r| {
        let _ = tx.send(r);
    });
    #[cfg(not(target_arch = "wasm32"))]
    device
        .poll(wgpu::PollType::wait_indefinitely())
        .map_err(|e| FlashError::Readback(e.to_string()))?;
    #[cfg(target_arch = "wasm32")]
    let _ = device;
    rx.await
        .map_err(|_| FlashError::Readback("the map callback was dropped".into()))?
        .map_err(|e| FlashError::Readback(e.to_string()))?;
    let bytes = buffer
        .slice(..)
        .get_mapped_range()
        .map_err(|e| FlashError::Readback(e.to_string()))?
        .to_vec();
    buffer.unmap();
    Ok(bytes)
}

/// Where a small f32 vector (LSE, ALiBi slopes, sinks) is bound.
struct VectorRange<'a> {
    buffer: &'a wgpu::Buffer,
    start: u64,
    size: u64,
    /// Index of its first element inside the binding.
    first: u32,
}

impl<'a> VectorRange<'a> {
    fn binding(&self) -> wgpu::BindingResource<'a> {
        wgpu::BindingResource::Buffer(wgpu::BufferBinding {
            buffer: self.buffer,
            offset: self.start,
            size: std::num::NonZeroU64::new(self.size.next_multiple_of(4)),
        })
    }
}

/// Checks an optional f32 vector of `len` elements against whether the problem needs it.
fn vector_range<'a>(
    tensor: &'static str,
    given: Option<TensorBuffer<'a>>,
    needed: bool,
    bytes: u64,
    elem_bytes: u64,
    option: &'static str,
    align: u64,
) -> Result<Option<VectorRange<'a>>> {
    let tb = match (needed, given) {
        (false, _) => return Ok(None),
        (true, None) => {
            return Err(FlashError::BadOption {
                what: tensor,
                got: "None".into(),
                why: match option {
                    "with_lse" => "the problem asks for LSE (with_lse): give an lse buffer",
                    "alibi" => "the problem uses ALiBi: give an alibi_slopes buffer",
                    "mask" => "the problem uses an attention mask or bias: give a mask buffer",
                    _ => "the problem uses attention sinks: give a sinks buffer",
                },
            })
        }
        (true, Some(tb)) => tb,
    };
    check_usage(tensor, tb.buffer)?;
    if tb.offset % 4 != 0 {
        return Err(FlashError::BadLayout {
            tensor,
            what: "byte offset",
            got: tb.offset,
            why: "must be a multiple of 4",
        });
    }
    let needed = tb.offset + bytes;
    if needed > tb.buffer.size() {
        return Err(FlashError::BufferTooSmall {
            tensor,
            needed,
            got: tb.buffer.size(),
        });
    }
    let start = tb.offset - tb.offset % align;
    Ok(Some(VectorRange {
        buffer: tb.buffer,
        start,
        size: needed - start,
        first: ((tb.offset - start) / elem_bytes) as u32,
    }))
}

fn poisoned() -> FlashError {
    FlashError::Wgpu("the pipeline cache lock was poisoned by a panic elsewhere".into())
}

fn caps_of(device: &wgpu::Device, adapter: &wgpu::Adapter) -> DeviceCaps {
    let f = device.features();
    let info = adapter.get_info();
    let coop_matrix_f16 = f.contains(wgpu::Features::EXPERIMENTAL_COOPERATIVE_MATRIX)
        && adapter.cooperative_matrix_properties().iter().any(|c| {
            use wgpu::wgt::CooperativeScalarType as T;
            (c.m_size, c.n_size, c.k_size) == (16, 16, 16)
                && c.ab_type == T::F16
                && c.cr_type == T::F32
        });
    DeviceCaps {
        name: info.name.clone(),
        backend: format!("{:?}", info.backend),
        driver: format!("{} {}", info.driver, info.driver_info)
            .trim()
            .to_string(),
        shader_f16: f.contains(wgpu::Features::SHADER_F16),
        timestamp_query: f.contains(wgpu::Features::TIMESTAMP_QUERY),
        subgroup_sizes: f
            .contains(wgpu::Features::SUBGROUP)
            .then_some((info.subgroup_min_size, info.subgroup_max_size)),
        coop_matrix_f16,
        subgroup_barrier: f.contains(wgpu::Features::SUBGROUP_BARRIER),
        compute_units: crate::kvcache::estimate_compute_units(&info.name),
        vendor: info.vendor,
        device_type: format!("{:?}", info.device_type),
        ..DeviceCaps::from_limits(&device.limits())
    }
}

/// The bytes of a mask buffer from f32 host values: f32 bias values as they are, or for a boolean
/// mask one byte per element (1 keeps, 0 masks), padded to whole words.
pub fn mask_bytes(problem: &Attention, values: &[f32]) -> Vec<u8> {
    match problem.mask.map(|m| m.kind) {
        Some(MaskKind::Boolean) => {
            let mut b: Vec<u8> = values.iter().map(|&x| u8::from(x != 0.0)).collect();
            b.resize(b.len().next_multiple_of(4), 0);
            b
        }
        _ => bytemuck::cast_slice(values).to_vec(),
    }
}

/// Converts f32 host values to the bytes of a storage type.
pub fn to_dtype_bytes(data: &[f32], dtype: DType) -> Vec<u8> {
    match dtype {
        DType::F32 => bytemuck::cast_slice(data).to_vec(),
        DType::F16 => {
            let h: Vec<half::f16> = data.iter().map(|&x| half::f16::from_f32(x)).collect();
            bytemuck::cast_slice(&h).to_vec()
        }
        DType::BF16 => {
            let h: Vec<half::bf16> = data.iter().map(|&x| half::bf16::from_f32(x)).collect();
            bytemuck::cast_slice(&h).to_vec()
        }
    }
}

/// Converts bytes of a storage type to f32 values (a trailing partial element is ignored).
pub fn from_dtype_bytes(bytes: &[u8], dtype: DType) -> Vec<f32> {
    match dtype {
        DType::F32 => bytes
            .chunks_exact(4)
            .map(|c| f32::from_le_bytes([c[0], c[1], c[2], c[3]]))
            .collect(),
        DType::F16 => bytes
            .chunks_exact(2)
            .map(|c| half::f16::from_le_bytes([c[0], c[1]]).to_f32())
            .collect(),
        DType::BF16 => bytes
            .chunks_exact(2)
            .map(|c| half::bf16::from_le_bytes([c[0], c[1]]).to_f32())
            .collect(),
    }
}

/// Host data for [`FlashContext::run_with`], as f32 whatever the storage type.
#[derive(Debug, Clone, Copy, Default)]
pub struct HostInputs<'a> {
    /// Queries, laid out by the problem's strides.
    pub q: &'a [f32],
    /// Keys.
    pub k: &'a [f32],
    /// Values.
    pub v: &'a [f32],
    /// ALiBi slopes (`heads_q` or `batch * heads_q` values) when the problem uses ALiBi.
    pub alibi_slopes: Option<&'a [f32]>,
    /// Sink logits (`heads_q` values) when the problem uses sinks.
    pub sinks: Option<&'a [f32]>,
    /// The mask or bias (`Attention::mask_len` values) when the problem has one: bias values, or
    /// for a boolean mask 0 (masked) and anything else (kept).
    pub mask: Option<&'a [f32]>,
}

/// The buffers of one forward pass, owned: what [`FlashContext::upload`] makes.
pub(crate) struct ProblemBuffers {
    pub(crate) q: wgpu::Buffer,
    pub(crate) k: wgpu::Buffer,
    pub(crate) v: wgpu::Buffer,
    pub(crate) out: wgpu::Buffer,
    pub(crate) lse: Option<wgpu::Buffer>,
    pub(crate) alibi_slopes: Option<wgpu::Buffer>,
    pub(crate) sinks: Option<wgpu::Buffer>,
    pub(crate) mask: Option<wgpu::Buffer>,
}

impl ProblemBuffers {
    /// Borrowed views for [`FlashPlan::encode`].
    pub(crate) fn attention(&self) -> AttentionBuffers<'_> {
        AttentionBuffers {
            q: (&self.q).into(),
            k: (&self.k).into(),
            v: (&self.v).into(),
            out: (&self.out).into(),
            lse: self.lse.as_ref().map(Into::into),
            alibi_slopes: self.alibi_slopes.as_ref().map(Into::into),
            sinks: self.sinks.as_ref().map(Into::into),
            mask: self.mask.as_ref().map(Into::into),
        }
    }
}

/// Results of [`FlashContext::run`], as f32 whatever the storage type.
#[derive(Debug, Clone, PartialEq)]
pub struct AttentionOutput {
    /// O, laid out by the problem's output strides.
    pub out: Vec<f32>,
    /// Natural-log log-sum-exp per (batch, head, query) (per (head, token) for a variable-length
    /// batch), when asked for; -inf for a row that sees no key (the sink, with sinks).
    pub lse: Option<Vec<f32>>,
}

/// A buffer and the byte offset where a tensor starts in it.
#[derive(Debug, Clone, Copy)]
pub struct TensorBuffer<'a> {
    /// The buffer (needs `STORAGE` usage).
    pub buffer: &'a wgpu::Buffer,
    /// Byte offset of element 0 (a multiple of 4 elements).
    pub offset: u64,
}

impl<'a> From<&'a wgpu::Buffer> for TensorBuffer<'a> {
    fn from(buffer: &'a wgpu::Buffer) -> Self {
        TensorBuffer { buffer, offset: 0 }
    }
}

/// The caller's buffers for one forward pass. Q, K and V may share a buffer; O and LSE must not
/// overlap anything else.
#[derive(Debug, Clone, Copy)]
pub struct AttentionBuffers<'a> {
    /// Queries.
    pub q: TensorBuffer<'a>,
    /// Keys.
    pub k: TensorBuffer<'a>,
    /// Values.
    pub v: TensorBuffer<'a>,
    /// Output, written in the problem's dtype.
    pub out: TensorBuffer<'a>,
    /// Row log-sum-exp (f32, (batch, heads_q, seq_q), or (heads_q, total_q) for a variable-length
    /// batch); required when the problem asks for it.
    pub lse: Option<TensorBuffer<'a>>,
    /// ALiBi slopes (f32, `heads_q` or `batch * heads_q` values); required with ALiBi.
    pub alibi_slopes: Option<TensorBuffer<'a>>,
    /// Sink logits (f32, `heads_q` values); required with attention sinks.
    pub sinks: Option<TensorBuffer<'a>>,
    /// The attention mask or bias ([`crate::AttnMask`]); required when the problem has one.
    pub mask: Option<TensorBuffer<'a>>,
}

impl<'a> AttentionBuffers<'a> {
    /// Q, K, V and O, with no optional buffers.
    pub fn new(
        q: impl Into<TensorBuffer<'a>>,
        k: impl Into<TensorBuffer<'a>>,
        v: impl Into<TensorBuffer<'a>>,
        out: impl Into<TensorBuffer<'a>>,
    ) -> Self {
        AttentionBuffers {
            q: q.into(),
            k: k.into(),
            v: v.into(),
            out: out.into(),
            lse: None,
            alibi_slopes: None,
            sinks: None,
            mask: None,
        }
    }

    /// Adds the LSE output.
    pub fn lse(mut self, lse: impl Into<TensorBuffer<'a>>) -> Self {
        self.lse = Some(lse.into());
        self
    }

    /// Adds the ALiBi slopes.
    pub fn alibi_slopes(mut self, slopes: impl Into<TensorBuffer<'a>>) -> Self {
        self.alibi_slopes = Some(slopes.into());
        self
    }

    /// Adds the sink logits.
    pub fn sinks(mut self, sinks: impl Into<TensorBuffer<'a>>) -> Self {
        self.sinks = Some(sinks.into());
        self
    }

    /// Adds the attention mask or bias.
    pub fn mask(mut self, mask: impl Into<TensorBuffer<'a>>) -> Self {
        self.mask = Some(mask.into());
        self
    }
}

/// A plan with its compiled pipeline, ready to record into command encoders.
#[derive(Debug, Clone)]
pub struct FlashPlan {
    plan: Plan,
    pipeline: wgpu::ComputePipeline,
    device: wgpu::Device,
    layout: wgpu::BindGroupLayout,
    placeholders: [wgpu::Buffer; 2],
    /// Prefix sums of a variable-length batch, then the block table of paged K/V, in a buffer of
    /// their own or inside another.
    sequences: Option<SequenceWords>,
}

/// Where a forward plan's sequence words ([`forward::sequence_words`]) are on the device: in a
/// buffer of their own, or inside another one (one row of a KV-cache step's block table, in its
/// meta buffer).
#[derive(Debug, Clone)]
struct SequenceWords {
    buffer: wgpu::Buffer,
    /// The word they start at.
    first: u32,
}

impl FlashPlan {
    /// The plan: kernel variant, tiles, grid, bytes.
    pub fn plan(&self) -> &Plan {
        &self.plan
    }

    /// Records the forward pass into the caller's encoder.
    pub fn encode(
        &self,
        encoder: &mut wgpu::CommandEncoder,
        buffers: &AttentionBuffers,
    ) -> Result<()> {
        self.encode_timed(encoder, buffers, None)
    }

    /// Like [`FlashPlan::encode`], writing GPU timestamps at the start and end of the pass.
    pub fn encode_timed<'a>(
        &'a self,
        encoder: &mut wgpu::CommandEncoder,
        buffers: &AttentionBuffers<'a>,
        timestamp_writes: Option<wgpu::ComputePassTimestampWrites>,
    ) -> Result<()> {
        let p = &self.plan.problem;
        let align = self.device.limits().min_storage_buffer_offset_alignment as u64;
        let ranges = crate::kernels::tensor_ranges(p, buffers, self.plan.storage, align)?;
        // (name, buffer, needed, bytes, bytes per element, option that asks for it)
        let lse = vector_range(
            "lse",
            buffers.lse,
            p.with_lse,
            p.lse_len() * 4,
            4,
            "with_lse",
            align,
        )?;
        let alibi = vector_range(
            "alibi_slopes",
            buffers.alibi_slopes,
            p.alibi.is_some(),
            p.alibi_len() * 4,
            4,
            "alibi",
            align,
        )?;
        let sinks = vector_range(
            "sinks",
            buffers.sinks,
            p.sinks,
            p.heads_q as u64 * 4,
            4,
            "sinks",
            align,
        )?;
        let mask_elem = match p.mask.map(|m| m.kind) {
            Some(MaskKind::Boolean) => 1,
            _ => 4,
        };
        let mask = vector_range(
            "mask",
            buffers.mask,
            p.mask.is_some(),
            p.mask_bytes(),
            mask_elem,
            "mask",
            align,
        )?;
        if let Some(lse) = &lse {
            let tensors = [
                buffers.q.buffer,
                buffers.k.buffer,
                buffers.v.buffer,
                buffers.out.buffer,
            ];
            let inputs = [&alibi, &sinks, &mask]
                .into_iter()
                .flatten()
                .map(|r| r.buffer);
            if tensors.into_iter().chain(inputs).any(|b| b == lse.buffer) {
                return Err(FlashError::BadLayout {
                    tensor: "lse",
                    what: "buffer",
                    got: 1,
                    why: "the LSE buffer must not also hold another tensor of the same pass",
                });
            }
        }
        let first = |r: &Option<VectorRange>| r.as_ref().map_or(0, |r| r.first);
        let params = forward::params(
            &self.plan,
            ranges.map(|r| r.first4),
            forward::ExtraOffsets {
                lse: first(&lse),
                alibi: first(&alibi),
                sinks: first(&sinks),
                // The sequence words take the mask's slot: a problem with them has no mask.
                mask: self.sequences.as_ref().map_or(first(&mask), |w| w.first),
            },
        );
        let scope = self.device.push_error_scope(wgpu::ErrorFilter::Validation);
        let uniform = self
            .device
            .create_buffer_init(&wgpu::util::BufferInitDescriptor {
                label: Some("flash params"),
                contents: bytemuck::bytes_of(&params),
                usage: wgpu::BufferUsages::UNIFORM,
            });
        let resource = |r: &Option<VectorRange<'a>>, slot: usize| match r {
            Some(r) => r.binding(),
            None => self.placeholders[slot].as_entire_binding(),
        };
        let bind_group = crate::kernels::bind_group(
            &self.device,
            &self.layout,
            &uniform,
            buffers,
            &ranges,
            [
                resource(&lse, 0),
                resource(&alibi, 1),
                resource(&sinks, 1),
                match &self.sequences {
                    Some(w) => w.buffer.as_entire_binding(),
                    None => resource(&mask, 1),
                },
            ],
        );
        {
            let mut pass = encoder.begin_compute_pass(&wgpu::ComputePassDescriptor {
                label: Some("flash forward"),
                timestamp_writes,
            });
            pass.set_pipeline(&self.pipeline);
            pass.set_bind_group(0, &bind_group, &[]);
            let [x, y, z] = self.plan.grid;
            pass.dispatch_workgroups(x, y, z);
        }
        if let Some(Some(err)) = scope.pop().now_or_never() {
            return Err(FlashError::Wgpu(err.to_string()));
        }
        Ok(())
    }
}

pub(crate) fn check_usage(tensor: &'static str, buffer: &wgpu::Buffer) -> Result<()> {
    if !buffer.usage().contains(wgpu::BufferUsages::STORAGE) {
        return Err(FlashError::BadLayout {
            tensor,
            what: "buffer usage bits",
            got: buffer.usage().bits() as u64,
            why: "the buffer needs BufferUsages::STORAGE",
        });
    }
    Ok(())
}

/// Whether `WGPU_FLASH_ATTN_SHADER_CHECKS=1` asks for wgpu's bounds checks in the kernels.
fn shader_checks_forced() -> bool {
    std::env::var("WGPU_FLASH_ATTN_SHADER_CHECKS").is_ok_and(|v| v == "1")
}
