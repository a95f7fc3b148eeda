//! Read bandwidth of device memory through wgpu: the ceiling that KV-cache decoding, which reads
//! every cached key and value once, runs against. On the default adapter (honours
//! `WGPU_BACKEND` / `WGPU_ADAPTER_NAME`).
//!
//! ```sh
//! cargo bench --bench bandwidth                    # small defaults, fine on a software driver
//! cargo bench --bench bandwidth -- --mib 1024 --patterns flat,heads --loads 1,2,4,8 \
//!     --per-cu 1,2,4,8,16 --json bandwidth.json
//! ```
//!
//! The kernel (`benches/read_bandwidth.wgsl`) reads a buffer of seeded random words (random, so
//! that no memory compression flatters the figure) with 16-byte loads, `--loads` of them in
//! flight per invocation, in one of two patterns: `flat` (a grid-stride loop, each subgroup load
//! one contiguous run) or `heads` (the buffer as rows of 8 segments of 256 bytes, each workgroup
//! reading one segment of a contiguous run of rows: the KV-cache kernel's pattern for d = 128,
//! f16, 8 KV heads). Workgroups: `--per-cu` times the compute units the plan assumes. Time is
//! measured on the GPU with timestamp queries around the pass (wall time of submit + wait without
//! `TIMESTAMP_QUERY`), median of `--runs` after `--warmup-ms` of back-to-back runs.

mod common;

use clap::Parser;
use serde::Serialize;
use std::path::PathBuf;
use wgpu::util::DeviceExt;
use wgpu_flash_attn::timing::{time_pass, GpuTimer};
use wgpu_flash_attn::FlashContext;

#[derive(Parser, Debug, Serialize)]
#[command(about = "Read bandwidth of device memory through wgpu")]
struct Args {
    /// Buffer size in MiB (at most the adapter's largest storage binding).
    #[arg(long, default_value_t = 64)]
    mib: u32,
    /// Access patterns: flat, heads.
    #[arg(long, value_delimiter = ',', default_value = "flat,heads")]
    patterns: Vec<String>,
    /// 16-byte loads in flight per invocation: 1, 2, 4 or 8.
    #[arg(long, value_delimiter = ',', default_value = "1,4")]
    loads: Vec<u32>,
    /// Invocations per workgroup.
    #[arg(long, value_delimiter = ',', default_value = "256")]
    workgroup: Vec<u32>,
    /// Workgroups per compute unit.
    #[arg(long, value_delimiter = ',', default_value = "4")]
    per_cu: Vec<u32>,
    /// Timed runs (the median is reported).
    #[arg(long, default_value_t = 10)]
    runs: usize,
    /// Untimed warm-up time per configuration, milliseconds (at least), of back-to-back runs.
    #[arg(long, default_value_t = 200)]
    warmup_ms: u64,
    /// Also write the results as JSON to this file.
    #[arg(long)]
    json: Option<PathBuf>,
    /// Passed by `cargo bench`; ignored.
    #[arg(long, hide = true)]
    bench: bool,
}

/// KV heads and vec4s per head segment of the `heads` pattern (d = 128, f16).
const HEADS: u32 = 8;
const SEG: u32 = 16;
const KERNEL: &str = include_str!("read_bandwidth.wgsl");

#[derive(Serialize)]
struct Row {
    pattern: String,
    loads: u32,
    workgroup: u32,
    workgroups: u32,
    bytes: u64,
    ms: f64,
    ms_min: f64,
    gbps: f64,
}

#[derive(Serialize)]
struct Report<'a> {
    #[serde(flatten)]
    run: common::RunInfo,
    args: &'a Args,
    rows: &'a [Row],
}

#[repr(C)]
#[derive(Clone, Copy, bytemuck::Pod, bytemuck::Zeroable)]
struct Params {
    vec4s: u32,
    parts: u32,
    never: u32,
    _pad: u32,
}

fn main() {
    if let Err(e) = run(&Args::parse()) {
        eprintln!("error: {e}");
        std::process::exit(2);
    }
}

/// The kernel's WGSL with the benchmark's constants in place of its HEADER block.
fn kernel_source(workgroup: u32, loads: u32, flat: bool) -> String {
    wgpu_flash_attn::kernels::with_header(
        KERNEL,
        &format!(
            "const WG: u32 = {workgroup}u;\nconst LOADS: u32 = {loads}u;\nconst FLAT: bool = {flat};\n\
             const HEADS: u32 = {HEADS}u;\nconst SEG: u32 = {SEG}u;\n"
        ),
    )
}

fn run(args: &Args) -> Result<(), Box<dyn std::error::Error>> {
    let ctx = FlashContext::default_blocking()?;
    let caps = ctx.caps().clone();
    let device = ctx.device();
    let timer = GpuTimer::new(&ctx);
    let timing = if timer.is_some() {
        "gpu-timestamps"
    } else {
        "wall-clock"
    };
    let row_bytes = u64::from(HEADS * SEG) * 16;
    let bytes = (u64::from(args.mib) << 20) / row_bytes * row_bytes;
    if bytes == 0 || bytes > caps.max_storage_buffer_binding_size {
        return Err(format!(
            "--mib {}: want 1 to {} MiB (the largest storage binding)",
            args.mib,
            caps.max_storage_buffer_binding_size >> 20
        )
        .into());
    }
    // Every argument is checked before anything runs.
    if let Some(p) = args
        .patterns
        .iter()
        .find(|p| !["flat", "heads"].contains(&p.as_str()))
    {
        return Err(format!("unknown pattern {p} (want flat or heads)").into());
    }
    if let Some(l) = args.loads.iter().find(|l| ![1, 2, 4, 8].contains(*l)) {
        return Err(format!("--loads {l}: want 1, 2, 4 or 8").into());
    }
    let max_wg = caps.max_invocations_per_workgroup;
    if let Some(w) = args
        .workgroup
        .iter()
        .find(|&&w| w == 0 || w % SEG != 0 || w > max_wg)
    {
        return Err(format!("--workgroup {w}: want a multiple of {SEG} up to {max_wg}").into());
    }
    let max_groups = caps.max_workgroups_per_dimension;
    let groups = |per_cu: u32| -> (u32, u32) {
        // `heads`: whole groups of HEADS workgroups (one per head).
        let wanted = (caps.compute_units * per_cu).max(1);
        (wanted, wanted.div_ceil(HEADS) * HEADS)
    };
    if let Some(k) = args.per_cu.iter().find(|&&k| groups(k).1 > max_groups) {
        return Err(format!(
            "--per-cu {k}: more workgroups than one dispatch dimension takes ({max_groups})"
        )
        .into());
    }
    println!(
        "adapter: {} ({}, {}), ~{} compute units, {} MiB, timing: {timing}",
        caps.name,
        caps.backend,
        caps.driver,
        caps.compute_units,
        bytes >> 20
    );
    println!("| pattern | loads | workgroup | workgroups | ms (median) | ms (min) | GB/s |");
    println!("|---|---|---|---|---|---|---|");

    // Seeded random words, uploaded in pieces.
    let src = device.create_buffer(&wgpu::BufferDescriptor {
        label: Some("bandwidth source"),
        size: bytes,
        usage: wgpu::BufferUsages::STORAGE | wgpu::BufferUsages::COPY_DST,
        mapped_at_creation: false,
    });
    let mut s: u64 = 0x9E37_79B9_7F4A_7C15;
    let piece = 64u64 << 20;
    for at in (0..bytes).step_by(piece as usize) {
        let words: Vec<u32> = (0..(piece.min(bytes - at) / 4))
            .map(|_| {
                s ^= s << 13;
                s ^= s >> 7;
                s ^= s << 17;
                (s >> 16) as u32
            })
            .collect();
        ctx.queue()
            .write_buffer(&src, at, bytemuck::cast_slice(&words));
        ctx.queue().submit([]);
    }

    let mut rows = Vec::new();
    for pattern in &args.patterns {
        let flat = pattern == "flat";
        for &workgroup in &args.workgroup {
            for &loads in &args.loads {
                let pipeline = common::compute_pipeline(
                    &ctx,
                    "read bandwidth",
                    kernel_source(workgroup, loads, flat),
                    "read_all",
                );
                for &per_cu in &args.per_cu {
                    let (flat_groups, head_groups) = groups(per_cu);
                    let workgroups = if flat { flat_groups } else { head_groups };
                    let parts = if flat { 1 } else { head_groups / HEADS };
                    let params = Params {
                        vec4s: (bytes / 16) as u32,
                        parts,
                        never: 0x5eed_0001,
                        _pad: 0,
                    };
                    let uniform = device.create_buffer_init(&wgpu::util::BufferInitDescriptor {
                        label: Some("read bandwidth params"),
                        contents: bytemuck::bytes_of(&params),
                        usage: wgpu::BufferUsages::UNIFORM,
                    });
                    let sink = device.create_buffer(&wgpu::BufferDescriptor {
                        label: Some("read bandwidth sink"),
                        size: u64::from(workgroups * workgroup) * 4,
                        usage: wgpu::BufferUsages::STORAGE,
                        mapped_at_creation: false,
                    });
                    let bind_group = common::bind_group(
                        &ctx,
                        "read bandwidth",
                        &pipeline,
                        &[
                            uniform.as_entire_binding(),
                            src.as_entire_binding(),
                            sink.as_entire_binding(),
                        ],
                    );
                    let once = || {
                        pollster::block_on(time_pass(&ctx, timer.as_ref(), |encoder, timer| {
                            let mut pass =
                                encoder.begin_compute_pass(&wgpu::ComputePassDescriptor {
                                    label: Some("read bandwidth"),
                                    timestamp_writes: timer.map(GpuTimer::writes),
                                });
                            pass.set_pipeline(&pipeline);
                            pass.set_bind_group(0, &bind_group, &[]);
                            pass.dispatch_workgroups(workgroups, 1, 1);
                            Ok(())
                        }))
                    };
                    let start = std::time::Instant::now();
                    while start.elapsed().as_millis() < u128::from(args.warmup_ms) {
                        once()?;
                    }
                    let mut times = Vec::with_capacity(args.runs);
                    for _ in 0..args.runs.max(1) {
                        times.push(once()?);
                    }
                    let ms_min = times.iter().copied().fold(f64::INFINITY, f64::min);
                    let ms = common::median(times);
                    let gbps = bytes as f64 / (ms * 1e6);
                    println!(
                        "| {pattern} | {loads} | {workgroup} | {workgroups} | {ms:.4} | {ms_min:.4} | {gbps:.1} |"
                    );
                    rows.push(Row {
                        pattern: pattern.clone(),
                        loads,
                        workgroup,
                        workgroups,
                        bytes,
                        ms,
                        ms_min,
                        gbps,
                    });
                }
            }
        }
    }
    if let Some(path) = &args.json {
        let report = Report {
            run: common::RunInfo::new(&ctx, timing),
            args,
            rows: &rows,
        };
        std::fs::write(path, serde_json::to_string_pretty(&report)?)?;
    }
    Ok(())
}
