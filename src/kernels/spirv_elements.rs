//! Element access to cooperative matrices, which WGSL lacks: the kernel calls stub functions
//! named `coop_get_*(m, i)` and `coop_set_*(m, i, x)` with `i` a literal (or a `let` of one, as in
//! the host's unrolled loops; naga does not fold arithmetic there into a constant); after naga writes
//! SPIR-V, every call becomes OpCompositeExtract / OpCompositeInsert of invocation-local element
//! `i` (SPV_KHR_cooperative_matrix allows both), and the stubs are removed. Which (row, column)
//! an element is depends on the implementation; it is probed on the device.

const OP_NAME: u32 = 5;
const OP_CONSTANT: u32 = 43;
const OP_FUNCTION: u32 = 54;
const OP_FUNCTION_PARAMETER: u32 = 55;
const OP_FUNCTION_END: u32 = 56;
const OP_FUNCTION_CALL: u32 = 57;
const OP_COMPOSITE_EXTRACT: u32 = 81;
const OP_COMPOSITE_INSERT: u32 = 82;
const OP_LABEL: u32 = 248;
const OP_COOPERATIVE_MATRIX_LENGTH: u32 = 4460;

/// WGSL -> SPIR-V of one compute entry point with the element-access stubs replaced (indices
/// below `elements`, the elements a lane holds of each fragment). Index clamps only when
/// `checked` (`WGPU_FLASH_ATTN_SHADER_CHECKS`; storage accesses stay unclamped, as in the crate's
/// other kernels, which the plan checks against the bound buffers).
pub fn compile(wgsl: &str, entry: &str, checked: bool, elements: u32) -> Result<Vec<u32>, String> {
    let module = naga::front::wgsl::parse_str(wgsl).map_err(|e| e.emit_to_string(wgsl))?;
    let info = naga::valid::Validator::new(
        naga::valid::ValidationFlags::all(),
        naga::valid::Capabilities::all(),
    )
    .validate(&module)
    .map_err(|e| e.emit_to_string(wgsl))?;
    let options = naga::back::spv::Options {
        lang_version: (1, 5),
        flags: naga::back::spv::WriterFlags::DEBUG,
        bounds_check_policies: naga::proc::BoundsCheckPolicies {
            index: if checked {
                naga::proc::BoundsCheckPolicy::Restrict
            } else {
                naga::proc::BoundsCheckPolicy::Unchecked
            },
            buffer: naga::proc::BoundsCheckPolicy::Unchecked,
            image_load: naga::proc::BoundsCheckPolicy::Unchecked,
            binding_array: naga::proc::BoundsCheckPolicy::Unchecked,
        },
        zero_initialize_workgroup_memory: naga::back::spv::ZeroInitializeWorkgroupMemoryMode::None,
        force_loop_bounding: true,
        ..Default::default()
    };
    let pipeline = naga::back::spv::PipelineOptions {
        shader_stage: naga::ShaderStage::Compute,
        entry_point: entry.into(),
    };
    let words = naga::back::spv::write_vec(&module, &info, &options, Some(&pipeline))
        .map_err(|e| e.to_string())?;
    replace_element_stubs(&words, elements)
}

/// A shader module of `words` (from [`compile`]) with its one compute entry point, passed through
/// to the driver as it is. Its pipeline layout must declare bindings 0, 1, 2, ... without gaps:
/// wgpu's Vulkan backend numbers a layout's bindings from 0 in order, and renumbers naga's
/// SPIR-V to match, but not SPIR-V passed through (a probe bound at 5 alone wrote nothing).
pub(crate) fn module(
    device: &wgpu::Device,
    words: Vec<u32>,
    entry: &str,
    threads: u32,
) -> wgpu::ShaderModule {
    let entry_points = [wgpu::PassthroughShaderEntryPoint {
        name: entry.into(),
        workgroup_size: (threads, 1, 1),
    }];
    // SAFETY: naga's SPIR-V of a module whose WGSL naga validated; the rewrite only replaced
    // calls of stubs by element access to cooperative matrices at constant indices below the
    // element count (checked there, and on the device by the probe) and removed the stubs.
    unsafe {
        device.create_shader_module_passthrough(wgpu::ShaderModuleDescriptorPassthrough {
            label: Some(entry),
            entry_points: entry_points.as_slice().into(),
            spirv: Some(words.into()),
            ..Default::default()
        })
    }
}

/// The instructions of a module (after its 5-word header) as word slices.
fn instructions(words: &[u32]) -> Result<Vec<&[u32]>, String> {
    let mut out = Vec::new();
    let mut at = 5;
    while at < words.len() {
        let count = (words[at] >> 16) as usize;
        if count == 0 || at + count > words.len() {
            return Err(format!("malformed SPIR-V at word {at}"));
        }
        out.push(&words[at..at + count]);
        at += count;
    }
    Ok(out)
}

fn name_of(operands: &[u32]) -> String {
    let bytes: Vec<u8> = operands.iter().flat_map(|w| w.to_le_bytes()).collect();
    let end = bytes.iter().position(|&b| b == 0).unwrap_or(bytes.len());
    String::from_utf8_lossy(&bytes[..end]).into_owned()
}

#[derive(Clone, Copy, PartialEq)]
enum Stub {
    /// `coop_get_*(m, i)`: element i.
    Get,
    /// `coop_set_*(m, i, x)`: m with element i replaced by x.
    Set,
    /// `coop_len_*(m)`: how many elements a lane holds of m's type.
    Len,
}

/// Rewrites calls of the stubs (found by their debug names) into element access, refusing any
/// index of `elements` or more, and removes the stubs with every debug name of what they
/// defined. An error if the module has no stub: the caller's kernel relies on them.
pub fn replace_element_stubs(words: &[u32], elements: u32) -> Result<Vec<u32>, String> {
    use std::collections::{HashMap, HashSet};
    let insts = instructions(words)?;
    let mut stubs = HashMap::new();
    let mut constants = HashMap::new();
    for inst in &insts {
        let op = inst[0] & 0xffff;
        if op == OP_NAME && inst.len() >= 3 {
            let name = name_of(&inst[2..]);
            let kind = [
                ("coop_get_", Stub::Get),
                ("coop_set_", Stub::Set),
                ("coop_len_", Stub::Len),
            ]
            .into_iter()
            .find_map(|(prefix, kind)| name.starts_with(prefix).then_some(kind));
            if let Some(kind) = kind {
                stubs.insert(inst[1], kind);
            }
        } else if op == OP_CONSTANT && inst.len() == 4 {
            constants.insert(inst[2], inst[3]);
        }
    }
    if stubs.is_empty() {
        return Err("no element-access stub in the module (are debug names on?)".into());
    }
    // What the stubs define (their parameters' types, for Len; every id, for the names to drop).
    let mut first_param_type = HashMap::new();
    let mut defined_in_stubs = HashSet::new();
    let mut current = None;
    for inst in &insts {
        let op = inst[0] & 0xffff;
        if op == OP_FUNCTION {
            current = stubs.contains_key(&inst[2]).then_some(inst[2]);
        }
        if let Some(stub) = current {
            // The function, its parameters and values: the id is word 2 (word 1 for a label);
            // where word 2 is no id (a store), dropping a name for it costs nothing.
            let at = if op == OP_LABEL { 1 } else { 2 };
            defined_in_stubs.extend(inst.get(at).copied());
            if op == OP_FUNCTION_PARAMETER {
                first_param_type.entry(stub).or_insert(inst[1]);
            }
        }
        if op == OP_FUNCTION_END {
            current = None;
        }
    }
    let mut out = words[..5].to_vec();
    let mut skipping = false;
    for inst in &insts {
        let op = inst[0] & 0xffff;
        if skipping {
            skipping = op != OP_FUNCTION_END;
            continue;
        }
        match op {
            OP_FUNCTION if stubs.contains_key(&inst[2]) => skipping = true,
            OP_NAME if stubs.contains_key(&inst[1]) || defined_in_stubs.contains(&inst[1]) => {}
            OP_FUNCTION_CALL if stubs.contains_key(&inst[3]) => {
                let (ty, id, args) = (inst[1], inst[2], &inst[4..]);
                let index = |arg: u32| match constants.get(&arg) {
                    Some(&i) if i < elements => Ok(i),
                    Some(i) => Err(format!(
                        "element index {i} of %{id} is not below {elements}"
                    )),
                    None => Err(format!("element index of %{id} is not a constant")),
                };
                match (stubs[&inst[3]], args) {
                    (Stub::Set, [m, i, x]) => {
                        out.extend([(6 << 16) | OP_COMPOSITE_INSERT, ty, id, *x, *m, index(*i)?])
                    }
                    (Stub::Get, [m, i]) => {
                        out.extend([(5 << 16) | OP_COMPOSITE_EXTRACT, ty, id, *m, index(*i)?])
                    }
                    (Stub::Len, [_]) => {
                        let matrix = first_param_type[&inst[3]];
                        out.extend([(4 << 16) | OP_COOPERATIVE_MATRIX_LENGTH, ty, id, matrix]);
                    }
                    _ => return Err(format!("stub call %{id} has the wrong number of arguments")),
                }
            }
            _ => out.extend_from_slice(inst),
        }
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    const SHADER: &str = r#"
enable f16;
enable wgpu_cooperative_matrix;
@group(0) @binding(0) var<storage, read_write> out: array<f32>;
var<workgroup> tile: array<f32, 256>;
var<workgroup> tile_h: array<f16, 256>;
fn coop_get_c(m: coop_mat16x16<f32, C>, i: u32) -> f32 { return 0.0; }
fn coop_set_a(m: coop_mat16x16<f16, A>, i: u32, x: f16) -> coop_mat16x16<f16, A> { return m; }
fn coop_len_c(m: coop_mat16x16<f32, C>) -> u32 { return 0u; }
@compute @workgroup_size(32)
fn main(@builtin(local_invocation_index) lid: u32) {
    let c = coopLoadT<coop_mat16x16<f32, C>>(&tile[0], 16u);
    // As the host's unrolled loops bind their counters: a `let` of a literal.
    let k = 7u;
    out[lid] = coop_get_c(c, 0u) + coop_get_c(c, k) + f32(coop_len_c(c));
    let a = coop_set_a(coopLoadT<coop_mat16x16<f16, A>>(&tile_h[0], 16u), INDEX, 1.0h);
    coopStoreT(a, &tile_h[0], 16u);
}
"#;

    const OP_COOPERATIVE_MATRIX_LOAD: u32 = 4457;

    fn with_op(words: &[u32], op: u32) -> Vec<Vec<u32>> {
        instructions(words)
            .unwrap()
            .into_iter()
            .filter(|i| i[0] & 0xffff == op)
            .map(|i| i.to_vec())
            .collect()
    }

    #[test]
    fn stub_calls_become_element_access() {
        let words = compile(&SHADER.replace("INDEX", "2u"), "main", false, 8).unwrap();
        assert!(
            with_op(&words, OP_FUNCTION_CALL).is_empty(),
            "a stub call is left"
        );
        // The stubs are gone, with their names; the entry point stays.
        assert_eq!(with_op(&words, OP_FUNCTION).len(), 1);
        // Reads of elements 0 and 7 of the loaded C fragment.
        let loads: Vec<u32> = with_op(&words, OP_COOPERATIVE_MATRIX_LOAD)
            .iter()
            .map(|i| i[2])
            .collect();
        let reads: Vec<(u32, u32)> = with_op(&words, OP_COMPOSITE_EXTRACT)
            .iter()
            .filter(|i| loads.contains(&i[3]))
            .map(|i| (i[3], i[4]))
            .collect();
        assert_eq!(reads.len(), 2, "{reads:?}");
        assert_eq!(reads[0].0, reads[1].0);
        assert_eq!([reads[0].1, reads[1].1], [0, 7]);
        // A write of element 2 into the loaded A fragment.
        let writes = with_op(&words, OP_COMPOSITE_INSERT);
        assert_eq!(writes.len(), 1);
        assert!(
            loads.contains(&writes[0][4]) && writes[0][5] == 2,
            "{writes:?}"
        );
        // The length of the C fragment's type: the type of the first load.
        let lengths = with_op(&words, OP_COOPERATIVE_MATRIX_LENGTH);
        let c_type = with_op(&words, OP_COOPERATIVE_MATRIX_LOAD)
            .iter()
            .find(|i| i[2] == reads[0].0)
            .map(|i| i[1]);
        assert_eq!(lengths.len(), 1);
        assert_eq!(Some(lengths[0][3]), c_type);
    }

    #[test]
    fn no_debug_name_is_left_without_its_id() {
        let words = compile(&SHADER.replace("INDEX", "2u"), "main", false, 8).unwrap();
        let insts = instructions(&words).unwrap();
        for name in insts.iter().filter(|i| i[0] & 0xffff == OP_NAME) {
            let used = insts
                .iter()
                .filter(|i| i[0] & 0xffff != OP_NAME)
                .any(|i| i[1..].contains(&name[1]));
            assert!(
                used,
                "OpName of %{} ({}) names nothing",
                name[1],
                name_of(&name[2..])
            );
        }
    }

    #[test]
    fn bad_indices_and_missing_stubs_are_refused() {
        let runtime = compile(&SHADER.replace("INDEX", "lid % 8u"), "main", false, 8).unwrap_err();
        assert!(runtime.contains("not a constant"), "{runtime}");
        let too_far = compile(&SHADER.replace("INDEX", "8u"), "main", false, 8).unwrap_err();
        assert!(too_far.contains("not below 8"), "{too_far}");
        let plain = "@compute @workgroup_size(1) fn main() {}";
        let none = compile(plain, "main", false, 8).unwrap_err();
        assert!(none.contains("no element-access stub"), "{none}");
    }
}
