//! Helpers the benchmarks share (each uses only some of them).
#![allow(dead_code)]

use wgpu_flash_attn::FlashContext;

/// Median of the timed runs (the mean of the two middle ones for an even count).
pub fn median(mut v: Vec<f64>) -> f64 {
    v.sort_by(f64::total_cmp);
    let n = v.len();
    if n % 2 == 1 {
        v[n / 2]
    } else {
        0.5 * (v[n / 2 - 1] + v[n / 2])
    }
}

/// The current UTC time as ISO 8601 (no date crate needed).
pub fn utc_now() -> String {
    let secs = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_secs());
    let (days, rem) = (secs / 86_400, secs % 86_400);
    // Civil date from days since 1970-01-01 (H. Hinnant's algorithm).
    let z = days as i64 + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z - era * 146_097;
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let day = doy - (153 * mp + 2) / 5 + 1;
    let month = if mp < 10 { mp + 3 } else { mp - 9 };
    let year = yoe + era * 400 + i64::from(month <= 2);
    format!(
        "{year:04}-{month:02}-{day:02}T{:02}:{:02}:{:02}Z",
        rem / 3600,
        rem % 3600 / 60,
        rem % 60
    )
}

/// NaN in every element of `buffer`'s first `bytes` (rounded up to a multiple of 4; all bits set
/// is NaN in f32, f16 and bf16), so that a pass that writes nothing cannot pass the check on what
/// an earlier pass left there.
pub fn poison(ctx: &FlashContext, buffer: &wgpu::Buffer, bytes: u64) {
    ctx.queue()
        .write_buffer(buffer, 0, &vec![0xffu8; bytes.next_multiple_of(4) as usize]);
}

/// The larger of the error so far and an element's: a NaN (an element never written, or computed
/// as NaN) counts as infinite, where `f64::max` would skip it.
pub fn max_err(err: f64, e: f64) -> f64 {
    if e.is_nan() {
        f64::INFINITY
    } else {
        err.max(e)
    }
}

/// The first `bytes` of `buffer` (rounded up to a multiple of 4), copied to a mappable buffer and
/// read back.
pub async fn read_back(
    ctx: &FlashContext,
    buffer: &wgpu::Buffer,
    bytes: u64,
) -> wgpu_flash_attn::Result<Vec<u8>> {
    let staging = ctx.device().create_buffer(&wgpu::BufferDescriptor {
        label: Some("readback"),
        size: bytes.next_multiple_of(4),
        usage: wgpu::BufferUsages::MAP_READ | wgpu::BufferUsages::COPY_DST,
        mapped_at_creation: false,
    });
    let mut encoder = ctx.device().create_command_encoder(&Default::default());
    encoder.copy_buffer_to_buffer(buffer, 0, &staging, 0, bytes.next_multiple_of(4));
    ctx.queue().submit([encoder.finish()]);
    ctx.read(&staging).await
}

/// A compute pipeline of `source`'s entry point `entry`, its bind group layout taken from the
/// shader.
pub fn compute_pipeline(
    ctx: &FlashContext,
    label: &str,
    source: String,
    entry: &str,
) -> wgpu::ComputePipeline {
    let module = ctx
        .device()
        .create_shader_module(wgpu::ShaderModuleDescriptor {
            label: Some(label),
            source: wgpu::ShaderSource::Wgsl(source.into()),
        });
    ctx.device()
        .create_compute_pipeline(&wgpu::ComputePipelineDescriptor {
            label: Some(label),
            layout: None,
            module: &module,
            entry_point: Some(entry),
            compilation_options: Default::default(),
            cache: None,
        })
}

/// A bind group for `pipeline`'s group 0 with `resources` at bindings 0, 1, ...
pub fn bind_group(
    ctx: &FlashContext,
    label: &str,
    pipeline: &wgpu::ComputePipeline,
    resources: &[wgpu::BindingResource],
) -> wgpu::BindGroup {
    let entries: Vec<wgpu::BindGroupEntry> = resources
        .iter()
        .enumerate()
        .map(|(i, resource)| wgpu::BindGroupEntry {
            binding: i as u32,
            resource: resource.clone(),
        })
        .collect();
    ctx.device().create_bind_group(&wgpu::BindGroupDescriptor {
        label: Some(label),
        layout: &pipeline.get_bind_group_layout(0),
        entries: &entries,
    })
}

/// What a benchmark's JSON report begins with: the adapter, the command and how it timed (`date`:
/// when the report was made, at the end of the run).
#[derive(serde::Serialize)]
pub struct RunInfo {
    pub adapter: String,
    pub backend: String,
    pub driver: String,
    pub compute_units: u32,
    pub date: String,
    /// This process's command line, without the `--bench` that `cargo bench` adds.
    pub command: String,
    /// How the runs were timed.
    pub timing: &'static str,
}

impl RunInfo {
    pub fn new(ctx: &FlashContext, timing: &'static str) -> RunInfo {
        let caps = ctx.caps();
        RunInfo {
            adapter: caps.name.clone(),
            backend: caps.backend.clone(),
            driver: caps.driver.clone(),
            compute_units: caps.compute_units,
            date: utc_now(),
            command: std::env::args()
                .filter(|a| a != "--bench")
                .collect::<Vec<_>>()
                .join(" "),
            timing,
        }
    }
}
