//! Element access to cooperative matrices, which WGSL lacks: the kernel calls stub functions
//! named `coop_get_*(m, i)` and `coop_set_*(m, i, x)` with `i` a literal (or a `let` of one, as in
//! the host's unrolled loops; naga does not fold arithmetic there into a constant); after naga writes
//! SPIR-V, every call becomes OpCompositeExtract / OpCompositeInsert of invocation-local element
//! `i` (SPV_KHR_cooperative_matrix allows both), and the stubs are removed. Which (row, column)
//! an element is depends on the implementation; it is probed on the device.

const OP_NAME: u32 = 5;
const OP_CONSTANT: u32 = 43;
const OP_FUNCTION: u32 = 54;
const OP_FUNCTION_END: u32 = 56;
const OP_FUNCTION_CALL: u32 = 57;
const OP_COMPOSITE_EXTRACT: u32 = 81;
const OP_COMPOSITE_INSERT: u32 = 82;

/// WGSL -> SPIR-V of one compute entry point with the element-access stubs replaced. Index
/// clamps only when `checked` (as for the crate's other kernels: `WGPU_FLASH_ATTN_SHADER_CHECKS`).
pub fn compile(wgsl: &str, entry: &str, checked: bool) -> Result<Vec<u32>, String> {
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
    replace_element_stubs(&words)
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

/// Rewrites calls of the stubs (found by their debug names) into element access.
pub fn replace_element_stubs(words: &[u32]) -> Result<Vec<u32>, String> {
    let insts = instructions(words)?;
    // Stub function ids: true for a setter.
    let mut stubs = std::collections::HashMap::new();
    let mut constants = std::collections::HashMap::new();
    for inst in &insts {
        let op = inst[0] & 0xffff;
        if op == OP_NAME && inst.len() >= 3 {
            let name = name_of(&inst[2..]);
            if name.starts_with("coop_get_") {
                stubs.insert(inst[1], false);
            } else if name.starts_with("coop_set_") {
                stubs.insert(inst[1], true);
            }
        } else if op == OP_CONSTANT && inst.len() == 4 {
            constants.insert(inst[2], inst[3]);
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
            OP_NAME if stubs.contains_key(&inst[1]) => {}
            OP_FUNCTION_CALL if stubs.contains_key(&inst[3]) => {
                let (ty, id, args) = (inst[1], inst[2], &inst[4..]);
                let index = |arg: u32| {
                    constants
                        .get(&arg)
                        .copied()
                        .ok_or_else(|| format!("element index of %{id} is not a constant"))
                };
                if stubs[&inst[3]] {
                    let [m, i, x] = args else {
                        return Err(format!("setter call %{id} takes 3 arguments"));
                    };
                    out.extend([(6 << 16) | OP_COMPOSITE_INSERT, ty, id, *x, *m, index(*i)?]);
                } else {
                    let [m, i] = args else {
                        return Err(format!("getter call %{id} takes 2 arguments"));
                    };
                    out.extend([(5 << 16) | OP_COMPOSITE_EXTRACT, ty, id, *m, index(*i)?]);
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
@compute @workgroup_size(32)
fn main(@builtin(local_invocation_index) lid: u32) {
    let c = coopLoadT<coop_mat16x16<f32, C>>(&tile[0], 16u);
    // As the host's unrolled loops bind their counters: a `let` of a literal.
    let k = 7u;
    out[lid] = coop_get_c(c, 0u) + coop_get_c(c, k);
    let a = coop_set_a(coopLoadT<coop_mat16x16<f16, A>>(&tile_h[0], 16u), INDEX, 1.0h);
    coopStoreT(a, &tile_h[0], 16u);
}
"#;

    fn count(words: &[u32], op: u32) -> usize {
        instructions(words)
            .unwrap()
            .iter()
            .filter(|i| i[0] & 0xffff == op)
            .count()
    }

    #[test]
    fn stub_calls_become_element_access() {
        let source = SHADER.replace("INDEX", "2u");
        let words = compile(&source, "main", false).unwrap();
        assert_eq!(count(&words, OP_FUNCTION_CALL), 0, "a stub call is left");
        // The stubs are gone, names included; the entry point stays.
        assert_eq!(count(&words, OP_FUNCTION), 1);
        let names: Vec<String> = instructions(&words)
            .unwrap()
            .iter()
            .filter(|i| i[0] & 0xffff == OP_NAME)
            .map(|i| name_of(&i[2..]))
            .collect();
        assert!(names.iter().all(|n| !n.starts_with("coop_")), "{names:?}");
        // Two reads at elements 0 and 7, one write at element 2.
        let insts = instructions(&words).unwrap();
        let extracts: Vec<u32> = insts
            .iter()
            .filter(|i| i[0] & 0xffff == OP_COMPOSITE_EXTRACT && i.len() == 5)
            .map(|i| i[4])
            .collect();
        assert!(
            extracts.contains(&0) && extracts.contains(&7),
            "{extracts:?}"
        );
        let inserts: Vec<u32> = insts
            .iter()
            .filter(|i| i[0] & 0xffff == OP_COMPOSITE_INSERT)
            .map(|i| i[5])
            .collect();
        assert_eq!(inserts, [2]);
    }

    #[test]
    fn a_runtime_index_is_refused() {
        let source = SHADER.replace("INDEX", "lid % 8u");
        let err = compile(&source, "main", false).unwrap_err();
        assert!(err.contains("not a constant"), "{err}");
    }
}
