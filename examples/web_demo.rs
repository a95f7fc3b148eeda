//! Attention on the browser's GPU through WebGPU, checked against the f64 oracle run in wasm.
//!
//! `bash scripts/web-demo.sh` builds this example for `wasm32-unknown-unknown`, binds it with
//! wasm-bindgen next to `examples/web/index.html` and serves the page at <http://localhost:8000>.
//! The page shows the adapter and its limits, the plan, the flash kernel against the materialized
//! baseline for a few sizes (both checked against `reference`), a heatmap of one head's attention
//! probabilities and a chart of the timings. The query string sets the sweep, e.g.
//! `?sizes=256,1024&heads=8&dim=64&dtype=f16&causal=1&reps=5`.
//!
//! Everything the page shows is also published in `window.flashDemo` (status, adapter, plan,
//! results with max errors against the oracle, heatmap), which the headless-browser test reads.

#[cfg(not(target_arch = "wasm32"))]
fn main() {
    println!(
        "This example runs in a browser: `bash scripts/web-demo.sh` builds it for wasm32 and \
         serves the page at http://localhost:8000"
    );
}

#[cfg(target_arch = "wasm32")]
fn main() {
    web::install_panic_hook();
    wasm_bindgen_futures::spawn_local(async {
        if let Err(e) = web::run().await {
            web::publish("error", &e.into());
        }
    });
}

#[cfg(target_arch = "wasm32")]
mod web {
    use std::sync::Arc;

    use js_sys::{Array, Float32Array, Object, Reflect};
    use wasm_bindgen::prelude::*;
    use wgpu::util::DeviceExt;
    use wgpu_flash_attn::kernels::materialized::Materialized;
    use wgpu_flash_attn::{
        context, reference, Attention, AttentionBuffers, DType, FlashContext, Tensor,
    };

    #[wasm_bindgen]
    extern "C" {
        /// Defined by `index.html`: stores `value` as `window.flashDemo[key]` and redraws. Key
        /// "error" also sets the status to "error".
        #[wasm_bindgen(js_name = flashDemoPublish)]
        pub fn publish(key: &str, value: &JsValue);
        #[wasm_bindgen(js_namespace = performance)]
        fn now() -> f64;
    }

    /// Panics end up on the page (and in `window.flashDemo.error`) instead of as "unreachable".
    pub fn install_panic_hook() {
        std::panic::set_hook(Box::new(|info| publish("error", &info.to_string().into())));
    }

    /// The sweep, from `window.flashDemoConfig` (set by the page from its query string).
    struct Config {
        sizes: Vec<u32>,
        heads: u32,
        head_dim: u32,
        dtype: DType,
        causal: bool,
        reps: u32,
    }

    fn config() -> Config {
        let cfg = Reflect::get(&js_sys::global(), &"flashDemoConfig".into())
            .unwrap_or(JsValue::UNDEFINED);
        let get = |key: &str| {
            Reflect::get(&cfg, &key.into())
                .ok()
                .filter(|v| !v.is_undefined())
        };
        let num = |key: &str, default: u32| {
            get(key)
                .and_then(|v| v.as_f64())
                .map_or(default, |x| x as u32)
        };
        let sizes = get("sizes")
            .map(|v| {
                Array::from(&v)
                    .iter()
                    .filter_map(|x| x.as_f64())
                    .map(|x| x as u32)
                    .collect()
            })
            .unwrap_or_else(|| vec![256, 512, 1024, 2048, 4096]);
        let dtype = match get("dtype").and_then(|v| v.as_string()).as_deref() {
            Some("f16") => DType::F16,
            Some("bf16") => DType::BF16,
            _ => DType::F32,
        };
        Config {
            sizes,
            heads: num("heads", 8).max(1),
            head_dim: num("dim", 64),
            dtype,
            causal: get("causal").is_some_and(|v| v.is_truthy()),
            reps: num("reps", 5).max(1),
        }
    }

    /// A JS object from (key, value) pairs.
    fn obj(fields: &[(&str, JsValue)]) -> JsValue {
        let o = Object::new();
        for (k, v) in fields {
            Reflect::set(&o, &(*k).into(), v).expect("setting a field of a fresh object");
        }
        o.into()
    }

    fn n(x: impl Into<f64>) -> JsValue {
        JsValue::from_f64(x.into())
    }

    /// Largest |error| allowed for the demo's inputs (values below 1 in magnitude), by storage type.
    fn bound(dtype: DType) -> f64 {
        match dtype {
            DType::F32 => 1e-4,
            DType::F16 => 5e-3,
            DType::BF16 => 4e-2,
        }
    }

    pub async fn run() -> Result<(), String> {
        let cfg = config();
        publish("status", &"requesting a WebGPU adapter".into());
        let instance = wgpu::Instance::new(wgpu::InstanceDescriptor::new_without_display_handle());
        let adapter = instance
            .request_adapter(&wgpu::RequestAdapterOptions {
                power_preference: wgpu::PowerPreference::HighPerformance,
                ..Default::default()
            })
            .await
            .map_err(|e| format!("this browser offers no WebGPU adapter ({e})"))?;
        // Asks for the adapter's own limits (not WebGPU's defaults) and the features it offers.
        let ctx = FlashContext::from_adapter(&adapter)
            .await
            .map_err(|e| e.to_string())?;
        ctx.device().on_uncaptured_error(Arc::new(|e: wgpu::Error| {
            publish("error", &format!("WebGPU error: {e}").into())
        }));
        publish_adapter(&adapter, &ctx);

        publish("status", &"heatmap of one head".into());
        heatmap(&ctx).await?;

        let results = Array::new();
        for (i, &size) in cfg.sizes.iter().enumerate() {
            publish(
                "status",
                &format!("N = {size} ({} of {})", i + 1, cfg.sizes.len()).into(),
            );
            let problem = Attention::new(1, cfg.heads, cfg.heads, size, size, cfg.head_dim)
                .dtype(cfg.dtype)
                .causal(cfg.causal);
            if i == 0 {
                publish_plan(&ctx, &problem)?;
            }
            results.push(&compare(&ctx, &problem, cfg.reps, 10 + i as u64).await?);
            publish("results", &results);
        }
        publish("status", &"done".into());
        Ok(())
    }

    fn publish_adapter(adapter: &wgpu::Adapter, ctx: &FlashContext) {
        let info = adapter.get_info();
        let offered = adapter.features();
        let (al, dl) = (adapter.limits(), ctx.device().limits());
        let limit = |name: &str, a: u64, d: u64, default: u64| {
            obj(&[
                ("name", name.into()),
                ("adapter", n(a as f64)),
                ("device", n(d as f64)),
                ("webgpu_default", n(default as f64)),
            ])
        };
        let w = wgpu::Limits::default();
        let limits: Array = [
            limit(
                "maxComputeWorkgroupStorageSize",
                al.max_compute_workgroup_storage_size.into(),
                dl.max_compute_workgroup_storage_size.into(),
                w.max_compute_workgroup_storage_size.into(),
            ),
            limit(
                "maxComputeInvocationsPerWorkgroup",
                al.max_compute_invocations_per_workgroup.into(),
                dl.max_compute_invocations_per_workgroup.into(),
                w.max_compute_invocations_per_workgroup.into(),
            ),
            limit(
                "maxComputeWorkgroupsPerDimension",
                al.max_compute_workgroups_per_dimension.into(),
                dl.max_compute_workgroups_per_dimension.into(),
                w.max_compute_workgroups_per_dimension.into(),
            ),
            limit(
                "maxStorageBufferBindingSize",
                al.max_storage_buffer_binding_size,
                dl.max_storage_buffer_binding_size,
                w.max_storage_buffer_binding_size,
            ),
            limit(
                "maxBufferSize",
                al.max_buffer_size,
                dl.max_buffer_size,
                w.max_buffer_size,
            ),
        ]
        .into_iter()
        .collect();
        let caps = ctx.caps();
        let feature = |name: &str, offered: bool, used: bool| {
            obj(&[
                ("name", name.into()),
                ("offered", offered.into()),
                ("used", used.into()),
            ])
        };
        let features: Array = [
            feature(
                "shader-f16",
                offered.contains(wgpu::Features::SHADER_F16),
                caps.shader_f16,
            ),
            feature(
                "timestamp-query",
                offered.contains(wgpu::Features::TIMESTAMP_QUERY),
                caps.timestamp_query,
            ),
            feature(
                "subgroups",
                offered.contains(wgpu::Features::SUBGROUP),
                caps.subgroup_sizes.is_some(),
            ),
        ]
        .into_iter()
        .collect();
        publish(
            "adapter",
            &obj(&[
                ("name", info.name.as_str().into()),
                ("vendor", n(info.vendor)),
                ("device", n(info.device)),
                (
                    "driver",
                    format!("{} {}", info.driver, info.driver_info)
                        .trim()
                        .into(),
                ),
                ("backend", format!("{:?}", info.backend).into()),
                ("device_type", format!("{:?}", info.device_type).into()),
                (
                    "subgroup_sizes",
                    format!("{}..{}", info.subgroup_min_size, info.subgroup_max_size).into(),
                ),
                ("features", features.into()),
                ("limits", limits.into()),
            ]),
        );
    }

    fn publish_plan(ctx: &FlashContext, problem: &Attention) -> Result<(), String> {
        let plan = ctx.plan(problem).map_err(|e| e.to_string())?;
        let p = plan.plan();
        let t = p.tiles;
        publish(
            "plan",
            &obj(&[
                ("kernel", p.kernel.name().into()),
                ("storage", p.storage.name().into()),
                (
                    "tiles",
                    format!(
                        "{}x{} (block_m x block_n), {}x{} threads",
                        t.block_m, t.block_n, t.threads_x, t.threads_y
                    )
                    .into(),
                ),
                ("workgroup_bytes", n(p.workgroup_bytes)),
                ("workgroup_limit", n(ctx.caps().max_workgroup_storage_bytes)),
                ("grid", format!("{:?}", p.grid).into()),
            ]),
        );
        Ok(())
    }

    /// Deterministic values in [-1, 1) from a small xorshift generator.
    fn random(len: u64, seed: u64) -> Vec<f32> {
        let mut s = seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1;
        (0..len)
            .map(|_| {
                s ^= s << 13;
                s ^= s >> 7;
                s ^= s << 17;
                (s >> 40) as f32 / (1u64 << 23) as f32 - 1.0
            })
            .collect()
    }

    /// A causal head whose queries and keys carry rotary-style position features, so the
    /// probabilities show structure (a band along the diagonal that fades with distance) rather
    /// than noise, and whose first key attracts every query a little (an "attention sink"). The
    /// probabilities come from the GPU: P = exp(scale * q.k - LSE) with the kernel's LSE, the way
    /// FlashAttention's backward pass recomputes them; each row must sum to 1.
    async fn heatmap(ctx: &FlashContext) -> Result<(), String> {
        let (seq, d) = (64u32, 32u32);
        let problem = Attention::new(1, 1, 1, seq, seq, d)
            .causal(true)
            .with_lse(true);
        let noise = random(2 * (seq * d) as u64, 7);
        let (qn, kn) = noise.split_at((seq * d) as usize);
        // Channel pairs (cos, sin) of position * frequency, frequencies falling geometrically,
        // plus noise; the last two channels are 1 in every query and 3 in key 0 only (the sink).
        let wave = |x: u32, noise: &[f32]| {
            let (i, c) = (x / d, x % d);
            let angle = i as f32 * 0.9 * 0.85f32.powi((c / 2) as i32);
            let wave = if c % 2 == 0 { angle.cos() } else { angle.sin() };
            wave + 0.3 * noise[x as usize]
        };
        let sink_channel = |x: u32| x % d >= d - 2;
        let q: Vec<f32> = (0..seq * d)
            .map(|x| if sink_channel(x) { 1.0 } else { wave(x, qn) })
            .collect();
        let k: Vec<f32> = (0..seq * d)
            .map(|x| match (sink_channel(x), x / d) {
                (true, 0) => 3.0,
                (true, _) => 0.0,
                _ => wave(x, kn),
            })
            .collect();
        let v = random((seq * d) as u64, 8);
        let got = ctx
            .run(&problem, &q, &k, &v)
            .await
            .map_err(|e| e.to_string())?;
        let lse = got.lse.as_deref().ok_or("the kernel returned no LSE")?;
        let want = reference::attention(&problem, &q, &k, &v);
        let max_err = max_abs_err(&got.out, &want.out);
        let scale = problem.scale() as f64;
        let mut p = vec![0f32; (seq * seq) as usize];
        let mut row_sum_err = 0f64;
        for i in 0..seq {
            let mut sum = 0f64;
            for j in 0..seq {
                if reference::visible(&problem, i, j) {
                    let dot: f64 = (0..d)
                        .map(|c| q[(i * d + c) as usize] as f64 * k[(j * d + c) as usize] as f64)
                        .sum();
                    let x = (scale * dot - lse[i as usize] as f64).exp();
                    p[(i * seq + j) as usize] = x as f32;
                    sum += x;
                }
            }
            row_sum_err = row_sum_err.max((sum - 1.0).abs());
        }
        publish(
            "heatmap",
            &obj(&[
                ("n", n(seq)),
                ("head_dim", n(d)),
                ("values", Float32Array::from(p.as_slice()).into()),
                ("row_sum_err", n(row_sum_err)),
                ("max_err", n(max_err)),
                ("bound", n(bound(DType::F32))),
            ]),
        );
        Ok(())
    }

    fn max_abs_err(got: &[f32], want: &[f64]) -> f64 {
        if got.len() != want.len() {
            return f64::NAN;
        }
        got.iter()
            .zip(want)
            .map(|(g, w)| (*g as f64 - w).abs())
            // NaN must not hide behind max: propagate it.
            .fold(0.0, |m, e| {
                if e.is_nan() || m.is_nan() {
                    f64::NAN
                } else {
                    m.max(e)
                }
            })
    }

    /// The rows checked against the oracle: all of them while that stays cheap in wasm, else a
    /// spread of rows in every head (first, last and evenly spaced ones).
    fn rows_to_check(p: &Attention) -> Vec<(u32, u32, u32)> {
        let work = p.heads_q as u64 * p.seq_q as u64 * p.seq_kv as u64 * p.head_dim as u64;
        if work <= 1 << 27 {
            return (0..p.heads_q)
                .flat_map(|h| (0..p.seq_q).map(move |i| (0, h, i)))
                .collect();
        }
        let per_head = 32u32.min(p.seq_q);
        (0..p.heads_q)
            .flat_map(|h| {
                (0..per_head).map(move |r| {
                    let i = if r + 1 == per_head {
                        p.seq_q - 1
                    } else {
                        (r as u64 * p.seq_q as u64 / per_head as u64) as u32 + h % 7
                    };
                    (0, h, i.min(p.seq_q - 1))
                })
            })
            .collect()
    }

    /// Max |O - oracle| over `rows`, with O read in the problem's (batch, seq, heads, dim) layout.
    fn rows_err(
        p: &Attention,
        out: &[f32],
        rows: &[(u32, u32, u32)],
        want: &[reference::Row],
    ) -> f64 {
        let d = p.head_dim as usize;
        let mut m = 0f64;
        for (&(b, h, i), (o, _)) in rows.iter().zip(want) {
            let at = ((b as usize * p.seq_q as usize + i as usize) * p.heads_q as usize
                + h as usize)
                * d;
            let Some(row) = out.get(at..at + d) else {
                return f64::NAN;
            };
            for (g, w) in row.iter().zip(o) {
                let e = (*g as f64 - w).abs();
                if e.is_nan() {
                    return f64::NAN;
                }
                m = m.max(e);
            }
        }
        m
    }

    /// Times the recorded pass `reps` times (GPU timestamps when the device has them, else the
    /// wall clock from submit to completion); returns the times in ms and which clock measured them.
    async fn time(
        ctx: &FlashContext,
        reps: u32,
        record: impl Fn(&mut wgpu::CommandEncoder, Option<&wgpu::QuerySet>) -> Result<(), String>,
    ) -> Result<(Vec<f64>, &'static str), String> {
        let device = ctx.device();
        let timer = ctx.caps().timestamp_query.then(|| {
            let set = device.create_query_set(&wgpu::QuerySetDescriptor {
                label: Some("pass times"),
                ty: wgpu::QueryType::Timestamp,
                count: 2,
            });
            let resolve = device.create_buffer(&wgpu::BufferDescriptor {
                label: Some("timestamps"),
                size: 16,
                usage: wgpu::BufferUsages::QUERY_RESOLVE | wgpu::BufferUsages::COPY_SRC,
                mapped_at_creation: false,
            });
            let read = device.create_buffer(&wgpu::BufferDescriptor {
                label: Some("timestamps read"),
                size: 16,
                usage: wgpu::BufferUsages::MAP_READ | wgpu::BufferUsages::COPY_DST,
                mapped_at_creation: false,
            });
            (set, resolve, read)
        });
        let mut times = Vec::new();
        for _ in 0..reps {
            let mut encoder = device.create_command_encoder(&Default::default());
            record(&mut encoder, timer.as_ref().map(|t| &t.0))?;
            if let Some((set, resolve, read)) = &timer {
                encoder.resolve_query_set(set, 0..2, resolve, 0);
                encoder.copy_buffer_to_buffer(resolve, 0, read, 0, 16);
            }
            let start = now();
            ctx.queue().submit([encoder.finish()]);
            let (tx, rx) = futures::channel::oneshot::channel();
            ctx.queue().on_submitted_work_done(move || {
                let _ = tx.send(());
            });
            rx.await.map_err(|_| "the GPU never finished the pass")?;
            let wall = now() - start;
            times.push(match &timer {
                Some((_, _, read)) => {
                    let bytes = ctx.read(read).await.map_err(|e| e.to_string())?;
                    let t: &[u64] = bytemuck::cast_slice(&bytes);
                    t[1].saturating_sub(t[0]) as f64 * ctx.queue().get_timestamp_period() as f64
                        / 1e6
                }
                None => wall,
            });
        }
        let clock = if timer.is_some() {
            "GPU timestamps"
        } else {
            "wall clock"
        };
        Ok((times, clock))
    }

    /// Copies `src` out of the GPU and converts it from the problem's storage type.
    async fn read_tensor(
        ctx: &FlashContext,
        p: &Attention,
        src: &wgpu::Buffer,
    ) -> Result<Vec<f32>, String> {
        let read = ctx.device().create_buffer(&wgpu::BufferDescriptor {
            label: Some("readback"),
            size: src.size(),
            usage: wgpu::BufferUsages::MAP_READ | wgpu::BufferUsages::COPY_DST,
            mapped_at_creation: false,
        });
        let mut encoder = ctx.device().create_command_encoder(&Default::default());
        encoder.copy_buffer_to_buffer(src, 0, &read, 0, src.size());
        ctx.queue().submit([encoder.finish()]);
        let bytes = ctx.read(&read).await.map_err(|e| e.to_string())?;
        Ok(context::from_dtype_bytes(&bytes, p.dtype))
    }

    /// An output buffer filled with NaN, so a value the kernel never wrote cannot pass the check.
    fn poisoned_output(ctx: &FlashContext, p: &Attention) -> wgpu::Buffer {
        let out = ctx.tensor_buffer(p, Tensor::O);
        let mut nan =
            context::to_dtype_bytes(&vec![f32::NAN; p.span_of(Tensor::O) as usize], p.dtype);
        nan.resize(out.size() as usize, 0);
        ctx.queue().write_buffer(&out, 0, &nan);
        out
    }

    fn median(mut v: Vec<f64>) -> f64 {
        v.sort_by(f64::total_cmp);
        v.get(v.len() / 2).copied().unwrap_or(f64::NAN)
    }

    /// Flash attention and the materialized baseline on one problem: timings, memory and the
    /// largest error of each against the oracle.
    async fn compare(
        ctx: &FlashContext,
        p: &Attention,
        reps: u32,
        seed: u64,
    ) -> Result<JsValue, String> {
        let device = ctx.device();
        // Rounded to the storage type first, so the oracle sees exactly what the GPU reads.
        let [q, k, v] = [Tensor::Q, Tensor::K, Tensor::V].map(|t| {
            let x = random(p.span_of(t), seed * 3 + t as u64);
            context::from_dtype_bytes(&context::to_dtype_bytes(&x, p.dtype), p.dtype)
        });
        let upload = |data: &[f32]| {
            device.create_buffer_init(&wgpu::util::BufferInitDescriptor {
                label: Some("input"),
                contents: &context::to_dtype_bytes(data, p.dtype),
                usage: wgpu::BufferUsages::STORAGE,
            })
        };
        let (qb, kb, vb) = (upload(&q), upload(&k), upload(&v));
        let rows = rows_to_check(p);
        let want = reference::rows(p, &q, &k, &v, &rows);
        let flops = p.flops() as f64;
        let summary = |times: Vec<f64>, clock: &str, err: f64, scratch: u64| {
            let ms = median(times.clone());
            obj(&[
                ("ms", n(ms)),
                (
                    "min_ms",
                    n(times.iter().cloned().fold(f64::INFINITY, f64::min)),
                ),
                ("gflops", n(flops / ms / 1e6)),
                ("clock", clock.into()),
                ("max_err", n(err)),
                ("scratch_bytes", n(scratch as f64)),
            ])
        };

        let plan = ctx.plan(p).map_err(|e| e.to_string())?;
        let out = poisoned_output(ctx, p);
        let buffers = AttentionBuffers::new(&qb, &kb, &vb, &out);
        let (times, clock) = time(ctx, reps, |encoder, set| {
            let writes = set.map(|query_set| wgpu::ComputePassTimestampWrites {
                query_set,
                beginning_of_pass_write_index: Some(0),
                end_of_pass_write_index: Some(1),
            });
            plan.encode_timed(encoder, &buffers, writes)
                .map_err(|e| e.to_string())
        })
        .await?;
        let got = read_tensor(ctx, p, &out).await?;
        let flash = summary(
            times,
            clock,
            rows_err(p, &got, &rows, &want),
            plan.plan().scratch_bytes,
        );

        // The baseline may not fit (its scores grow with N^2): that is a result, not a failure.
        let materialized = match Materialized::new(ctx, p) {
            Err(e) => obj(&[("error", e.to_string().into())]),
            Ok(baseline) => {
                let out = poisoned_output(ctx, p);
                let buffers = AttentionBuffers::new(&qb, &kb, &vb, &out);
                let (times, clock) = time(ctx, reps, |encoder, set| {
                    baseline
                        .encode(encoder, &buffers, set.map(|s| (s, 0, 1)))
                        .map_err(|e| e.to_string())
                })
                .await?;
                let got = read_tensor(ctx, p, &out).await?;
                summary(
                    times,
                    clock,
                    rows_err(p, &got, &rows, &want),
                    baseline.scratch_bytes(),
                )
            }
        };
        Ok(obj(&[
            ("n", n(p.seq_q)),
            ("heads", n(p.heads_q)),
            ("head_dim", n(p.head_dim)),
            ("dtype", p.dtype.name().into()),
            ("causal", p.causal.into()),
            ("flops", n(flops)),
            ("checked_rows", n(rows.len() as f64)),
            ("total_rows", n(p.heads_q * p.seq_q)),
            ("bound", n(bound(p.dtype))),
            ("flash", flash),
            ("materialized", materialized),
        ]))
    }
}
