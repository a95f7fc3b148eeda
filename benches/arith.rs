//! Arithmetic rate through wgpu: the multiply-add ceilings that the portable tiers (f32, and f16
//! without tensor cores) run against. On the default adapter (honours `WGPU_BACKEND` /
//! `WGPU_ADAPTER_NAME`).
//!
//! ```sh
//! cargo bench --bench arith                        # small defaults, fine on a software driver
//! cargo bench --bench arith -- --forms f32x4,f32x2,f16x4,f16x2 --per-cu 32 --iters 512 \
//!     --steps 8 --json arith.json                 # the H200 figures in BENCHMARKS.md
//! ```
//!
//! The kernel (`benches/arith_rate.wgsl`) runs 8 independent chains `x = x * mul + add` per
//! invocation, `--steps` steps per loop trip written out (with one, the loop's own instructions
//! cost `f32x4` 29% on the H200). A form names the chains' type, `f32` or `f16` with 2 or 4 lanes
//! (`f16x2` is `vec2<f16>`), and `-fma` writes each step as WGSL's `fma()` instead of a multiply
//! and an add. TFLOP/s counts 2 flops per lane and step. Invocation 0's sum is read back and
//! checked against the same chains run on the host, and the steps it counted against
//! `--iters` x `--steps` (the chains converge, so the sum alone would not show steps left out). f16
//! forms are skipped, with a note, on an adapter without `SHADER_F16`. Time is measured on the GPU with timestamp
//! queries around the pass (wall time of submit + wait without `TIMESTAMP_QUERY`), median of
//! `--runs` after `--warmup-ms` of back-to-back runs.

mod common;

use clap::Parser;
use serde::Serialize;
use std::path::PathBuf;
use wgpu::util::DeviceExt;
use wgpu_flash_attn::kernels::{block, with_block, with_header};
use wgpu_flash_attn::timing::{time_pass, GpuTimer};
use wgpu_flash_attn::FlashContext;

#[derive(Parser, Debug, Serialize)]
#[command(about = "Multiply-add rate through wgpu")]
struct Args {
    /// Forms to run: f32 or f16, x2 or x4 lanes, optionally -fma (e.g. f16x2-fma).
    #[arg(long, value_delimiter = ',', default_value = "f32x4,f16x4,f16x2")]
    forms: Vec<String>,
    /// Loop trips of each chain.
    #[arg(long, default_value_t = 64)]
    iters: u32,
    /// Steps of each chain per loop trip (the loop body written out that many times).
    #[arg(long, default_value_t = 4, value_parser = clap::value_parser!(u32).range(1..=64))]
    steps: u32,
    /// Invocations per workgroup.
    #[arg(long, default_value_t = 256)]
    workgroup: u32,
    /// Workgroups per compute unit.
    #[arg(long, default_value_t = 4)]
    per_cu: u32,
    /// Timed runs (the median is reported).
    #[arg(long, default_value_t = 10)]
    runs: usize,
    /// Untimed warm-up time per form, milliseconds (at least), of back-to-back runs.
    #[arg(long, default_value_t = 200)]
    warmup_ms: u64,
    /// Also write each form's WGSL to DIR/FORM.wgsl (for `kernel_stats --wgsl`).
    #[arg(long)]
    wgsl_dir: Option<PathBuf>,
    /// Also write the results as JSON to this file.
    #[arg(long)]
    json: Option<PathBuf>,
    /// Passed by `cargo bench`; ignored.
    #[arg(long, hide = true)]
    bench: bool,
}

const KERNEL: &str = include_str!("arith_rate.wgsl");
const CHAINS: u32 = 8;
const MUL: f32 = 0.75;
const ADD: f32 = 0.125;

/// A parsed form: element type, lanes, and whether steps are written as `fma()`.
#[derive(Clone, Copy, Debug)]
struct Form {
    f16: bool,
    lanes: u32,
    fused: bool,
}

impl std::str::FromStr for Form {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, String> {
        let (base, fused) = match s.strip_suffix("-fma") {
            Some(b) => (b, true),
            None => (s, false),
        };
        let (ty, lanes) = base
            .split_once('x')
            .ok_or_else(|| format!("form {s}: want f32 or f16, then x2 or x4"))?;
        let f16 = match ty {
            "f32" => false,
            "f16" => true,
            _ => return Err(format!("form {s}: element type {ty} is not f32 or f16")),
        };
        let lanes = match lanes {
            "2" => 2,
            "4" => 4,
            _ => return Err(format!("form {s}: {lanes} lanes, want 2 or 4")),
        };
        Ok(Form { f16, lanes, fused })
    }
}

#[derive(Serialize)]
struct Row {
    form: String,
    workgroups: u32,
    flops: f64,
    ms: f64,
    ms_min: f64,
    tflops: f64,
    /// Invocation 0's sum of its chains, and the host's.
    got: f32,
    want: f64,
    /// The steps invocation 0 ran per chain (iters x steps when every one ran).
    steps_run: u32,
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
    iters: u32,
    mul: f32,
    add: f32,
    _pad: u32,
}

fn main() {
    if let Err(e) = run(&Args::parse()) {
        eprintln!("error: {e}");
        std::process::exit(2);
    }
}

/// The kernel's WGSL with the form's type and the workgroup size in place of its HEADER block, and
/// its STEP block written `steps` times.
fn kernel_source(form: Form, workgroup: u32, steps: u32) -> String {
    let kernel = with_block(
        KERNEL,
        "STEP",
        &block(KERNEL, "STEP").repeat(steps as usize),
    );
    let scalar = if form.f16 { "f16" } else { "f32" };
    let n = form.lanes;
    let lanes: Vec<String> = lane_offsets(form).map(|x| format!("{x:?}")).collect();
    let header = format!(
        "{}const WG: u32 = {workgroup}u;\nalias T = vec{n}<{scalar}>;\nalias S = {scalar};\n\
         alias F = vec{n}<f32>;\nconst FUSED: bool = {};\nconst LANES: T = T({});\n",
        if form.f16 { "enable f16;\n" } else { "" },
        form.fused,
        lanes.join(", "),
    );
    with_header(&kernel, &header)
}

/// What each lane adds to a chain's start value (`LANES` in the kernel): lane i of n adds i / n.
fn lane_offsets(form: Form) -> impl Iterator<Item = f64> {
    (0..form.lanes).map(move |i| f64::from(i) / f64::from(form.lanes))
}

/// Invocation 0's sum, as the host computes it (each step rounded to the form's type).
fn expected(form: Form, iters: u32) -> f64 {
    let round = |x: f64| {
        if form.f16 {
            f64::from(half::f16::from_f64(x))
        } else {
            f64::from(x as f32)
        }
    };
    let (m, a) = (f64::from(MUL), f64::from(ADD));
    let mut sum = 0.0;
    for start in 1..=CHAINS {
        for lane in lane_offsets(form) {
            let mut x = round(f64::from(start) + lane);
            for _ in 0..iters {
                x = if form.fused {
                    round(x * m + a)
                } else {
                    round(round(x * m) + a)
                };
            }
            sum += x;
        }
    }
    sum
}

fn run(args: &Args) -> Result<(), Box<dyn std::error::Error>> {
    let forms: Vec<(String, Form)> = args
        .forms
        .iter()
        .map(|f| Ok((f.clone(), f.parse()?)))
        .collect::<Result<_, String>>()?;
    // Steps per chain, as invocation 0 counts them (a u32).
    let total_steps = args
        .iters
        .checked_mul(args.steps)
        .ok_or("--iters times --steps: at most 2^32 - 1 steps per chain")?;
    let ctx = FlashContext::default_blocking()?;
    let caps = ctx.caps().clone();
    let device = ctx.device();
    let (forms, skipped): (Vec<_>, Vec<_>) = forms
        .into_iter()
        .partition(|(_, f)| !f.f16 || caps.shader_f16);
    if !skipped.is_empty() {
        let names: Vec<&str> = skipped.iter().map(|(n, _)| n.as_str()).collect();
        println!(
            "skipped (the adapter lacks SHADER_F16): {}",
            names.join(", ")
        );
    }
    if forms.is_empty() {
        return Err("no form left to run".into());
    }
    let max_wg = caps
        .max_invocations_per_workgroup
        .min(caps.max_workgroup_size_x);
    if args.workgroup == 0 || args.workgroup > max_wg {
        return Err(format!("--workgroup {}: want 1 to {max_wg}", args.workgroup).into());
    }
    let workgroups = caps.compute_units.max(1).saturating_mul(args.per_cu);
    if workgroups == 0 || workgroups > caps.max_workgroups_per_dimension {
        return Err(format!(
            "--per-cu {}: want at least 1, and at most what one dispatch dimension takes ({} workgroups)",
            args.per_cu, caps.max_workgroups_per_dimension
        )
        .into());
    }
    let timer = GpuTimer::new(&ctx);
    let timing = if timer.is_some() {
        "gpu-timestamps"
    } else {
        "wall-clock"
    };
    println!(
        "adapter: {} ({}, {}), ~{} compute units, {workgroups} workgroups of {}, {} loop trips of {} steps, timing: {timing}",
        caps.name, caps.backend, caps.driver, caps.compute_units, args.workgroup, args.iters, args.steps
    );
    println!("| form | ms (median) | ms (min) | TFLOP/s | sum (GPU) | sum (host) | steps (GPU) |");
    println!("|---|---|---|---|---|---|---|");
    let params = Params {
        iters: args.iters,
        mul: MUL,
        add: ADD,
        _pad: 0,
    };
    let uniform = device.create_buffer_init(&wgpu::util::BufferInitDescriptor {
        label: Some("arith params"),
        contents: bytemuck::bytes_of(&params),
        usage: wgpu::BufferUsages::UNIFORM,
    });
    let sink = device.create_buffer(&wgpu::BufferDescriptor {
        label: Some("arith sink"),
        size: 8,
        usage: wgpu::BufferUsages::STORAGE
            | wgpu::BufferUsages::COPY_SRC
            | wgpu::BufferUsages::COPY_DST,
        mapped_at_creation: false,
    });
    let mut rows = Vec::new();
    let mut all_ok = true;
    for (name, form) in forms {
        let source = kernel_source(form, args.workgroup, args.steps);
        if let Some(dir) = &args.wgsl_dir {
            std::fs::create_dir_all(dir)?;
            std::fs::write(dir.join(format!("{name}.wgsl")), &source)?;
        }
        let pipeline = common::compute_pipeline(&ctx, "arith", source, "run");
        let bind_group = common::bind_group(
            &ctx,
            "arith",
            &pipeline,
            &[uniform.as_entire_binding(), sink.as_entire_binding()],
        );
        // The sink is poisoned first, so a pass that stores nothing fails the check.
        common::poison(&ctx, &sink, 8);
        let once = || {
            pollster::block_on(time_pass(&ctx, timer.as_ref(), |encoder, timer| {
                let mut pass = encoder.begin_compute_pass(&wgpu::ComputePassDescriptor {
                    label: Some("arith"),
                    timestamp_writes: timer.map(GpuTimer::writes),
                });
                pass.set_pipeline(&pipeline);
                pass.set_bind_group(0, &bind_group, &[]);
                pass.dispatch_workgroups(workgroups, 1, 1);
                Ok(())
            }))
        };
        let start = std::time::Instant::now();
        once()?;
        while start.elapsed().as_millis() < u128::from(args.warmup_ms) {
            once()?;
        }
        let mut times = Vec::with_capacity(args.runs);
        for _ in 0..args.runs.max(1) {
            times.push(once()?);
        }
        let words = pollster::block_on(common::read_back(&ctx, &sink, 8))?;
        let got = f32::from_le_bytes(words[..4].try_into()?);
        let steps_run = u32::from_le_bytes(words[4..8].try_into()?);
        let want = expected(form, total_steps);
        // The host rounds a multiply and an add apart unless the form is fused; the GPU may fuse
        // them anyway (contraction), which moves an f16 chain by a rounding step or two.
        let tol = if form.f16 { 0.02 } else { 1e-4 } * want.abs().max(1.0);
        let ok = (f64::from(got) - want).abs() <= tol && steps_run == total_steps;
        all_ok &= ok;
        let ms_min = times.iter().copied().fold(f64::INFINITY, f64::min);
        let ms = common::median(times);
        let flops = f64::from(workgroups)
            * f64::from(args.workgroup)
            * f64::from(total_steps)
            * f64::from(CHAINS * form.lanes * 2);
        let tflops = flops / (ms * 1e9);
        println!(
            "| {name} | {ms:.4} | {ms_min:.4} | {tflops:.2} | {got} | {want} | {steps_run}{} |",
            if ok { "" } else { " (MISMATCH)" }
        );
        rows.push(Row {
            form: name,
            workgroups,
            flops,
            ms,
            ms_min,
            tflops,
            got,
            want,
            steps_run,
        });
    }
    if let Some(path) = &args.json {
        let report = Report {
            run: common::RunInfo::new(&ctx, timing),
            args,
            rows: &rows,
        };
        std::fs::write(path, serde_json::to_string_pretty(&report)?)?;
    }
    if !all_ok {
        return Err("a form's result did not match the host's".into());
    }
    Ok(())
}
