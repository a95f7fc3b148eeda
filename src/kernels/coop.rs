//! The tensor-core forward kernel (`shaders/flash_fwd_coop.wgsl`): Q K^T and P V through
//! cooperative matrices. It shares the portable kernel's bindings, params and encoding
//! ([`super::forward`]); only its source differs.

use crate::plan::Plan;

/// The shader file, with default constants.
pub const SOURCE: &str = include_str!("../../shaders/flash_fwd_coop.wgsl");

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
         const SG: u32 = {}u;\n{}const SUBGROUP_SYNC: bool = {};\nfn sync_subgroup() {{ {}(); }}\n",
        p.head_dim,
        t.block_n,
        t.threads_y,
        row_blocks,
        t.threads_x,
        super::forward::option_consts(p),
        plan.subgroup_sync,
        if plan.subgroup_sync {
            "subgroupBarrier"
        } else {
            "workgroupBarrier"
        },
    );
    let lanes_per_row = t.threads_x / 16;
    let d16 = p.head_dim / 16;
    // Unrolled so that every index into the arrays of fragments and scores is a constant.
    super::ShaderText::new(SOURCE, header).unrolled(&[
        ("D16", d16),
        ("R16 * D16", row_blocks * d16),
        ("R16", row_blocks),
        ("N16", t.block_n / 16),
        ("CPL4", t.block_n / lanes_per_row / 4),
        ("LOADS", (t.block_n * p.head_dim / 4).div_ceil(t.threads())),
    ])
}
