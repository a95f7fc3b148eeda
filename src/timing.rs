//! GPU time of compute passes, through a pair of timestamp queries each (where the device has
//! `TIMESTAMP_QUERY`): one pass per submission, or several recorded back to back and read
//! together ([`GpuTimer::with_pairs`]). Used by the autotuner and the benchmarks.
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

/// Timestamp queries for `pairs` passes (the start and end of each) and the buffers that read
/// them back: one pass per submission ([`time_pass`]), or several recorded back to back and read
/// together ([`GpuTimer::read_all_ms`]).
#[derive(Debug)]
pub struct GpuTimer {
    set: wgpu::QuerySet,
    resolve: wgpu::Buffer,
    read: wgpu::Buffer,
    pairs: u32,
    period_ns: f64,
}

impl GpuTimer {
    /// Most passes one timer times: two queries each in one query set.
    pub const MAX_PAIRS: u32 = wgpu::QUERY_SET_MAX_QUERIES / 2;

    /// A timer of one pass on this context's device, or `None` where the device lacks
    /// `TIMESTAMP_QUERY`.
    pub fn new(ctx: &FlashContext) -> Option<GpuTimer> {
        GpuTimer::with_pairs(ctx, 1)
    }

    /// A timer of `pairs` passes (1 to [`GpuTimer::MAX_PAIRS`]; panics otherwise), or `None`
    /// where the device lacks `TIMESTAMP_QUERY`.
    pub fn with_pairs(ctx: &FlashContext, pairs: u32) -> Option<GpuTimer> {
        assert!(
            (1..=GpuTimer::MAX_PAIRS).contains(&pairs),
            "a GpuTimer times 1 to {} passes, not {pairs}",
            GpuTimer::MAX_PAIRS
        );
        if !ctx.caps().timestamp_query {
            return None;
        }
        let device = ctx.device();
        let bytes = 16 * pairs as u64;
        let buffer = |label, usage| {
            device.create_buffer(&wgpu::BufferDescriptor {
                label: Some(label),
                size: bytes,
                usage,
                mapped_at_creation: false,
            })
        };
        Some(GpuTimer {
            set: device.create_query_set(&wgpu::QuerySetDescriptor {
                label: Some("pass timestamps"),
                ty: wgpu::QueryType::Timestamp,
                count: 2 * pairs,
            }),
            resolve: buffer(
                "pass timestamps resolve",
                wgpu::BufferUsages::QUERY_RESOLVE | wgpu::BufferUsages::COPY_SRC,
            ),
            read: buffer(
                "pass timestamps read",
                wgpu::BufferUsages::MAP_READ | wgpu::BufferUsages::COPY_DST,
            ),
            pairs,
            period_ns: ctx.queue().get_timestamp_period() as f64,
        })
    }

    /// How many passes this timer times.
    pub fn pairs(&self) -> u32 {
        self.pairs
    }

    /// The query set: index 2i is written at the start of pass i, 2i + 1 at its end.
    pub fn query_set(&self) -> &wgpu::QuerySet {
        &self.set
    }

    /// Timestamp writes for a compute pass: its start and its end (the first pass's queries).
    pub fn writes(&self) -> wgpu::ComputePassTimestampWrites<'_> {
        self.writes_at(0)
    }

    /// Timestamp writes for pass `i` of the timer's passes.
    pub fn writes_at(&self, i: u32) -> wgpu::ComputePassTimestampWrites<'_> {
        assert!(
            i < self.pairs,
            "pass {i} of a timer of {} passes",
            self.pairs
        );
        wgpu::ComputePassTimestampWrites {
            query_set: &self.set,
            beginning_of_pass_write_index: Some(2 * i),
            end_of_pass_write_index: Some(2 * i + 1),
        }
    }

    /// Records, after the timed passes, the copy of all their timestamps to the readable buffer.
    pub fn resolve(&self, encoder: &mut wgpu::CommandEncoder) {
        encoder.resolve_query_set(&self.set, 0..2 * self.pairs, &self.resolve, 0);
        encoder.copy_buffer_to_buffer(&self.resolve, 0, &self.read, 0, 16 * self.pairs as u64);
    }

    /// Milliseconds between the first pass's two timestamps, once the submission that resolved
    /// them is done.
    pub async fn read_ms(&self, ctx: &FlashContext) -> Result<f64> {
        Ok(self.read_all_ms(ctx).await?[0])
    }

    /// Milliseconds of every pass, in order, once the submission that resolved them is done.
    pub async fn read_all_ms(&self, ctx: &FlashContext) -> Result<Vec<f64>> {
        let bytes = ctx.read(&self.read).await?;
        let ticks: Vec<u64> = bytemuck::pod_collect_to_vec(&bytes[..16 * self.pairs as usize]);
        Ok(ticks
            .chunks(2)
            .map(|t| t[1].wrapping_sub(t[0]) as f64 * self.period_ns * 1e-6)
            .collect())
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
