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
