//! The tensor-core forward kernel (`shaders/flash_fwd_coop.wgsl`): Q K^T and P V through
//! cooperative matrices. It shares the portable kernel's bindings, params and encoding
//! ([`super::forward`]); only its source differs.

use crate::plan::{CoopStage, Plan, Storage};

/// Elements of a 16x16 fragment each lane holds in a subgroup of 32, the only size the kernel's
/// element layout is written for (`EL` in the shader).
pub(crate) const FRAGMENT_ELEMENTS: u32 = 8;

/// The shader file, with default constants.
pub const SOURCE: &str = include_str!("../../shaders/flash_fwd_coop.wgsl");

/// The shader's STAGE block for [`CoopStage::KFirst`]: the same stores as the shader's own block,
/// all K rows before all V rows, through a function of their own. The text is the one measured
/// (see [`crate::plan::coop_stage`]); one shader text could not choose between the forms: both
/// behind a constant branch compiled like this one at d = 64-256
/// (bench-results/h200-2026-12-01-session15, call 6).
const STAGE_K_FIRST: &str = "\
// A tile's K (or V) rows from registers into kv_tile from `off` (in halves).
fn stage_rows(x: array<vec4<f16>, LOADS>, lid: u32, off: u32) {
    for (var u = 0u; u < LOADS; u++) {
        let i = lid + u * WG;
        if (i < BN * D4) {
            store4(off + (i / D4) * RS + (i % D4) * 4u, x[u]);
        }
    }
}

// A tile's K and V from registers into kv_tile from `off`: all K rows, then all V rows.
fn stage(k: array<vec4<f16>, LOADS>, v: array<vec4<f16>, LOADS>, lid: u32, off: u32) {
    stage_rows(k, lid, off);
    stage_rows(v, lid, off + BN * RS);
}
";

/// The shader's STAGE block for [`CoopStage::Wrapped`]: the file's own stage(), renamed, behind
/// a wrapper function (the form measured; see [`crate::plan::coop_stage`]).
fn stage_wrapped(source: &str) -> String {
    let own = super::block(source, "STAGE");
    assert_eq!(
        own.matches("fn stage(").count(),
        1,
        "the STAGE block defines stage()"
    );
    format!(
        "fn stage(k: array<vec4<f16>, LOADS>, v: array<vec4<f16>, LOADS>, lid: u32, off: u32) {{ \
         stage_by_vec4(k, v, lid, off); }}\n{}",
        own.replace("fn stage(", "fn stage_by_vec4(")
    )
}

// The tree texts name the 8 elements of a lane's share of a fragment one by one, 4 of each row.
const _: () = assert!(FRAGMENT_ELEMENTS == 8);

/// The shader's SCORES_MAX block (the body of `elem_scores`) where
/// [`crate::plan::coop_tree_form`] holds: each row's tile max as a tree, the four elements of a
/// row in a key block at a time, instead of one chain of dependent max operations. With
/// [`TREE_PROBS`] and [`load_rows_stepped`], the text measured (see
/// [`crate::plan::coop_tree_form`]).
const TREE_SCORES_MAX: &str =
    "    // The max as a tree: one chain of max operations would wait on each in turn.
    var tile_max = vec2<f32>(MASKED);
    for (var nb = 0u; nb < N16; nb++) {
        for (var e = 0u; e < EL; e++) {
            let row = row_first + elem_row(lane, e);
            let key = n0 + nb * 16u + elem_col(lane, e);
            (*x)[nb * EL + e] = score((*x)[nb * EL + e], key, row, i32(row) + diag_offset, interior,
                slope, batch, head_q, seq_q, seq_kv);
        }
        let at = nb * EL;
        let lo = max(max((*x)[at], (*x)[at + 1u]), max((*x)[at + 2u], (*x)[at + 3u]));
        let hi = max(max((*x)[at + 4u], (*x)[at + 5u]), max((*x)[at + 6u], (*x)[at + 7u]));
        tile_max = max(tile_max, vec2<f32>(lo, hi));
    }
    return tile_max;
";

/// The shader's PROBS block where [`crate::plan::coop_tree_form`] holds: the row sums of the
/// probabilities as trees too, four at a time, added to `l_part` once a tile.
const TREE_PROBS: &str = "                var sums = vec2<f32>(0.0);
                for (var nb = 0u; nb < N16; nb++) {
                    // Every element is set, so any A fragment will do to start from.
                    var pf = q_frag[0];
                    var pe: array<f32, EL>;
                    for (var e = 0u; e < EL; e++) {
                        pe[e] = exp2(fma(x[nb * EL + e], params.scale_log2, -select(m_hi, m_lo, e < 4u)));
                        pf = coop_set_a(pf, e, f16(pe[e]));
                    }
                    sums += vec2<f32>((pe[0] + pe[1]) + (pe[2] + pe[3]), (pe[4] + pe[5]) + (pe[6] + pe[7]));
                    p_frag[rb * N16 + nb] = pf;
                }
                l_part[2u * rb] += sums.x;
                l_part[2u * rb + 1u] += sums.y;
";

/// The shader's LOAD_ROWS block where [`crate::plan::coop_tree_form`] holds: where a thread's
/// vec4s are whole rows apart (WG a multiple of D / 4; with the tables' tiles at d = 256 from 2
/// subgroups, never at d = 96 or 192) and the tile lies inside the sequence, one address per
/// thread stepped by WG / D4 rows; else the file's own block, a clamped key per load. Where the
/// first branch cannot run, the text is still the one measured.
fn load_rows_stepped(source: &str) -> String {
    let own: String = super::block(source, "LOAD_ROWS")
        .lines()
        .map(|line| {
            if line.is_empty() {
                "\n".to_string()
            } else {
                format!("    {line}\n")
            }
        })
        .collect();
    format!(
        "            if (!PAGED && WG % D4 == 0u && ahead + BN <= seq_kv) {{
                let k_at = k_base + (ahead + lid / D4) * params.k.z + lid % D4;
                let v_at = v_base + (ahead + lid / D4) * params.v.z + lid % D4;
                for (var u = 0u; u < LOADS; u++) {{
                    if (LOADS * WG == BN * D4 || lid + u * WG < BN * D4) {{
                        k_staged[u] = half4(k_buf[k_at + u * (WG / D4) * params.k.z]);
                        v_staged[u] = half4(v_buf[v_at + u * (WG / D4) * params.v.z]);
                    }}
                }}
            }} else {{
{own}            }}
"
    )
}

/// The shader's LOAD_FN block where [`crate::plan::coop_load_in_function`] holds: the key loop's
/// LOAD block as it stands in the file, as a function of the variables it uses (pointers to the
/// registers it fills); made before the LOAD block itself is replaced by [`LOAD_CALL`].
fn load_function(source: &str) -> String {
    format!(
        "fn load_tile(k_staged: ptr<function, array<vec4<f16>, LOADS>>, \
         v_staged: ptr<function, array<vec4<f16>, LOADS>>, k_base: u32, v_base: u32, batch: u32, \
         ahead: u32, seq_kv: u32, lid: u32) {{\n{}}}\n",
        super::block(source, "LOAD")
    )
}

/// The shader's LOAD_HERE block where [`crate::plan::coop_load_in_loop`] holds: the key loop's
/// LOAD block as it then stands, for the pass's own tile, between the barrier that frees the K/V
/// tile and its stores. Made before the PREFETCH and AHEAD blocks are emptied.
fn load_here(source: &str) -> String {
    format!(
        "            let ahead = n0;\n{}",
        super::block(source, "LOAD")
    )
}

/// The key loop's LOAD block with [`load_function`].
const LOAD_CALL: &str =
    "            load_tile(&k_staged, &v_staged, k_base, v_base, batch, ahead, seq_kv, lid);\n";

/// The shader's STORAGE block for f32 or bf16 storage ([`crate::Attention::allow_f16_products`];
/// f16 keeps the file's own): the portable kernel's `Packed4` and conversions, and `half4`
/// rounding the four elements to f16 on the way in.
fn storage_block(storage: Storage) -> String {
    format!(
        "{}fn half4(x: Packed4) -> vec4<f16> {{ return vec4<f16>(unpack4(x)); }}\n",
        super::storage_wgsl(storage)
    )
}

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
         const ELEMENTS: bool = {};\nconst TWO_KV: bool = {};\nconst RESCALE_ALWAYS: bool = {};\nconst LOAD_ALWAYS: bool = {};\n",
        p.head_dim,
        t.block_n,
        t.threads_y,
        row_blocks,
        t.threads_x,
        super::forward::option_consts(
            p,
            crate::plan::coop_banded(p, plan.storage, plan.coop_elements),
        ),
        plan.subgroup_sync,
        if plan.subgroup_sync {
            "subgroupBarrier"
        } else {
            "workgroupBarrier"
        },
        plan.coop_elements,
        plan.coop_elements && plan.coop_kv_tiles == 2,
        crate::plan::coop_rescale_always(p.head_dim, plan.coop_elements),
        crate::plan::coop_load_always(p.head_dim, plan.coop_elements),
    );
    let lanes_per_row = t.threads_x / 16;
    let d16 = p.head_dim / 16;
    // Unrolled so that every index into the arrays of fragments and scores is a constant.
    let slots = if plan.coop_elements {
        2 * row_blocks
    } else {
        row_blocks
    };
    let mut text = super::ShaderText::new(SOURCE, header);
    let form = |label, make| super::BlockText { label, make };
    match plan.storage {
        Storage::F16 => {}
        Storage::F32 => {
            text = text.with_block("STORAGE", form("f32", |_| storage_block(Storage::F32)))
        }
        Storage::BF16Packed => {
            text = text.with_block(
                "STORAGE",
                form("bf16", |_| storage_block(Storage::BF16Packed)),
            );
        }
        Storage::F16Packed => unreachable!("the tensor-core tier reads f16 natively"),
    }
    match crate::plan::coop_stage(p.head_dim, plan.coop_elements) {
        CoopStage::Inline => {}
        CoopStage::KFirst => {
            text = text.with_block("STAGE", form("k first", |_| STAGE_K_FIRST.into()));
        }
        CoopStage::Wrapped => text = text.with_block("STAGE", form("wrapped", stage_wrapped)),
    }
    if crate::plan::coop_tree_form(p.head_dim, plan.coop_elements) {
        // Before LOAD_FN, which is made of the LOAD block as it then stands.
        text = text
            .with_block("SCORES_MAX", form("tree", |_| TREE_SCORES_MAX.into()))
            .with_block("PROBS", form("tree", |_| TREE_PROBS.into()))
            .with_block("LOAD_ROWS", form("stepped", load_rows_stepped));
    }
    if crate::plan::coop_load_in_function(p.head_dim, plan.coop_elements) {
        // The function is made from the LOAD block before the call replaces it.
        text = text
            .with_block("LOAD_FN", form("load_tile", load_function))
            .with_block("LOAD", form("call", |_| LOAD_CALL.into()));
    }
    if crate::plan::coop_load_in_loop(p.head_dim, plan.coop_elements) {
        // LOAD_HERE sits in the key loop's one-tile branch: with two K/V tiles the loads would
        // be dropped.
        assert_eq!(
            plan.coop_kv_tiles, 1,
            "loads in the key loop take one K/V tile"
        );
        // LOAD_HERE is made of the LOAD block, which the AHEAD block holds.
        text = text
            .with_block("LOAD_HERE", form("this tile", load_here))
            .with_block("AHEAD", form("none", |_| String::new()))
            .with_block("PREFETCH", form("none", |_| String::new()));
    }
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
/// element of C and A fragments where the kernel assumes it. `Err` says why not. One dispatch,
/// waited for (with any work already queued). A driver that fails to build the probe's pipeline
/// outright may lose the device, as with any pipeline; wgpu reports that through the device-lost
/// callback.
#[cfg(not(target_arch = "wasm32"))]
pub(crate) fn elements_work(
    device: &wgpu::Device,
    queue: &wgpu::Queue,
    caps: &crate::plan::DeviceCaps,
) -> Result<(), String> {
    let passthrough = device
        .features()
        .contains(wgpu::Features::PASSTHROUGH_SHADERS);
    let missing: Vec<String> = [
        (caps.backend != "Vulkan").then(|| format!("Vulkan (the backend is {})", caps.backend)),
        (!caps.coop_matrix_f16).then(|| "16x16x16 f16 cooperative matrices".to_string()),
        (caps.subgroup_sizes != Some((32, 32))).then(|| {
            format!(
                "subgroups of exactly 32 lanes (the device's: {:?})",
                caps.subgroup_sizes
            )
        }),
        (!passthrough).then(|| "PASSTHROUGH_SHADERS".to_string()),
    ]
    .into_iter()
    .flatten()
    .collect();
    if !missing.is_empty() {
        return Err(format!("needs {}", missing.join(", ")));
    }
    const ENTRY: &str = "probe_elements";
    let source = super::unroll(SOURCE, &[("EL", FRAGMENT_ELEMENTS)]);
    let words = super::spirv_elements::compile(&source, ENTRY, false, FRAGMENT_ELEMENTS)
        .map_err(|e| format!("the probe does not compile: {e}"))?;
    probe_verdict(&run_probe(device, queue, words, ENTRY)?)
}

/// Runs `entry_point` of the passed-through SPIR-V `words` as one workgroup of 32 invocations
/// with a 32-word buffer at binding 5 (every bit set first) and returns the buffer's words after.
#[cfg(not(target_arch = "wasm32"))]
pub(crate) fn run_probe(
    device: &wgpu::Device,
    queue: &wgpu::Queue,
    words: Vec<u32>,
    entry_point: &str,
) -> Result<Vec<u32>, String> {
    // Every kind of error the probe may raise is caught here (none reaches the device's handler).
    let scopes = [
        wgpu::ErrorFilter::Validation,
        wgpu::ErrorFilter::OutOfMemory,
        wgpu::ErrorFilter::Internal,
    ]
    .map(|filter| device.push_error_scope(filter));
    let module = super::spirv_elements::module(device, words, entry_point, 32);
    // The probe writes binding 5 (the kernel's lse_buf). wgpu's Vulkan backend numbers a
    // layout's bindings from 0 in order and renumbers naga's SPIR-V to match, but not SPIR-V
    // passed through: so the layout declares bindings 0 to 5, and 0 to 4 (unused by the probe,
    // so their types need not match the shader's) take one small read-only buffer.
    let entry = crate::context::storage_entry;
    let layout = device.create_bind_group_layout(&wgpu::BindGroupLayoutDescriptor {
        label: Some(entry_point),
        entries: &[
            entry(0, true),
            entry(1, true),
            entry(2, true),
            entry(3, true),
            entry(4, true),
            entry(5, false),
        ],
    });
    let pipeline = device.create_compute_pipeline(&wgpu::ComputePipelineDescriptor {
        label: Some(entry_point),
        layout: Some(
            &device.create_pipeline_layout(&wgpu::PipelineLayoutDescriptor {
                label: Some(entry_point),
                bind_group_layouts: &[Some(&layout)],
                immediate_size: 0,
            }),
        ),
        module: &module,
        entry_point: Some(entry_point),
        compilation_options: Default::default(),
        cache: None,
    });
    let bytes = 32 * 4;
    // Not zero, so that a probe that never ran does not pass.
    let counts = device.create_buffer(&wgpu::BufferDescriptor {
        label: Some(entry_point),
        size: bytes,
        usage: wgpu::BufferUsages::STORAGE | wgpu::BufferUsages::COPY_SRC,
        mapped_at_creation: true,
    });
    counts
        .slice(..)
        .get_mapped_range_mut()
        .map_err(|e| format!("the probe's buffer could not be filled: {e}"))?
        .copy_from_slice(&[0xff; 32 * 4]);
    counts.unmap();
    let read = device.create_buffer(&wgpu::BufferDescriptor {
        label: Some(entry_point),
        size: bytes,
        usage: wgpu::BufferUsages::MAP_READ | wgpu::BufferUsages::COPY_DST,
        mapped_at_creation: false,
    });
    let unused = device.create_buffer(&wgpu::BufferDescriptor {
        label: Some(entry_point),
        size: 16,
        usage: wgpu::BufferUsages::STORAGE,
        mapped_at_creation: false,
    });
    let entries: Vec<wgpu::BindGroupEntry> = (0..6)
        .map(|binding| wgpu::BindGroupEntry {
            binding,
            resource: if binding == 5 { &counts } else { &unused }.as_entire_binding(),
        })
        .collect();
    let group = device.create_bind_group(&wgpu::BindGroupDescriptor {
        label: Some(entry_point),
        layout: &layout,
        entries: &entries,
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
    let errors: Vec<String> = scopes
        .into_iter()
        .rev()
        .filter_map(|scope| pollster::block_on(scope.pop()))
        .map(|e| e.to_string())
        .collect();
    if !errors.is_empty() {
        return Err(format!("the probe raised {}", errors.join("; ")));
    }
    let bytes = pollster::block_on(crate::context::read_buffer(device, &read))
        .map_err(|e| format!("the probe's result could not be read: {e}"))?;
    Ok(bytemuck::cast_slice(&bytes).to_vec())
}

/// Bit 31 of a probe word (`RAN` in the shader): set in every word the probe wrote; the host
/// fills the buffer with ones first.
#[cfg(not(target_arch = "wasm32"))]
const RAN: u32 = 1 << 31;

/// Reads the probe's per-lane words (bit fields of `probe_elements`): `Err` names what failed.
#[cfg(not(target_arch = "wasm32"))]
fn probe_verdict(words: &[u32]) -> Result<(), String> {
    const FIELDS: [(&str, u32, u32); 6] = [
        ("C fragment length", 0, 1),
        ("A fragment length", 1, 1),
        ("C elements read in the wrong place", 4, 0xf),
        ("A elements read in the wrong place", 8, 0xf),
        ("A elements written to the wrong place", 12, 0xf),
        ("C elements written to the wrong place", 16, 0xf),
    ];
    if words.iter().all(|&w| w == RAN) {
        return Ok(());
    }
    let unwritten = words
        .iter()
        .filter(|&&w| w & RAN == 0 || w == u32::MAX)
        .count();
    if unwritten > 0 {
        return Err(format!(
            "the probe did not write {unwritten} of its {} words",
            words.len()
        ));
    }
    let failed: Vec<String> = FIELDS
        .iter()
        .filter_map(|&(what, shift, mask)| {
            let lanes = words.iter().filter(|&&w| (w >> shift) & mask != 0).count();
            (lanes > 0).then(|| format!("{what} (in {lanes} lanes)"))
        })
        .collect();
    Err(format!(
        "the fragment layout differs from the kernel's: {}",
        failed.join(", ")
    ))
}

// The probe and its SPIR-V exist on native targets only.
#[cfg(all(test, not(target_arch = "wasm32")))]
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

    /// The probe's host side: its dispatch runs and the words come back. (lavapipe also wrote
    /// them when the layout declared binding 5 alone, which on NVIDIA wrote nothing; so this
    /// does not guard the renumbering, the H200's probe verdict does.)
    #[test]
    fn a_passed_through_probe_writes_its_binding() {
        let ctx = crate::FlashContext::default_blocking().unwrap();
        let passthrough = ctx
            .device()
            .features()
            .contains(wgpu::Features::PASSTHROUGH_SHADERS);
        if ctx.caps().backend != "Vulkan" {
            // SPIR-V passes through to Vulkan only (wgpu's GL backend lists the feature but
            // takes no SPIR-V), so there the context must not have run the probe; the suite
            // runs on Vulkan too, where the rest of this test runs.
            let why = ctx.coop_elements_status().unwrap_err();
            assert!(why.contains("Vulkan (the backend is"), "{why}");
            return;
        }
        assert!(passthrough, "wgpu's Vulkan backend has PASSTHROUGH_SHADERS");
        let wgsl = "@group(0) @binding(5) var<storage, read_write> out: array<u32>;\n\
                    @compute @workgroup_size(32)\n\
                    fn probe(@builtin(local_invocation_index) i: u32) { out[i] = 3u * i; }";
        let module = naga::front::wgsl::parse_str(wgsl).unwrap();
        let info = naga::valid::Validator::new(
            naga::valid::ValidationFlags::all(),
            naga::valid::Capabilities::empty(),
        )
        .validate(&module)
        .unwrap();
        let words = naga::back::spv::write_vec(&module, &info, &Default::default(), None).unwrap();
        let got = super::run_probe(ctx.device(), ctx.queue(), words, "probe").unwrap();
        let want: Vec<u32> = (0..32).map(|i| 3 * i).collect();
        assert_eq!(got, want);
    }

    #[test]
    fn the_probe_verdict_names_what_failed() {
        use super::RAN;
        assert!(super::probe_verdict(&[RAN; 32]).is_ok());
        for untouched in [0, u32::MAX] {
            let why = super::probe_verdict(&[untouched; 32]).unwrap_err();
            assert!(why.contains("did not write 32 of its 32"), "{why}");
        }
        let mut words = [RAN; 32];
        words[5] = 0;
        let why = super::probe_verdict(&words).unwrap_err();
        assert!(why.contains("did not write 1 of"), "{why}");
        let mut words = [RAN; 32];
        words[3] = RAN | 1 | (2 << 12);
        let why = super::probe_verdict(&words).unwrap_err();
        assert!(
            why.contains("C fragment length (in 1 lanes)")
                && why.contains("A elements written")
                && !why.contains("A fragment length"),
            "{why}"
        );
    }
}
