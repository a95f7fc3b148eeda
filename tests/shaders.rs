//! Every shader variant the planner can produce parses and validates with naga, and translates to
//! MSL and HLSL, so Metal and DX12 breakage shows without such a machine. No GPU needed.
// Native only: coop::spirv and the SPIR-V checks exist on native targets only.
#![cfg(not(target_arch = "wasm32"))]

use wgpu_flash_attn::kernels::{coop, forward, materialized};
use wgpu_flash_attn::plan::{plan_with, DeviceCaps, Kernel, PlanOptions, Storage};
use wgpu_flash_attn::{tuning, Attention, DType};

/// Parses and validates WGSL with naga, panicking with the rendered error.
fn parse_and_validate(source: &str, what: &str) -> (naga::Module, naga::valid::ModuleInfo) {
    let module = naga::front::wgsl::parse_str(source)
        .unwrap_or_else(|e| panic!("{what}: {}", e.emit_to_string(source)));
    let info = naga::valid::Validator::new(
        naga::valid::ValidationFlags::all(),
        naga::valid::Capabilities::all(),
    )
    .validate(&module)
    .unwrap_or_else(|e| panic!("{what}: {}", e.emit_to_string(source)));
    (module, info)
}

/// Bytes of the shader's workgroup variables, as naga lays them out.
fn workgroup_bytes(source: &str) -> u32 {
    let module = naga::front::wgsl::parse_str(source).expect("parses");
    module
        .global_variables
        .iter()
        .filter(|(_, v)| v.space == naga::AddressSpace::WorkGroup)
        .map(|(_, v)| module.types[v.ty].inner.size(module.to_ctx()))
        .sum()
}

fn validate(source: &str, what: &str) {
    let (module, info) = parse_and_validate(source, what);
    let msl_options = naga::back::msl::Options {
        fake_missing_bindings: true,
        lang_version: (2, 4),
        ..Default::default()
    };
    naga::back::msl::write_string(&module, &info, &msl_options, &Default::default())
        .unwrap_or_else(|e| panic!("{what}: MSL: {e:?}"));
    let hlsl_options = naga::back::hlsl::Options {
        shader_model: naga::back::hlsl::ShaderModel::V6_2,
        fake_missing_bindings: true,
        ..Default::default()
    };
    let mut hlsl = String::new();
    naga::back::hlsl::Writer::new(&mut hlsl, &hlsl_options, &Default::default())
        .write(&module, &info, None)
        .unwrap_or_else(|e| panic!("{what}: HLSL: {e:?}"));
    assert!(!hlsl.is_empty());
}

#[test]
fn shader_files_are_valid_wgsl_as_they_stand() {
    validate(forward::SOURCE, "flash_fwd.wgsl");
    validate(materialized::SOURCE, "materialized.wgsl");
    // The benchmarks' own kernels, before they fill in their headers.
    validate(
        include_str!("../benches/read_bandwidth.wgsl"),
        "read_bandwidth.wgsl",
    );
    validate(
        include_str!("../benches/arith_rate.wgsl"),
        "arith_rate.wgsl",
    );
    validate(
        include_str!("../benches/fill_cache.wgsl"),
        "fill_cache.wgsl",
    );
}

#[test]
fn every_forward_variant_validates_and_translates() {
    let mut caps = DeviceCaps::webgpu_defaults();
    caps.max_workgroup_storage_bytes = 49152;
    caps.max_invocations_per_workgroup = 1024;
    caps.max_workgroup_size_x = 1024;
    caps.shader_f16 = true;
    // Subgroups of 16 to 64 lanes: the subgroup tier takes tiles with threads_x up to 16.
    caps.subgroup_sizes = Some((16, 64));
    let mut n = 0;
    let mut subgroup = 0;
    let mut paged_variants = 0;
    for d in [4, 12, 36, 64, 100, 128, 256] {
        for (dtype, packed) in [
            (DType::F32, false),
            (DType::F16, false),
            (DType::F16, true),
            (DType::BF16, false),
        ] {
            // Plain; causal with LSE; every option at once (window, softcap, ALiBi, sinks, a mask).
            for (causal, lse, all) in [
                (false, false, false),
                (true, true, false),
                (true, true, true),
            ] {
                for (tiles, kernel) in tuning::forward_candidates()
                    .flat_map(|t| [(t, Kernel::ForwardPortable), (t, Kernel::ForwardSubgroup)])
                {
                    let mut p = Attention::new(1, 1, 1, 4, 4, d)
                        .dtype(dtype)
                        .causal(causal)
                        .with_lse(lse);
                    if all {
                        p = p
                            .window_size(3, 2)
                            .softcap(10.0)
                            .alibi(Some(wgpu_flash_attn::AlibiSlopes::PerHead))
                            .sinks(true)
                            .attn_mask(Some(wgpu_flash_attn::AttnMask {
                                kind: if d % 8 == 0 {
                                    wgpu_flash_attn::MaskKind::Additive
                                } else {
                                    wgpu_flash_attn::MaskKind::Boolean
                                },
                                per_batch: true,
                                per_head: false,
                            }));
                    }
                    let Ok(plan) = plan_with(
                        &p,
                        &caps,
                        PlanOptions {
                            tiles: Some(tiles),
                            force_packed_f16: packed,
                            kernel: Some(kernel),
                            coop_elements: None,
                            // The products unrolled (as on NVIDIA) with every option on.
                            unroll: Some(all),
                        },
                    ) else {
                        continue;
                    };
                    validate(
                        &forward::shader_source(&plan),
                        &format!(
                            "forward {kernel:?} d={d} {dtype:?} packed={packed} causal={causal} all options={all} {tiles:?}"
                        ),
                    );
                    n += 1;
                    subgroup += usize::from(kernel == Kernel::ForwardSubgroup);
                }
            }
        }
    }
    // Variable-length batches (which take no mask buffer), with the other options, with K and V
    // contiguous and in pages.
    for dtype in [DType::F32, DType::F16, DType::BF16] {
        for tiles in tuning::forward_candidates() {
            let dense = Attention::varlen(2, 1, 36, &[0, 3, 9], &[0, 5, 5])
                .dtype(dtype)
                .causal(true)
                .window_size(4, -1)
                .softcap(3.0)
                .sinks(true)
                .with_lse(true);
            let paged = dense.clone().paged_kv(3, 4, &[0, 1, 2, 3]);
            // The dense problem plans wherever the paged one does (same tiles, same options).
            let dense_plans = plan_with(
                &dense,
                &caps,
                PlanOptions {
                    tiles: Some(tiles),
                    ..Default::default()
                },
            )
            .is_ok();
            let planned = plan_with(
                &paged,
                &caps,
                PlanOptions {
                    tiles: Some(tiles),
                    ..Default::default()
                },
            );
            assert_eq!(planned.is_ok(), dense_plans, "{tiles:?}: {planned:?}");
            if let Ok(plan) = planned {
                validate(
                    &forward::shader_source(&plan),
                    &format!("forward varlen {dtype:?} paged {tiles:?}"),
                );
                paged_variants += 1;
            }
        }
    }
    assert!(n > 400, "only {n} variants");
    assert!(subgroup > 200, "only {subgroup} subgroup variants");
    assert!(paged_variants > 30, "only {paged_variants} paged variants");
}

#[test]
fn every_materialized_variant_validates_and_translates() {
    for d in [4, 36, 128, 256] {
        for storage in [
            Storage::F32,
            Storage::F16,
            Storage::F16Packed,
            Storage::BF16Packed,
        ] {
            for causal in [false, true] {
                let dtype = if storage == Storage::F32 {
                    DType::F32
                } else if storage == Storage::BF16Packed {
                    DType::BF16
                } else {
                    DType::F16
                };
                let p = Attention::new(1, 1, 1, 4, 4, d).dtype(dtype).causal(causal);
                validate(
                    &materialized::shader_source(&p, storage),
                    &format!("materialized d={d} {storage:?} causal={causal}"),
                );
            }
        }
    }
}

#[test]
fn default_plans_fit_webgpu_default_limits() {
    let caps = DeviceCaps::webgpu_defaults();
    for d in (4..=256).step_by(4) {
        let plan =
            wgpu_flash_attn::plan::plan(&Attention::new(1, 8, 2, 1000, 1000, d), &caps).unwrap();
        assert!(
            plan.workgroup_bytes <= 16384 && plan.tiles.threads() <= 256,
            "d={d}: {plan:?}"
        );
        assert!(
            plan.tiles.threads_x <= (d / 4).max(4),
            "d={d}: {:?} leaves threads idle",
            plan.tiles
        );
    }
}

/// Parses, validates and writes SPIR-V: the cooperative-matrix tier runs on Vulkan only in wgpu 30.
fn validate_spirv(source: &str, what: &str) {
    let (module, info) = parse_and_validate(source, what);
    let words = naga::back::spv::write_vec(&module, &info, &Default::default(), None)
        .unwrap_or_else(|e| panic!("{what}: SPIR-V: {e:?}"));
    assert!(words.len() > 100, "{what}: SPIR-V of {} words", words.len());
}

#[test]
fn every_coop_matrix_variant_validates_and_writes_spirv() {
    validate_spirv(coop::SOURCE, "flash_fwd_coop.wgsl");
    let mut caps = DeviceCaps::webgpu_defaults();
    caps.max_workgroup_storage_bytes = 49152;
    caps.max_invocations_per_workgroup = 1024;
    caps.max_workgroup_size_x = 1024;
    caps.shader_f16 = true;
    caps.coop_matrix_f16 = true;
    caps.subgroup_barrier = true;
    let mut n = 0;
    for subgroup in [16, 32, 64, 128] {
        caps.subgroup_sizes = Some((subgroup, subgroup));
        // 64, 96, 128, 160, 192, 224 and 256: where the plan replaces blocks of the file
        // (plan::coop_stage, plan::coop_load_in_function, plan::coop_tree_form,
        // plan::coop_load_in_loop; 224 takes the last without the tree form).
        for d in [16, 48, 64, 96, 128, 160, 192, 224, 256] {
            for all in [false, true] {
                let mut p = Attention::new(1, 1, 1, 4, 4, d)
                    .dtype(DType::F16)
                    .causal(all)
                    .with_lse(all);
                if all {
                    p = p
                        .window_size(3, 2)
                        .softcap(10.0)
                        .alibi(Some(wgpu_flash_attn::AlibiSlopes::PerHead))
                        .sinks(true)
                        .attn_mask(Some(wgpu_flash_attn::AttnMask {
                            kind: wgpu_flash_attn::MaskKind::Boolean,
                            per_batch: true,
                            per_head: false,
                        }));
                }
                let varlen = Attention::varlen(2, 1, d, &[0, 3, 9], &[0, 5, 5])
                    .dtype(DType::F16)
                    .causal(true);
                let paged = varlen.clone().paged_kv(3, 4, &[0, 1, 2, 3]);
                // f32 and bf16 storage where f16 products are allowed: read and written in
                // their own types, rounded to f16 for the matrix units.
                let f32_storage = p.clone().dtype(DType::F32).allow_f16_products(true);
                let bf16_paged = paged.clone().dtype(DType::BF16).allow_f16_products(true);
                for p in [p.clone(), varlen, paged, f32_storage, bf16_paged] {
                    let mut plan = plan_with(&p, &caps, PlanOptions::default()).unwrap();
                    assert_eq!(plan.kernel, Kernel::ForwardCoopMatrix, "{p:?}");
                    let packed4 = match p.dtype {
                        DType::F32 => "alias Packed4 = vec4<f32>;",
                        DType::F16 => "alias Packed4 = vec4<f16>;",
                        DType::BF16 => "alias Packed4 = vec2<u32>;",
                    };
                    assert!(forward::shader_source(&plan).contains(packed4), "{p:?}");
                    // With subgroup barriers (as on NVIDIA) and with workgroup barriers.
                    for sync in [true, false] {
                        plan.subgroup_sync = sync;
                        let source = forward::shader_source(&plan);
                        assert_eq!(source.contains("subgroupBarrier"), sync);
                        validate_spirv(
                            &source,
                            &format!(
                                "coop sg={subgroup} d={d} all={all} sync={sync} {:?}",
                                plan.tiles
                            ),
                        );
                        n += 1;
                    }
                    // The plan counts the workgroup memory the kernel declares.
                    assert_eq!(
                        workgroup_bytes(&forward::shader_source(&plan)),
                        plan.workgroup_bytes,
                        "coop sg={subgroup} d={d} {:?}",
                        plan.tiles
                    );
                    if subgroup == 32 {
                        // Scores in registers, where a device's probe would allow them: the
                        // stubs all become element access, and the memory is counted.
                        let probed = DeviceCaps {
                            coop_elements: true,
                            ..caps.clone()
                        };
                        let plan = plan_with(&p, &probed, PlanOptions::default()).unwrap();
                        assert!(plan.coop_elements);
                        let what = format!("coop elements sg={subgroup} d={d} all={all}");
                        let words = coop::spirv(&plan).unwrap_or_else(|e| panic!("{what}: {e}"));
                        assert!(words.len() > 100);
                        assert_eq!(
                            workgroup_bytes(&forward::shader_source(&plan)),
                            plan.workgroup_bytes,
                            "{what}"
                        );
                        n += 1;
                    }
                }
                // Every candidate tile of the table that fits (16 and 32 rows per subgroup);
                // at least one does at every subgroup size and head dimension.
                let mut fitting = 0;
                for tiles in wgpu_flash_attn::tuning::coop_tiles(d, subgroup, false) {
                    let options = PlanOptions {
                        tiles: Some(tiles),
                        kernel: Some(Kernel::ForwardCoopMatrix),
                        ..Default::default()
                    };
                    if let Ok(plan) = plan_with(&p, &caps, options) {
                        fitting += 1;
                        validate_spirv(
                            &forward::shader_source(&plan),
                            &format!("coop sg={subgroup} d={d} all={all} {tiles:?}"),
                        );
                        n += 1;
                    }
                }
                // The table with scores in registers (32-lane subgroups only), where each tile
                // fits that way; its first choice always does.
                let probed = DeviceCaps {
                    coop_elements: true,
                    ..caps.clone()
                };
                let mut fitting_in_registers = 0;
                let in_registers = wgpu_flash_attn::tuning::coop_tiles(d, subgroup, true)
                    .filter(|_| subgroup == 32);
                for tiles in in_registers {
                    let options = PlanOptions {
                        tiles: Some(tiles),
                        kernel: Some(Kernel::ForwardCoopMatrix),
                        ..Default::default()
                    };
                    if let Ok(plan) = plan_with(&p, &probed, options) {
                        assert!(plan.coop_elements, "d={d} {tiles:?}");
                        if fitting_in_registers == 0 {
                            let coop = PlanOptions {
                                kernel: Some(Kernel::ForwardCoopMatrix),
                                ..Default::default()
                            };
                            let first = plan_with(&p, &probed, coop).unwrap();
                            assert_eq!(first.tiles, tiles, "d={d}: the plan takes the first");
                        }
                        fitting_in_registers += 1;
                        let what = format!("coop elements d={d} all={all} {tiles:?}");
                        coop::spirv(&plan).unwrap_or_else(|e| panic!("{what}: {e}"));
                        assert_eq!(
                            workgroup_bytes(&forward::shader_source(&plan)),
                            plan.workgroup_bytes,
                            "{what}"
                        );
                        n += 1;
                    }
                }
                assert!(fitting > 0, "no tensor-core tile fits sg={subgroup} d={d}");
                assert!(
                    subgroup != 32 || fitting_in_registers > 0,
                    "no tile fits with scores in registers at d={d}"
                );
            }
        }
    }
    eprintln!("{n} cooperative-matrix variants validated");
}

#[test]
fn every_kv_cache_variant_validates_and_translates() {
    use wgpu_flash_attn::kernels::decode;
    use wgpu_flash_attn::kvcache::{self, KvCacheAttention, RotaryAngles, RotaryEmbedding};
    validate(decode::ATTENTION_SOURCE, "flash_decode.wgsl");
    validate(
        decode::ATTENTION_SUBGROUP_SOURCE,
        "flash_decode_subgroup.wgsl",
    );
    validate(decode::COMBINE_SOURCE, "decode_combine.wgsl");
    validate(decode::APPEND_SOURCE, "kv_append.wgsl");
    let mut n = 0;
    let mut n_subgroup = 0;
    // Without subgroups (the portable kernel), and with subgroups of 32 and of 8 (the subgroup
    // kernel).
    for (storage_bytes, f16, subgroups) in [
        (16384, false, None),
        (49152, true, None),
        (49152, true, Some((32, 32))),
        (32768, false, Some((8, 8))),
    ] {
        let mut caps = DeviceCaps::webgpu_defaults();
        caps.max_workgroup_storage_bytes = storage_bytes;
        caps.shader_f16 = f16;
        caps.subgroup_sizes = subgroups;
        caps.backend = "Vulkan".into();
        for d in [4, 12, 36, 64, 128, 256] {
            for dtype in [DType::F32, DType::F16, DType::BF16] {
                for (seq_q, group, paged, splits) in [
                    (1, 4, false, 1),
                    (1, 1, true, 8),
                    (3, 8, true, 2),
                    (40, 2, false, 1),
                ] {
                    let rotary = [
                        None,
                        Some(RotaryEmbedding::interleaved(d.min(16) / 4 * 4, 1e4)),
                        (d >= 8).then(|| RotaryEmbedding {
                            dim: d / 8 * 8,
                            style: wgpu_flash_attn::RotaryStyle::HalfSplit,
                            angles: RotaryAngles::Table { positions: 64 },
                        }),
                    ][n % 3];
                    let mut p = KvCacheAttention::decode(2 * group, 2, d, seq_q, &[9, 20], 60)
                        .dtype(dtype)
                        .num_splits(splits)
                        .append_new_kv(true)
                        .rotary(rotary)
                        .with_lse(splits > 1 || seq_q > 1);
                    if paged {
                        p = p.paged(16, 8, &[0, 1, 2, 3, 4, 5, 6, 7]);
                    }
                    let plan = kvcache::plan(&p, &caps).unwrap();
                    let what = format!(
                        "kv cache d={d} {dtype:?} {:?} q={seq_q} paged={paged} splits={splits}",
                        plan.tiles
                    );
                    let source = decode::attention_source(&plan);
                    validate(&source, &what);
                    if plan.tiles.kernel == kvcache::DecodeKernel::Subgroup {
                        // What Vulkan runs, too.
                        validate_spirv(&source, &what);
                        n_subgroup += 1;
                    }
                    validate(&decode::append_source(&plan), &what);
                    for token_map in [false, true] {
                        let combine =
                            decode::combine_source(d, plan.storage, p.with_lse, token_map);
                        validate(&combine, &what);
                    }
                    n += 1;
                }
            }
        }
    }
    assert!(
        n >= 280 && n_subgroup >= 60,
        "only {n} variants, {n_subgroup} of the subgroup kernel"
    );
}
