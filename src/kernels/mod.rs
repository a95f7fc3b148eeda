//! One module per kernel family: each turns a [`crate::Plan`] into shader source, binds buffers,
//! fills its params uniform and records dispatches. Tile sizes come from the plan, never from here.

pub mod forward;
pub mod materialized;

use crate::plan::Storage;

const HEADER_BEGIN: &str = "// HEADER BEGIN\n";
const HEADER_END: &str = "// HEADER END\n";

/// Replaces the block between the `HEADER BEGIN` / `HEADER END` markers of a shader file with
/// `header`. The file's own block holds defaults that keep it valid WGSL on its own.
pub(crate) fn with_header(source: &str, header: &str) -> String {
    let begin = source
        .find(HEADER_BEGIN)
        .expect("shader has a HEADER BEGIN marker");
    let end = source
        .find(HEADER_END)
        .expect("shader has a HEADER END marker");
    let mut out = String::with_capacity(source.len() + header.len());
    // An `enable` directive must come before every declaration: put it first of all.
    if header.contains("enable f16;") {
        out.push_str("enable f16;\n");
    }
    out.push_str(&source[..begin]);
    out.push_str(HEADER_BEGIN);
    out.push_str(&header.replace("enable f16;\n", ""));
    out.push_str(&source[end..]);
    out
}

/// Unrolls the loops `for (var X = 0u; X < BOUND; X++) { BODY }` whose `BOUND` is one of the
/// given names: each becomes `{ let X = 0u; BODY } { let X = 1u; BODY } ...`.
///
/// WGSL has no unroll hint, and a register array indexed by a loop counter may be placed in slow
/// local memory by a driver that does not unroll the loop itself; with the counter a constant in
/// each copy, every index into such an array is constant. Nested loops are unrolled too.
pub(crate) fn unroll(source: &str, bounds: &[(&str, u32)]) -> String {
    let mut out = source.to_string();
    loop {
        let Some((start, var, count)) = bounds.iter().find_map(|&(name, count)| {
            find_loop(&out, name).map(|(start, var)| (start, var, count))
        }) else {
            return out;
        };
        let open = start + out[start..].find('{').expect("a for loop has a body");
        let close = matching_brace(&out, open);
        let body = &out[open + 1..close];
        let copies: String = (0..count)
            .map(|k| format!("{{ let {var} = {k}u;{body}}}"))
            .collect();
        out.replace_range(start..=close, &copies);
    }
}

/// Finds `for (var X = 0u; X < bound; X++)`, returning its start and `X`.
fn find_loop(source: &str, bound: &str) -> Option<(usize, String)> {
    let mut from = 0;
    while let Some(at) = source[from..].find("for (var ") {
        let start = from + at;
        let header_end = start + source[start..].find(')')?;
        let header = &source[start + "for (var ".len()..header_end];
        let var = header.split(' ').next()?.to_string();
        if header == format!("{var} = 0u; {var} < {bound}; {var}++") {
            return Some((start, var));
        }
        from = header_end;
    }
    None
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
    }
}
