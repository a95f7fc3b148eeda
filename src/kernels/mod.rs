//! One module per kernel family: each turns a [`crate::Plan`] into shader source, binds buffers,
//! fills its params uniform and records dispatches. Tile sizes come from the plan, never from here.

pub mod coop;
pub mod decode;
pub mod forward;
pub mod materialized;
#[cfg(not(target_arch = "wasm32"))]
pub(crate) mod spirv_elements;

use crate::context::AttentionBuffers;
use crate::error::{FlashError, Result};
use crate::plan::Storage;
use crate::problem::{Attention, Tensor};
use forward::BindRange;

/// Checks the caller's Q, K, V and O buffers against the problem (usage, size, offset) and that
/// O shares its buffer with none of them; returns where each binding starts and its size.
pub(crate) fn tensor_ranges(
    p: &Attention,
    buffers: &AttentionBuffers,
    storage: Storage,
    align: u64,
) -> Result<[BindRange; 4]> {
    let tensors = [
        (Tensor::Q, buffers.q),
        (Tensor::K, buffers.k),
        (Tensor::V, buffers.v),
        (Tensor::O, buffers.out),
    ];
    let mut ranges = [BindRange {
        offset: 0,
        size: 0,
        first4: 0,
    }; 4];
    for (range, (tensor, tb)) in ranges.iter_mut().zip(tensors) {
        crate::context::check_usage(tensor.name(), tb.buffer)?;
        *range = forward::bind_range(
            tensor.name(),
            tb.offset,
            p.span_of(tensor),
            forward::element_bytes(storage),
            tb.buffer.size(),
            align,
        )?;
    }
    let users = tensors
        .iter()
        .filter(|(_, tb)| tb.buffer == buffers.out.buffer)
        .count();
    if users > 1 {
        return Err(FlashError::BadLayout {
            tensor: "out",
            what: "buffer",
            got: users as u64,
            why: "an output buffer must not also hold another tensor of the same pass",
        });
    }
    Ok(ranges)
}

/// Offset and (batch, seq, head) strides of a tensor in vec4 units, as the shaders' params hold them.
pub(crate) fn strides4(p: &Attention, tensor: Tensor, first4: u32) -> [u32; 4] {
    let s = p.strides_of(tensor);
    [
        first4,
        (s.batch / 4) as u32,
        (s.seq / 4) as u32,
        (s.head / 4) as u32,
    ]
}

/// The bind group both attention layouts share: params at 0, Q K V O at 1..4, and `extra` from 5
/// on (the forward kernel's LSE, ALiBi slopes and sinks; the baseline's scores).
pub(crate) fn bind_group<'a>(
    device: &wgpu::Device,
    layout: &wgpu::BindGroupLayout,
    uniform: &wgpu::Buffer,
    buffers: &AttentionBuffers,
    ranges: &[BindRange; 4],
    extra: impl IntoIterator<Item = wgpu::BindingResource<'a>>,
) -> wgpu::BindGroup {
    let tensor = |b, r: &BindRange| {
        wgpu::BindingResource::Buffer(wgpu::BufferBinding {
            buffer: b,
            offset: r.offset,
            size: std::num::NonZeroU64::new(r.size),
        })
    };
    let tensors = [
        buffers.q.buffer,
        buffers.k.buffer,
        buffers.v.buffer,
        buffers.out.buffer,
    ];
    let mut entries = vec![wgpu::BindGroupEntry {
        binding: 0,
        resource: uniform.as_entire_binding(),
    }];
    for (k, (b, r)) in tensors.into_iter().zip(ranges).enumerate() {
        entries.push(wgpu::BindGroupEntry {
            binding: k as u32 + 1,
            resource: tensor(b, r),
        });
    }
    for (k, resource) in extra.into_iter().enumerate() {
        entries.push(wgpu::BindGroupEntry {
            binding: 5 + k as u32,
            resource,
        });
    }
    device.create_bind_group(&wgpu::BindGroupDescriptor {
        label: Some("attention"),
        layout,
        entries: &entries,
    })
}

/// A kernel's WGSL as a plan specialises it: a shader file, the constants that replace its HEADER
/// block, other blocks of the file replaced where the plan asks for it, and the loops to
/// unroll. [`ShaderText::key`] names the text without generating it, so a plan made every step
/// (a serving loop) finds its pipeline without rendering and hashing the whole shader.
pub(crate) struct ShaderText {
    file: &'static str,
    header: String,
    /// Blocks of the file (each between `// NAME BEGIN` and `// NAME END`), in the order they are
    /// replaced, each with what replaces it.
    blocks: Vec<(&'static str, BlockText)>,
    unroll: Vec<(&'static str, u32)>,
    /// Compiled to SPIR-V here and passed through, for element access to cooperative matrices
    /// ([`spirv_elements`]): the workgroup's invocations, which the passthrough entry point names.
    pub(crate) spirv: Option<u32>,
}

impl ShaderText {
    /// `file` with `header` in place of its HEADER block.
    pub(crate) fn new(file: &'static str, header: String) -> Self {
        ShaderText {
            file,
            header,
            blocks: Vec::new(),
            unroll: Vec::new(),
            spirv: None,
        }
    }

    /// The same, compiled through [`spirv_elements`].
    pub(crate) fn through_spirv(mut self, threads: u32) -> Self {
        self.spirv = Some(threads);
        self
    }

    /// The same with the file's block `name` (its lines between `// {name} BEGIN` and
    /// `// {name} END`) replaced by `text`, after the blocks replaced before it and before any
    /// loop is unrolled.
    pub(crate) fn with_block(mut self, name: &'static str, text: BlockText) -> Self {
        assert!(
            self.blocks.iter().all(|&(n, _)| n != name),
            "block {name} replaced twice"
        );
        self.blocks.push((name, text));
        self
    }

    /// The same with the loops bounded by these names unrolled (see [`unroll`]).
    pub(crate) fn unrolled(mut self, bounds: &[(&'static str, u32)]) -> Self {
        self.unroll = bounds.to_vec();
        self
    }

    /// What determines the text: the file (by address and length: each is a `'static` include),
    /// the header, the replaced blocks (by name and label), the unrolled bounds and whether it
    /// goes through SPIR-V.
    pub(crate) fn key(&self) -> String {
        let blocks: Vec<_> = self.blocks.iter().map(|(n, b)| (n, b.label)).collect();
        format!(
            "{:p}+{}\n{:?}\n{:?}{}\n{}",
            self.file.as_ptr(),
            self.file.len(),
            blocks,
            self.unroll,
            if self.spirv.is_some() { " spirv" } else { "" },
            self.header
        )
    }

    /// The WGSL.
    pub(crate) fn render(&self) -> String {
        let mut text = with_header(shader_file(self.file), &self.header);
        for (name, block) in &self.blocks {
            text = with_block(&text, name, &(block.make)(&text));
        }
        if self.unroll.is_empty() {
            text
        } else {
            unroll(&text, &self.unroll)
        }
    }
}

/// What replaces a block of a shader file: a text made from the shader as it stands when the
/// block is replaced (a fixed text ignores it), so that a form made from the file's own code
/// follows the file, a developer's copy too.
pub(crate) struct BlockText {
    /// Names the text in [`ShaderText::key`]: one label, one text, for a given file.
    pub(crate) label: &'static str,
    pub(crate) make: fn(&str) -> String,
}

/// The crate's shader files by name (their names under `shaders/`), for [`SHADER_DIR_VAR`].
#[cfg(not(target_arch = "wasm32"))]
const SHADER_FILES: [(&str, &str); 7] = [
    ("flash_fwd.wgsl", forward::SOURCE),
    ("flash_fwd_coop.wgsl", coop::SOURCE),
    ("materialized.wgsl", materialized::SOURCE),
    ("flash_decode.wgsl", decode::ATTENTION_SOURCE),
    (
        "flash_decode_subgroup.wgsl",
        decode::ATTENTION_SUBGROUP_SOURCE,
    ),
    ("decode_combine.wgsl", decode::COMBINE_SOURCE),
    ("kv_append.wgsl", decode::APPEND_SOURCE),
];

/// Where a developer's copies of shader files stand in for the crate's own.
pub const SHADER_DIR_VAR: &str = "WGPU_FLASH_ATTN_SHADER_DIR";

/// The text of one of the crate's shader files: the built-in one, or, where the environment
/// variable [`SHADER_DIR_VAR`] names a folder holding a file of the same name, that file's text
/// (read once per process; native only). For trying a change to a kernel without rebuilding the
/// program that runs it. A file that cannot be read, other than a missing one, panics: a silent
/// fallback would measure the wrong kernel.
fn shader_file(file: &'static str) -> &'static str {
    #[cfg(not(target_arch = "wasm32"))]
    {
        use std::collections::HashMap;
        use std::sync::OnceLock;
        static OVERRIDES: OnceLock<HashMap<&str, &'static str>> = OnceLock::new();
        let overrides = OVERRIDES.get_or_init(|| {
            let Some(dir) = std::env::var_os(SHADER_DIR_VAR) else {
                return HashMap::new();
            };
            let dir = std::path::PathBuf::from(dir);
            let mut found = HashMap::new();
            for (name, _) in SHADER_FILES {
                let path = dir.join(name);
                match std::fs::read_to_string(&path) {
                    Ok(text) => {
                        found.insert(name, &*Box::leak(text.into_boxed_str()));
                    }
                    Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
                    Err(e) => panic!("{SHADER_DIR_VAR}: cannot read {}: {e}", path.display()),
                }
            }
            found
        });
        if !overrides.is_empty() {
            // By text, not address: a constant's uses need not share one copy.
            let name = SHADER_FILES.iter().find(|&&(_, source)| source == file);
            if let Some(text) = name.and_then(|(name, _)| overrides.get(name)) {
                return text;
            }
        }
    }
    file
}

/// `source` with the lines between `// {name} BEGIN` and `// {name} END` replaced by `text` (the
/// markers stay): the HEADER block of every shader file, and other blocks where a plan asks for
/// them (public for the benchmarks' own kernels, which follow the same convention). Each marker
/// must stand once, on a line of its own (indented with spaces or not), BEGIN first; a text that
/// breaks that (a developer's copy, see [`SHADER_DIR_VAR`]) panics: running it unchanged would
/// build another kernel than the plan asks for.
pub fn with_block(source: &str, name: &str, text: &str) -> String {
    let at = block_lines(source, name);
    format!("{}{text}{}", &source[..at.start], &source[at.end..])
}

/// The lines of `source` between `// {name} BEGIN` and `// {name} END` (as [`with_block`]
/// finds them).
pub fn block<'a>(source: &'a str, name: &str) -> &'a str {
    &source[block_lines(source, name)]
}

/// Where the block `name` of `source` lies: from the line after its BEGIN marker to the start
/// of its END marker's line. Panics as [`with_block`] says.
fn block_lines(source: &str, name: &str) -> std::ops::Range<usize> {
    let begin = format!("// {name} BEGIN\n");
    let end = format!("// {name} END\n");
    // Where `line` stands as a whole line of `source`, after nothing but indentation.
    let lines = |line: &str| -> Vec<usize> {
        source
            .match_indices(line)
            .map(|(at, _)| at)
            .filter(|&at| {
                let start = source[..at].rfind('\n').map_or(0, |n| n + 1);
                source[start..at].bytes().all(|b| b == b' ')
            })
            .collect()
    };
    let (b, e) = (lines(&begin), lines(&end));
    assert!(
        !b.is_empty() && !e.is_empty(),
        "a shader text lacks the lines `// {name} BEGIN` and `// {name} END` that the plan \
         replaces the block between (a copy in {SHADER_DIR_VAR} must keep them)"
    );
    assert!(
        b.len() == 1 && e.len() == 1 && b[0] < e[0],
        "a shader text needs `// {name} BEGIN` once, then `// {name} END` once"
    );
    // The END line from its indentation on.
    let end_line = source[..e[0]].rfind('\n').map_or(0, |n| n + 1);
    b[0] + begin.len()..end_line
}

/// Replaces the HEADER block of a shader file with `header` (an `enable f16;` in it goes first of
/// all, as WGSL requires). The file's own block holds defaults that keep it valid WGSL on its own.
pub fn with_header(source: &str, header: &str) -> String {
    let body = with_block(source, "HEADER", &header.replace("enable f16;\n", ""));
    // An `enable` directive must come before every declaration: put it first of all.
    if header.contains("enable f16;") {
        format!("enable f16;\n{body}")
    } else {
        body
    }
}

/// Unrolls the loops `for (var X = 0u; X < BOUND; X++) { BODY }` whose `BOUND` is one of the
/// given names: each becomes `{ let X = 0u; BODY } { let X = 1u; BODY } ...`.
///
/// WGSL has no unroll hint, and a register array indexed by a loop counter may be placed in slow
/// local memory by a driver that does not unroll the loop itself; with the counter a constant in
/// each copy, every index into such an array is constant. Nested loops are unrolled too.
pub(crate) fn unroll(source: &str, bounds: &[(&str, u32)]) -> String {
    let mut out = String::with_capacity(2 * source.len());
    unroll_into(source, bounds, &mut out);
    out
}

/// Appends `source` with its loops unrolled to `out`: one pass, each loop's body unrolled once
/// before it is copied (so the work is linear in the output, not in loops times source).
fn unroll_into(source: &str, bounds: &[(&str, u32)], out: &mut String) {
    let mut rest = source;
    while let Some(at) = rest.find("for (var ") {
        let header_end = at + rest[at..].find(')').expect("a for loop has a header");
        let header = &rest[at + "for (var ".len()..header_end];
        let var = header.split(' ').next().unwrap_or_default();
        let count = bounds.iter().find_map(|&(bound, count)| {
            (header == format!("{var} = 0u; {var} < {bound}; {var}++")).then_some(count)
        });
        let Some(count) = count else {
            // Not one to unroll: keep its header, and look for loops inside it.
            out.push_str(&rest[..header_end]);
            rest = &rest[header_end..];
            continue;
        };
        out.push_str(&rest[..at]);
        let open = at + rest[at..].find('{').expect("a for loop has a body");
        let close = matching_brace(rest, open);
        let body = &rest[open + 1..close];
        // Copies in plain blocks cannot `continue` or `break` the loop they came from.
        debug_assert!(
            !body.contains("continue") && !body.contains("break"),
            "unrolled loop body uses continue/break"
        );
        let mut inner = String::with_capacity(body.len());
        unroll_into(body, bounds, &mut inner);
        for k in 0..count {
            out.push_str(&format!("{{ let {var} = {k}u;{inner}}}"));
        }
        rest = &rest[close + 1..];
    }
    out.push_str(rest);
}

fn matching_brace(source: &str, open: usize) -> usize {
    let mut depth = 0usize;
    for (k, ch) in source[open..].char_indices() {
        match ch {
            '{' => depth += 1,
            '}' => {
                depth -= 1;
                if depth == 0 {
                    return open + k;
                }
            }
            _ => {}
        }
    }
    panic!("unbalanced braces in a shader")
}

/// WGSL that defines `Packed4` (four stored elements) and its conversions to and from `vec4<f32>`.
pub(crate) fn storage_wgsl(storage: Storage) -> &'static str {
    match storage {
        Storage::F32 => {
            "alias Packed4 = vec4<f32>;\n\
             fn unpack4(x: Packed4) -> vec4<f32> { return x; }\n\
             fn pack4(x: vec4<f32>) -> Packed4 { return x; }\n"
        }
        Storage::F16 => {
            "enable f16;\n\
             alias Packed4 = vec4<f16>;\n\
             fn unpack4(x: Packed4) -> vec4<f32> { return vec4<f32>(x); }\n\
             fn pack4(x: vec4<f32>) -> Packed4 { return vec4<f16>(x); }\n"
        }
        Storage::F16Packed => {
            "alias Packed4 = vec2<u32>;\n\
             fn unpack4(x: Packed4) -> vec4<f32> { return vec4<f32>(unpack2x16float(x.x), unpack2x16float(x.y)); }\n\
             fn pack4(x: vec4<f32>) -> Packed4 { return vec2<u32>(pack2x16float(x.xy), pack2x16float(x.zw)); }\n"
        }
        // bf16 is the upper half of an f32: unpack by shifting, pack by rounding to nearest even.
        Storage::BF16Packed => {
            "alias Packed4 = vec2<u32>;\n\
             fn bf16_pair(w: u32) -> vec2<f32> { return vec2<f32>(bitcast<f32>(w << 16u), bitcast<f32>(w & 0xffff0000u)); }\n\
             fn bf16_round(x: f32) -> u32 { let u = bitcast<u32>(x); return (u + 0x7fffu + ((u >> 16u) & 1u)) >> 16u; }\n\
             fn unpack4(x: Packed4) -> vec4<f32> { return vec4<f32>(bf16_pair(x.x), bf16_pair(x.y)); }\n\
             fn pack4(x: vec4<f32>) -> Packed4 {\n\
                 return vec2<u32>(bf16_round(x.x) | (bf16_round(x.y) << 16u), bf16_round(x.z) | (bf16_round(x.w) << 16u));\n\
             }\n"
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_shader_text_key_tells_apart_whatever_changes_its_rendering() {
        let file: &'static str = "x;\n// HEADER BEGIN\nconst N: u32 = 1u;\n// HEADER END\nfor (var i = 0u; i < N; i++) { i; }\n// B BEGIN\nfn f() {}\n// B END\n";
        let other: &'static str = "y;\n// HEADER BEGIN\n// HEADER END\n";
        let text = |header: &str| ShaderText::new(file, header.to_string());
        let base = text("const N: u32 = 2u;\n").unrolled(&[("N", 2)]);
        assert_eq!(
            base.render(),
            unroll(&with_header(file, "const N: u32 = 2u;\n"), &[("N", 2)])
        );
        assert_eq!(
            base.key(),
            text("const N: u32 = 2u;\n").unrolled(&[("N", 2)]).key()
        );
        for changed in [
            text("const N: u32 = 3u;\n").unrolled(&[("N", 2)]),
            text("const N: u32 = 2u;\n").unrolled(&[("N", 3)]),
            text("const N: u32 = 2u;\n"),
            ShaderText::new(other, "const N: u32 = 2u;\n".into()).unrolled(&[("N", 2)]),
            text("const N: u32 = 2u;\n")
                .with_block("B", G)
                .unrolled(&[("N", 2)]),
        ] {
            assert_ne!(changed.key(), base.key());
            assert_ne!(changed.render(), base.render());
        }
    }

    /// Test blocks: fixed texts, and one made from the text it goes into.
    const G: BlockText = BlockText {
        label: "g",
        make: |_| "fn g() {}\n".into(),
    };
    const LOOP: BlockText = BlockText {
        label: "loop",
        make: |_| "for (var i = 0u; i < N; i++) { i; }\n".into(),
    };
    const B_AS_FUNCTION: BlockText = BlockText {
        label: "b as function",
        make: |source| format!("fn h() {{\n{}}}\n", block(source, "B")),
    };
    const CALL: BlockText = BlockText {
        label: "call",
        make: |_| "    h();\n".into(),
    };

    #[test]
    fn a_block_is_replaced_between_its_markers_before_unrolling() {
        let file = "a;\n// B BEGIN\nfn f() {}\n// B END\nb;\n";
        assert_eq!(
            with_block(file, "B", "fn g() {}\n"),
            "a;\n// B BEGIN\nfn g() {}\n// B END\nb;\n"
        );
        assert_eq!(block(file, "B"), "fn f() {}\n");
        let text = ShaderText::new(
            "// HEADER BEGIN\n// HEADER END\n// B BEGIN\n// B END\n",
            String::new(),
        )
        .with_block("B", LOOP)
        .unrolled(&[("N", 2)]);
        assert!(text.render().contains("{ let i = 1u; i; }"));
        // Indented markers, and two blocks of one file in order: C is made from B as the file
        // has it, then B is replaced.
        let file = "// HEADER BEGIN\n// HEADER END\nfn f() {\n    // B BEGIN\n    a;\n    // B END\n}\n// C BEGIN\n// C END\n";
        let text = ShaderText::new(file, String::new())
            .with_block("C", B_AS_FUNCTION)
            .with_block("B", CALL);
        assert_eq!(
            text.render(),
            "// HEADER BEGIN\n// HEADER END\nfn f() {\n    // B BEGIN\n    h();\n    // B END\n}\n// C BEGIN\nfn h() {\n    a;\n}\n// C END\n"
        );
        assert_ne!(
            text.key(),
            ShaderText::new(file, String::new())
                .with_block("C", B_AS_FUNCTION)
                .key()
        );
        for broken in [
            "a;\n",
            "a;\n// B END\n// B BEGIN\n",
            "a;\n// B BEGIN\n// B END\n// B BEGIN\n// B END\n",
            "a; // B BEGIN\n// B END\n",
        ] {
            let run = std::panic::catch_unwind(|| with_block(broken, "B", "b;\n"));
            assert!(run.is_err(), "{broken:?} must not pass unchanged");
        }
    }

    #[test]
    fn unrolled_copies_have_constant_counters_and_nested_loops_unroll_too() {
        let source = "a; for (var i = 0u; i < N; i++) { x[i] = 0; for (var j = 0u; j < M; j++) { y[j] = i; } } \
                      for (var k = 0u; k < K; k++) { k; } b;";
        assert_eq!(
            unroll(source, &[("N", 2), ("M", 2)]),
            "a; { let i = 0u; x[i] = 0; { let j = 0u; y[j] = i; }{ let j = 1u; y[j] = i; } }\
             { let i = 1u; x[i] = 0; { let j = 0u; y[j] = i; }{ let j = 1u; y[j] = i; } } \
             for (var k = 0u; k < K; k++) { k; } b;"
        );
    }

    #[test]
    fn no_loop_with_a_listed_bound_is_left_in_any_kernel() {
        use crate::kvcache::{self, DecodeKernel, KvCacheAttention};
        use crate::plan::{DeviceCaps, Kernel, PlanOptions, Storage};
        use crate::problem::{Attention, DType};
        // Each generator's own text, for a plan of each kernel: every bound it lists is a loop
        // bound of its file, and none of those loops is left after unrolling.
        let mut caps = DeviceCaps::webgpu_defaults();
        caps.max_workgroup_storage_bytes = 49152;
        caps.max_invocations_per_workgroup = 1024;
        caps.max_workgroup_size_x = 1024;
        caps.shader_f16 = true;
        caps.coop_matrix_f16 = true;
        caps.subgroup_sizes = Some((32, 32));
        let problem = Attention::new(1, 4, 2, 256, 256, 128).dtype(DType::F16);
        // The portable and subgroup kernels with their products' loops unrolled too (Q streamed
        // with the NVIDIA table's tiles, so that P V's unrolls as well).
        let streamed = crate::tuning::streamed_q_tiles(
            &DeviceCaps {
                vendor: 0x10de,
                ..caps.clone()
            },
            128,
        )[0];
        let mut texts: Vec<ShaderText> = [
            (Kernel::ForwardPortable, None),
            (Kernel::ForwardSubgroup, None),
            (Kernel::ForwardCoopMatrix, None),
            (Kernel::ForwardPortable, Some(streamed)),
            (Kernel::ForwardSubgroup, Some(streamed)),
        ]
        .into_iter()
        .map(|(kernel, tiles)| {
            let options = PlanOptions {
                kernel: Some(kernel),
                tiles,
                unroll: Some(tiles.is_some()),
                ..Default::default()
            };
            let plan = crate::plan::plan_with(&problem, &caps, options).unwrap();
            assert_eq!(plan.unroll_pv, tiles.is_some());
            forward::shader_text(&plan)
        })
        .collect();
        let step = KvCacheAttention::decode(32, 8, 128, 1, &[4096; 2], 4096).dtype(DType::F16);
        for kernel in [DecodeKernel::Portable, DecodeKernel::Subgroup] {
            let tiles = kvcache::default_tiles(&step, kernel, &caps).unwrap();
            let plan = kvcache::plan_with(&step, &caps, Some(tiles)).unwrap();
            texts.push(decode::attention_text(&plan));
        }
        texts.push(materialized::shader_text(&problem, Storage::F16));
        for text in texts {
            let out = text.render();
            assert!(!text.unroll.is_empty());
            for (bound, _) in &text.unroll {
                assert!(
                    text.file.contains(&format!(" < {bound}; ")),
                    "{bound} is not a loop bound"
                );
                assert!(
                    !out.contains(&format!(" < {bound}; ")),
                    "a loop to {bound} is left"
                );
            }
        }
    }
}
