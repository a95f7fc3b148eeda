//! GPU time of one compute pass, through two timestamp queries (where the device has
//! `TIMESTAMP_QUERY`). Used by the autotuner and the benchmarks.
//!
//! ```no_run
//! # async fn f(ctx: &wgpu_flash_attn::FlashContext) -> wgpu_flash_attn::Result<()> {
//! use wgpu_flash_attn::timing::GpuTimer;
//! let timer = GpuTimer::new(ctx).expect("the device has TIMESTAMP_QUERY");
//! let mut encoder = ctx.device().create_command_encoder(&Default::default());
//! let pass = encoder.begin_compute_pass(&wgpu::ComputePassDescriptor {
//!     label: None,
//!     timestamp_writes: Some(timer.writes()),
//! });
//! drop(pass); // record the work here
//! timer.resolve(&mut encoder);
//! ctx.queue().submit([encoder.finish()]);
//! let ms = timer.read_ms(ctx).await?;
//! # Ok(()) }
//! ```

use crate::context::FlashContext;
use crate::error::{FlashError, Result};

/// Two timestamp queries (start and end of one pass) and the buffers that read them back.
#[derive(Debug)]
pub struct GpuTimer {
    set: wgpu::QuerySet,
    resolve: wgpu::Buffer,
    read: wgpu::Buffer,
    period_ns: f64,
}

impl GpuTimer {
    /// A timer on this context's device, or `None` where the device lacks `TIMESTAMP_QUERY`.
    pub fn new(ctx: &FlashContext) -> Option<GpuTimer> {
        if !ctx.caps().timestamp_query {
            return None;
        }
        let device = ctx.device();
        let buffer = |label, usage| {
            device.create_buffer(&wgpu::BufferDescriptor {
                label: Some(label),
                size: 16,
                usage,
                mapped_at_creation: false,
            })
        };
        Some(GpuTimer {
            set: device.create_query_set(&wgpu::QuerySetDescriptor {
                label: Some("pass timestamps"),
                ty: wgpu::QueryType::Timestamp,
                count: 2,
            }),
            resolve: buffer(
                "pass timestamps resolve",
                wgpu::BufferUsages::QUERY_RESOLVE | wgpu::BufferUsages::COPY_SRC,
            ),
            read: buffer(
                "pass timestamps read",
                wgpu::BufferUsages::MAP_READ | wgpu::BufferUsages::COPY_DST,
            ),
            period_ns: ctx.queue().get_timestamp_period() as f64,
        })
    }

    /// The query set: index 0 is written at the start of the pass, 1 at its end.
    pub fn query_set(&self) -> &wgpu::QuerySet {
        &self.set
    }

    /// Timestamp writes for a compute pass: its start and its end.
    pub fn writes(&self) -> wgpu::ComputePassTimestampWrites<'_> {
        wgpu::ComputePassTimestampWrites {
            query_set: &self.set,
            beginning_of_pass_write_index: Some(0),
            end_of_pass_write_index: Some(1),
        }
    }

    /// Records, after the timed pass, the copy of both timestamps to the readable buffer.
    pub fn resolve(&self, encoder: &mut wgpu::CommandEncoder) {
        encoder.resolve_query_set(&self.set, 0..2, &self.resolve, 0);
        encoder.copy_buffer_to_buffer(&self.resolve, 0, &self.read, 0, 16);
    }

    /// Milliseconds between the two timestamps, once the submission that resolved them is done.
    pub async fn read_ms(&self, ctx: &FlashContext) -> Result<f64> {
        let bytes = ctx.read(&self.read).await?;
        let ticks: [u64; 2] = bytemuck::pod_read_unaligned(&bytes[..16]);
        Ok(ticks[1].wrapping_sub(ticks[0]) as f64 * self.period_ns * 1e-6)
    }
}

/// Records one submission with `encode` (handed the timer, to place its timestamps), submits it,
/// waits, and returns its milliseconds: the GPU time between the timer's two timestamps, or
/// without a timer the wall time of submit and wait (native only; in the browser that is an
/// error, since a page cannot wait for the GPU).
pub async fn time_pass(
    ctx: &FlashContext,
    timer: Option<&GpuTimer>,
    encode: impl FnOnce(&mut wgpu::CommandEncoder, Option<&GpuTimer>) -> Result<()>,
) -> Result<f64> {
    let mut encoder = ctx.device().create_command_encoder(&Default::default());
    encode(&mut encoder, timer)?;
    if let Some(t) = timer {
        t.resolve(&mut encoder);
    }
    #[cfg(not(target_arch = "wasm32"))]
    let start = std::time::Instant::now();
    ctx.queue().submit([encoder.finish()]);
    match timer {
        Some(t) => t.read_ms(ctx).await,
        #[cfg(not(target_arch = "wasm32"))]
        None => {
            ctx.device()
                .poll(wgpu::PollType::wait_indefinitely())
                .map_err(|e| FlashError::Readback(e.to_string()))?;
            Ok(start.elapsed().as_secs_f64() * 1e3)
        }
        #[cfg(target_arch = "wasm32")]
        None => Err(FlashError::MissingFeature {
            what: "timing in the browser",
            feature: "TIMESTAMP_QUERY",
        }),
    }
}
