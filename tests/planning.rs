//! Which kernel tier and tiles the plan picks for a device, and when it refuses a forced tier.
//! Pure planning: no GPU needed.

use wgpu_flash_attn::plan::{plan, plan_with, DeviceCaps, Kernel, PlanOptions, Storage, Tiles};
use wgpu_flash_attn::tuning::{family_tiles, DeviceFamily};
use wgpu_flash_attn::{Attention, DType, FlashError};

/// A device like the H200 through Vulkan: 48 KiB of workgroup storage, 1024 invocations.
fn nvidia(subgroups: Option<(u32, u32)>) -> DeviceCaps {
    let mut caps = DeviceCaps::from_limits(&wgpu::Limits {
        max_compute_workgroup_storage_size: 49152,
        max_compute_invocations_per_workgroup: 1024,
        max_compute_workgroup_size_x: 1024,
        ..Default::default()
    });
    caps.name = "NVIDIA H200".into();
    caps.backend = "Vulkan".into();
    caps.vendor = 0x10de;
    caps.device_type = "DiscreteGpu".into();
    caps.shader_f16 = true;
    caps.subgroup_sizes = subgroups;
    caps
}

fn lavapipe() -> DeviceCaps {
    let mut caps = DeviceCaps::from_limits(&wgpu::Limits {
        max_compute_workgroup_storage_size: 32768,
        max_compute_invocations_per_workgroup: 1024,
        max_compute_workgroup_size_x: 1024,
        ..Default::default()
    });
    caps.name = "llvmpipe (LLVM 15.0.6, 256 bits)".into();
    caps.backend = "Vulkan".into();
    caps.vendor = 0x10005;
    caps.device_type = "Cpu".into();
    caps.subgroup_sizes = Some((8, 8));
    caps
}

fn forced(kernel: Kernel, tiles: Option<Tiles>) -> PlanOptions {
    PlanOptions {
        kernel: Some(kernel),
        tiles,
        ..Default::default()
    }
}

const WIDE: Tiles = Tiles {
    block_m: 32,
    block_n: 32,
    threads_x: 16,
    threads_y: 16,
};

#[test]
fn subgroups_of_32_take_the_nvidia_table_tile_on_the_subgroup_tier() {
    // At d=128 the streamed-Q tile of the NVIDIA table comes first.
    let p = Attention::new(2, 16, 16, 8192, 8192, 128).dtype(DType::F16);
    let want = wgpu_flash_attn::tuning::streamed_q_tiles(&nvidia(None), 128)[0];
    let with = plan(&p, &nvidia(Some((32, 32)))).unwrap();
    assert_eq!(with.kernel, Kernel::ForwardSubgroup);
    assert_eq!(with.tiles, want);
    assert!(with.stream_q);
    let without = plan(&p, &nvidia(None)).unwrap();
    assert_eq!(without.kernel, Kernel::ForwardPortable);
    assert_eq!(without.tiles, want);
    // At d=64 the streamed tile of that head dim, which fits only without the portable tier's
    // row-reduction buffer: without subgroups the range's second streamed tile; at d=32, where
    // the range has no second tile, the family's first tile, holding Q.
    let p64 = Attention::new(2, 32, 32, 8192, 8192, 64).dtype(DType::F16);
    let streamed64 = plan(&p64, &nvidia(Some((32, 32)))).unwrap();
    let want64 = wgpu_flash_attn::tuning::streamed_q_tiles(&nvidia(None), 64)[0];
    assert_ne!(want64, want);
    assert_eq!(streamed64.tiles, want64);
    assert!(streamed64.stream_q);
    assert_eq!(streamed64.kernel, Kernel::ForwardSubgroup);
    // The same kernel text as the tile forced on the subgroup tier (as the benchmark times it).
    let forced64 = plan_with(
        &p64,
        &nvidia(Some((32, 32))),
        forced(Kernel::ForwardSubgroup, Some(want64)),
    )
    .unwrap();
    let source = wgpu_flash_attn::kernels::forward::shader_source;
    assert_eq!(source(&streamed64), source(&forced64));
    let portable64 = plan(&p64, &nvidia(None)).unwrap();
    assert_eq!(portable64.kernel, Kernel::ForwardPortable);
    assert_eq!(
        portable64.tiles,
        wgpu_flash_attn::tuning::streamed_q_tiles(&nvidia(None), 64)[1]
    );
    assert!(portable64.stream_q);
    let forced_portable64 = plan_with(
        &p64,
        &nvidia(None),
        forced(Kernel::ForwardPortable, Some(portable64.tiles)),
    )
    .unwrap();
    assert_eq!(source(&portable64), source(&forced_portable64));
    assert_eq!(
        portable64.tiles_label(),
        "128x32x8x32 (Q streamed; Q K^T, P V unrolled)"
    );
    let p32 = Attention::new(2, 32, 32, 8192, 8192, 32).dtype(DType::F16);
    let held = plan(&p32, &nvidia(None)).unwrap();
    assert_eq!(held.tiles, family_tiles(DeviceFamily::Nvidia)[0]);
    assert!(!held.stream_q);
    // The subgroup tier needs no row-reduction buffer in workgroup memory.
    assert_eq!(
        without.workgroup_bytes - with.workgroup_bytes,
        4 * (want.block_m * want.threads_x - 1)
    );
}

#[test]
fn streamed_tiles_by_head_dim() {
    // Below d = 16 Q is held; d = 16-88 takes the 256-row tile where it fits (on the subgroup
    // tier always; the portable tier's row-reduction buffer is smaller with fewer lanes a row),
    // d = 64-88 then the 128-row one (d = 32 on the portable tier holds Q); above, the 128-row
    // tile up to where it fits 48 KiB (d = 232 on the subgroup tier, 200 on the portable one),
    // the second beyond; never the held-Q fallback. Up to d = 128 the rows' lanes are fitted to
    // the head dim's vec4s: as many as split them evenly, else 1 below 11 vec4s and 2 from there.
    let tuning_tiles = |d| wgpu_flash_attn::tuning::streamed_q_tiles(&nvidia(None), d);
    let small = tuning_tiles(64);
    let large = tuning_tiles(256);
    assert_eq!(small.len(), 2);
    assert_eq!(tuning_tiles(32).len(), 1);
    assert_eq!(tuning_tiles(60).len(), 1);
    assert_eq!(large.len(), 2);
    assert!(tuning_tiles(12).is_empty());
    assert_eq!(tuning_tiles(80).len(), 2);
    assert_eq!(tuning_tiles(96)[0], large[0]);
    assert_eq!(tuning_tiles(136), large);
    let t = |s: &str| s.parse::<Tiles>().unwrap();
    let sg = Some((32, 32));
    for (d, subgroups, want) in [
        (12, sg, None),
        (16, sg, Some(t("256x32x4x64"))),
        (16, None, Some(t("256x32x4x64"))),
        (20, sg, Some(t("256x32x1x256"))),
        (24, sg, Some(t("256x32x2x128"))),
        (28, sg, Some(t("256x32x1x256"))),
        (32, sg, Some(small[0])),
        (40, sg, Some(t("256x32x2x128"))),
        (48, sg, Some(t("256x32x4x64"))),
        (64, sg, Some(small[0])),
        (64, None, Some(t("128x32x8x32"))),
        (28, None, Some(t("256x32x1x256"))),
        (32, None, None),
        (36, None, Some(t("256x32x1x256"))),
        (44, sg, Some(t("256x32x2x128"))),
        (20, None, Some(t("256x32x1x256"))),
        (40, None, Some(t("256x32x2x128"))),
        (68, sg, Some(t("256x32x2x128"))),
        (88, sg, Some(t("256x32x2x128"))),
        (92, sg, Some(t("128x32x2x128"))),
        (124, sg, Some(t("128x32x2x128"))),
        (72, sg, Some(t("256x32x2x128"))),
        (80, sg, Some(t("256x32x4x64"))),
        (120, sg, Some(t("128x32x2x128"))),
        (128, sg, Some(large[0])),
        (136, sg, Some(large[0])),
        (192, sg, Some(large[0])),
        (232, sg, Some(large[0])),
        (236, sg, Some(large[1])),
        (256, sg, Some(large[1])),
        (68, None, Some(t("256x32x2x128"))),
        (76, None, Some(t("128x32x2x128"))),
        (80, None, Some(t("128x32x4x64"))),
        (200, None, Some(large[0])),
        (204, None, Some(large[1])),
        (256, None, Some(large[1])),
    ] {
        for dtype in [DType::F32, DType::F16] {
            let p = Attention::new(1, 8, 8, 4096, 4096, d).dtype(dtype);
            let planned = plan(&p, &nvidia(subgroups)).unwrap();
            let what = format!("d={d} {subgroups:?} {dtype:?} {:?}", planned.tiles);
            match want {
                Some(tiles) => {
                    assert_eq!(planned.tiles, tiles, "{what}");
                    assert!(planned.stream_q, "{what}");
                }
                None => assert!(!planned.stream_q, "{what}"),
            }
            assert!(planned.workgroup_bytes <= 49152, "{what}");
            let tier = if subgroups.is_some() {
                Kernel::ForwardSubgroup
            } else {
                Kernel::ForwardPortable
            };
            assert_eq!(planned.kernel, tier, "{what}");
        }
    }
}

#[test]
fn rows_wider_than_the_smallest_subgroup_stay_portable_unless_forced() {
    // Subgroups of 8 to 64 lanes: rows of 16 lanes would straddle two subgroups of 8.
    let caps = nvidia(Some((8, 64)));
    let p = Attention::new(1, 2, 2, 100, 100, 64);
    let auto = plan_with(
        &p,
        &caps,
        PlanOptions {
            tiles: Some(WIDE),
            ..Default::default()
        },
    )
    .unwrap();
    assert_eq!(auto.kernel, Kernel::ForwardPortable);
    let err = plan_with(&p, &caps, forced(Kernel::ForwardSubgroup, Some(WIDE))).unwrap_err();
    assert!(matches!(err, FlashError::BadOption { .. }), "{err}");
    // Forced without tiles: the first table entry whose rows fit.
    let sub = plan_with(&p, &caps, forced(Kernel::ForwardSubgroup, None)).unwrap();
    assert_eq!(sub.kernel, Kernel::ForwardSubgroup);
    assert!(sub.tiles.threads_x <= 8, "{:?}", sub.tiles);
}

#[test]
fn a_forced_tier_the_device_lacks_is_an_error() {
    let p = Attention::new(1, 1, 1, 10, 10, 16);
    let err = plan_with(&p, &nvidia(None), forced(Kernel::ForwardSubgroup, None)).unwrap_err();
    assert!(
        matches!(
            err,
            FlashError::MissingFeature {
                feature: "SUBGROUP",
                ..
            }
        ),
        "{err}"
    );
    // Forcing the portable tier always works, also where subgroups exist.
    let portable = plan_with(
        &p,
        &nvidia(Some((32, 32))),
        forced(Kernel::ForwardPortable, None),
    )
    .unwrap();
    assert_eq!(portable.kernel, Kernel::ForwardPortable);
}

#[test]
fn the_tensor_core_tier_and_its_barriers() {
    let p = Attention::new(1, 2, 2, 256, 256, 128).dtype(DType::F16);
    let mut caps = nvidia(Some((32, 32)));
    caps.coop_matrix_f16 = true;
    caps.subgroup_barrier = true;
    let with = plan(&p, &caps).unwrap();
    assert_eq!(with.kernel, Kernel::ForwardCoopMatrix);
    assert!(with.subgroup_sync);
    // Paged K/V too.
    let table: Vec<u32> = (0..16).collect();
    let paged = p.clone().paged_kv(16, 16, &table);
    assert_eq!(
        plan(&paged, &caps).unwrap().kernel,
        Kernel::ForwardCoopMatrix
    );
    // Subgroup barriers only where the device has them, and only on NVIDIA (whose driver orders
    // workgroup memory at them); elsewhere the same tier with workgroup barriers.
    caps.subgroup_barrier = false;
    let without = plan(&p, &caps).unwrap();
    assert_eq!(without.kernel, Kernel::ForwardCoopMatrix);
    assert!(!without.subgroup_sync);
    caps.subgroup_barrier = true;
    caps.vendor = 0x1002;
    assert!(!plan(&p, &caps).unwrap().subgroup_sync);
    caps.vendor = 0x10de;
    // Without a usable cooperative-matrix configuration: the subgroup tier, and forcing the
    // tensor cores is an error.
    caps.coop_matrix_f16 = false;
    let fallback = plan(&p, &caps).unwrap();
    assert_eq!(fallback.kernel, Kernel::ForwardSubgroup);
    assert!(!fallback.subgroup_sync);
    let err = plan_with(&p, &caps, forced(Kernel::ForwardCoopMatrix, None)).unwrap_err();
    assert!(matches!(err, FlashError::MissingFeature { .. }), "{err}");
    // The softmax lanes of a row take 4 adjacent columns at a time: with subgroups of 128 (8
    // lanes a row) 16-key tiles leave them 2 and are refused; the plan takes 32-key tiles.
    caps.coop_matrix_f16 = true;
    caps.subgroup_sizes = Some((128, 128));
    caps.max_invocations_per_workgroup = 1024;
    caps.max_workgroup_size_x = 1024;
    let narrow = Tiles {
        block_m: 64,
        block_n: 16,
        threads_x: 128,
        threads_y: 4,
    };
    let err = plan_with(&p, &caps, forced(Kernel::ForwardCoopMatrix, Some(narrow))).unwrap_err();
    assert!(
        matches!(err, FlashError::BadOption { what: "tiles", .. }),
        "{err}"
    );
    let wide = plan(&p, &caps).unwrap();
    assert_eq!(wide.kernel, Kernel::ForwardCoopMatrix);
    assert_eq!(wide.tiles.block_n / (128 / 16) % 4, 0, "{:?}", wide.tiles);
}

#[test]
fn f32_and_bf16_reach_the_tensor_cores_only_where_f16_products_are_allowed() {
    let mut caps = nvidia(Some((32, 32)));
    caps.coop_matrix_f16 = true;
    caps.subgroup_barrier = true;
    let f16 = plan(
        &Attention::new(1, 2, 2, 256, 256, 128).dtype(DType::F16),
        &caps,
    )
    .unwrap();
    for (dtype, storage) in [
        (DType::F32, Storage::F32),
        (DType::BF16, Storage::BF16Packed),
    ] {
        let p = Attention::new(1, 2, 2, 256, 256, 128).dtype(dtype);
        // Not allowed: the subgroup tier, and forcing the tensor cores says what would allow it.
        let own = plan(&p, &caps).unwrap();
        assert_eq!(own.kernel, Kernel::ForwardSubgroup, "{dtype:?}");
        let err = plan_with(&p, &caps, forced(Kernel::ForwardCoopMatrix, None)).unwrap_err();
        assert!(
            matches!(err, FlashError::BadOption { what: "dtype", .. })
                && err.to_string().contains("allow_f16_products"),
            "{err}"
        );
        // Allowed: the tensor-core tier with the f16 problem's tiles, reading its own storage.
        let allowed = plan(&p.clone().allow_f16_products(true), &caps).unwrap();
        assert_eq!(allowed.kernel, Kernel::ForwardCoopMatrix, "{dtype:?}");
        assert_eq!(allowed.storage, storage);
        assert_eq!(allowed.tiles, f16.tiles, "{dtype:?}");
        // Without tensor cores the permission changes nothing.
        let plain = DeviceCaps {
            coop_matrix_f16: false,
            ..caps.clone()
        };
        assert_eq!(
            plan(&p.clone().allow_f16_products(true), &plain)
                .unwrap()
                .kernel,
            plan(&p, &plain).unwrap().kernel
        );
    }
}

#[test]
fn tensor_core_scores_in_registers_only_where_probed() {
    let p = Attention::new(1, 2, 2, 256, 256, 128).dtype(DType::F16);
    let mut caps = nvidia(Some((32, 32)));
    caps.coop_matrix_f16 = true;
    caps.subgroup_barrier = true;
    // Not probed (or the probe failed): workgroup memory, and requiring registers is an error.
    let plain = plan(&p, &caps).unwrap();
    assert_eq!(plain.kernel, Kernel::ForwardCoopMatrix);
    assert!(!plain.coop_elements);
    let required = PlanOptions {
        coop_elements: Some(true),
        ..forced(Kernel::ForwardCoopMatrix, None)
    };
    let err = plan_with(&p, &caps, required).unwrap_err();
    assert!(matches!(err, FlashError::MissingFeature { .. }), "{err}");
    // Probed: registers by default, and workgroup memory on request.
    caps.coop_elements = true;
    assert!(plan(&p, &caps).unwrap().coop_elements);
    assert!(plan_with(&p, &caps, required).unwrap().coop_elements);
    let declined = PlanOptions {
        coop_elements: Some(false),
        ..Default::default()
    };
    assert!(!plan_with(&p, &caps, declined).unwrap().coop_elements);
    // Two K/V tiles with registers up to d = 128 where they fit 48 KiB; one otherwise.
    let tiles = |block_n| Tiles {
        block_m: 128,
        block_n,
        threads_x: 32,
        threads_y: 8,
    };
    let with_tiles = |p: &Attention, block_n, options: PlanOptions| {
        let options = PlanOptions {
            tiles: Some(tiles(block_n)),
            kernel: Some(Kernel::ForwardCoopMatrix),
            ..options
        };
        plan_with(p, &caps, options).unwrap()
    };
    assert_eq!(with_tiles(&p, 32, PlanOptions::default()).coop_kv_tiles, 2);
    assert_eq!(with_tiles(&p, 32, declined).coop_kv_tiles, 1);
    let wide = with_tiles(&p, 64, PlanOptions::default());
    assert!(wide.coop_elements && wide.coop_kv_tiles == 1 && wide.workgroup_bytes <= 49152);
    let p160 = Attention::new(1, 2, 2, 256, 256, 160).dtype(DType::F16);
    assert_eq!(
        with_tiles(&p160, 16, PlanOptions::default()).coop_kv_tiles,
        1
    );
    // Only the tensor-core tier has them.
    let subgroup = plan_with(&p, &caps, forced(Kernel::ForwardSubgroup, None)).unwrap();
    assert!(!subgroup.coop_elements);
    let err = plan_with(
        &p,
        &caps,
        PlanOptions {
            coop_elements: Some(true),
            ..forced(Kernel::ForwardSubgroup, None)
        },
    )
    .unwrap_err();
    assert!(matches!(err, FlashError::MissingFeature { .. }), "{err}");
}

#[test]
fn at_d_256_the_tensor_core_kernel_takes_its_banded_code_for_f16_and_f32() {
    // With scores in registers a problem without a band runs the banded code there (both sides
    // unbounded), which the driver compiles better; elsewhere, and for bf16, only banded problems
    // do.
    let mut caps = nvidia(Some((32, 32)));
    caps.coop_matrix_f16 = true;
    caps.compute_units = 132;
    caps.coop_elements = true;
    for (d, dtype, banded) in [
        (128, DType::F16, false),
        (240, DType::F16, false),
        (256, DType::F16, true),
        (256, DType::F32, true),
        (256, DType::BF16, false),
    ] {
        let p = Attention::new(2, 8, 8, 2048, 2048, d)
            .dtype(dtype)
            .allow_f16_products(true);
        let planned = plan(&p, &caps).unwrap();
        assert_eq!(planned.kernel, Kernel::ForwardCoopMatrix, "d={d} {dtype:?}");
        assert!(planned.coop_elements, "d={d} {dtype:?}");
        let source = wgpu_flash_attn::kernels::forward::shader_source(&planned);
        let text = format!("const BANDED: bool = {banded};");
        assert!(source.contains(&text), "d={d} {dtype:?}: no {text:?}");
        // The groups the banded code orders its blocks in; 1 (unused) otherwise.
        let groups = if banded {
            wgpu_flash_attn::plan::banded_groups(planned.grid, 132)
        } else {
            1
        };
        assert_eq!(planned.banded_groups, groups, "d={d} {dtype:?}");
    }
    let long = Attention::new(2, 8, 8, 8192, 8192, 256).dtype(DType::F16);
    assert_eq!(plan(&long, &caps).unwrap().banded_groups, 3);
    // Without scores in registers the kernel keeps the problem's own code.
    caps.coop_elements = false;
    let p = Attention::new(2, 8, 8, 8192, 8192, 256).dtype(DType::F16);
    let planned = plan(&p, &caps).unwrap();
    assert!(!planned.coop_elements);
    let source = wgpu_flash_attn::kernels::forward::shader_source(&planned);
    assert!(source.contains("const BANDED: bool = false;"));
    assert_eq!(planned.banded_groups, 1);
}

#[test]
fn tensor_core_tiles_with_scores_in_registers_by_head_dim() {
    // The measured first choices (tuning::COOP_REGISTERS_FIRST): 8 subgroups of 16 rows, with
    // longer key tiles than through workgroup memory; the workgroup-memory path keeps its own.
    let mut caps = nvidia(Some((32, 32)));
    caps.coop_matrix_f16 = true;
    caps.subgroup_barrier = true;
    caps.coop_elements = true;
    for (d, block_n, kv_tiles) in [
        (32, 32, 2),
        (64, 128, 1),
        (96, 64, 1),
        (128, 64, 1),
        (160, 32, 1),
        (192, 32, 1),
        (224, 32, 1),
        (256, 32, 1),
    ] {
        let p = Attention::new(2, 8, 8, 8192, 8192, d).dtype(DType::F16);
        let plan = plan(&p, &caps).unwrap();
        assert!(plan.coop_elements, "d={d}");
        assert_eq!(
            (plan.tiles.block_m, plan.tiles.threads_y, plan.tiles.block_n),
            (128, 8, block_n),
            "d={d}"
        );
        assert_eq!(plan.coop_kv_tiles, kv_tiles, "d={d}");
        assert!(plan.workgroup_bytes <= 49152, "d={d}");
        // The key loop's forms as plan::coop_rescale_always, coop_load_always and coop_stage
        // set them: with scores in registers, O rescaled every tile up to d = 192, the tile
        // ahead loaded without a branch at d = 64-192, K rows staged before V rows at d = 96 and
        // 192 and the stores behind a wrapper at d = 128, and the loads ahead through a function
        // at d = 64, 160 and 192, the tree form (plan::coop_tree_form) at d = 96, 192 and 256,
        // and each tile loaded in its own pass above d = 192; through workgroup memory, no
        // rescale switch, unbranched loads at d = 96-192, and the shader's own staging, loads
        // and softmax.
        let source = wgpu_flash_attn::kernels::forward::shader_source(&plan);
        let rescale = format!("const RESCALE_ALWAYS: bool = {};", d <= 192);
        assert!(source.contains(&rescale), "d={d}");
        let load = format!("const LOAD_ALWAYS: bool = {};", (64..=192).contains(&d));
        assert!(source.contains(&load), "d={d}");
        assert_eq!(
            source.contains("fn stage_rows("),
            d == 96 || d == 192,
            "d={d}"
        );
        assert_eq!(source.contains("fn stage_by_vec4("), d == 128, "d={d}");
        for used in ["fn load_tile(", "load_tile(&k_staged"] {
            assert_eq!(source.contains(used), matches!(d, 64 | 160 | 192), "d={d}");
        }
        // The tree form's row max, row sums and stepped loads; the clamped loads stay at every
        // head dim (the stepped loads' else branch), and at d = 192 both sit in load_tile only.
        for tree in [
            "let lo = max(max((*x)[at], (*x)[at + 1u])",
            "l_part[2u * rb] += sums.x;",
            "let k_at = k_base + (ahead + lid / D4)",
        ] {
            assert_eq!(source.contains(tree), matches!(d, 96 | 192 | 256), "d={d}");
        }
        let clamped = "let key = min(ahead + i / D4, seq_kv - 1u);";
        assert!(source.contains(clamped), "d={d}");
        // Above d = 192 (plan::coop_load_in_loop) each pass loads its own tile: no loads of a
        // tile ahead and none before the key loop.
        let in_loop = d > 192;
        assert_eq!(source.contains("let ahead = n0;"), in_loop, "d={d}");
        assert_eq!(
            source.contains("let ahead = n0 + KV_BUFS * BN;"),
            !in_loop,
            "d={d}"
        );
        assert_eq!(
            source.contains("fetch(false, k_base, batch, kv_start, seq_kv"),
            !in_loop,
            "d={d}"
        );
        if d == 192 {
            let start = source.find("fn load_tile(").expect("load_tile at d = 192");
            let end = start + source[start..].find("\n}\n").expect("load_tile's end");
            let outside = format!("{}{}", &source[..start], &source[end..]);
            for form in ["let k_at", clamped] {
                assert!(source[start..end].contains(form), "d={d}: {form}");
                assert!(!outside.contains(form), "d={d}: {form}");
            }
        }
        assert_eq!(source.matches("fn stage(").count(), 1, "d={d}");
        assert!(
            !source.contains("u < LOADS"),
            "d={d}: a staging loop left unrolled"
        );
        let declined = PlanOptions {
            coop_elements: Some(false),
            ..Default::default()
        };
        let plain = plan_with(&p, &caps, declined).unwrap();
        let source = wgpu_flash_attn::kernels::forward::shader_source(&plain);
        assert!(
            source.contains("const RESCALE_ALWAYS: bool = false;"),
            "d={d}"
        );
        let load = format!("const LOAD_ALWAYS: bool = {};", (96..=192).contains(&d));
        assert!(source.contains(&load), "d={d}");
        assert!(source.contains("const TWO_KV: bool = false;"), "d={d}");
        assert!(!source.contains("fn stage_rows("), "d={d}");
        assert!(!source.contains("fn stage_by_vec4("), "d={d}");
        assert!(!source.contains("fn load_tile("), "d={d}");
        assert!(!source.contains("sums.x"), "d={d}");
        assert!(!source.contains("let ahead = n0;"), "d={d}");
        let want = if (96..=144).contains(&d) { 32 } else { 16 };
        assert_eq!(plain.tiles.block_n, want, "d={d} through workgroup memory");
    }
}

#[test]
fn tensor_core_tiles_on_the_h200_by_head_dim() {
    // The measured choices (BENCHMARKS.md, ninth round): 8 subgroups of 16 rows everywhere, with
    // 32-key tiles at d = 96 to 144 and 16-key tiles elsewhere (up to 64 they lead, and from 160
    // the 32-key tiles do not fit 48 KiB: the plan must not fall to 4 subgroups there).
    let mut caps = nvidia(Some((32, 32)));
    caps.coop_matrix_f16 = true;
    caps.subgroup_barrier = true;
    for (d, block_n) in [
        (32, 16),
        (64, 16),
        (96, 32),
        (128, 32),
        (144, 32),
        (160, 16),
        (192, 16),
        (256, 16),
    ] {
        let p = Attention::new(2, 8, 8, 8192, 8192, d).dtype(DType::F16);
        let plan = plan(&p, &caps).unwrap();
        assert_eq!(plan.kernel, Kernel::ForwardCoopMatrix, "d={d}");
        let want = Tiles {
            block_m: 128,
            block_n,
            threads_x: 32,
            threads_y: 8,
        };
        assert_eq!(plan.tiles, want, "d={d}");
    }
}

#[test]
fn banded_problems_on_the_tensor_cores_run_in_groups_of_heads() {
    let mut caps = nvidia(Some((32, 32)));
    caps.coop_matrix_f16 = true;
    caps.compute_units = 132;
    // 64 query blocks x 32 (batch, head) pairs = 2048 workgroups, about 264 to a group.
    let causal = Attention::new(2, 16, 16, 8192, 8192, 128)
        .dtype(DType::F16)
        .causal(true);
    let p = plan(&causal, &caps).unwrap();
    assert_eq!((p.kernel, p.grid), (Kernel::ForwardCoopMatrix, [64, 16, 2]));
    assert_eq!(p.banded_groups, 7);
    let window = causal.clone().causal(false).window_size(256, 0);
    assert_eq!(plan(&window, &caps).unwrap().banded_groups, 7);
    // Not banded, or not the tensor-core tier: one group (the value is not read).
    assert_eq!(
        plan(&causal.clone().causal(false), &caps)
            .unwrap()
            .banded_groups,
        1
    );
    let subgroup = plan_with(&causal, &caps, forced(Kernel::ForwardSubgroup, None)).unwrap();
    assert_eq!(subgroup.banded_groups, 1);

    use wgpu_flash_attn::plan::banded_groups;
    assert_eq!(banded_groups([1, 1000, 1], 132), 3);
    // Never more groups than pairs, never fewer than one.
    assert_eq!(banded_groups([1000, 1, 1], 132), 1);
    assert_eq!(banded_groups([2, 3, 1], 132), 1);
    assert_eq!(banded_groups([4096, 64, 4], 132), 256);
    // Unknown compute units: groups of two H200 waves; a smaller GPU makes more groups.
    assert_eq!(banded_groups([64, 16, 2], 0), 7);
    assert_eq!(banded_groups([64, 16, 2], 16), 32);
}

#[test]
fn software_rasterizers_get_rows_of_eight_lanes() {
    let caps = lavapipe();
    assert_eq!(DeviceFamily::of(&caps), DeviceFamily::Software);
    let p = Attention::new(1, 4, 4, 256, 256, 64);
    let planned = plan(&p, &caps).unwrap();
    assert_eq!(planned.tiles, family_tiles(DeviceFamily::Software)[0]);
    assert_eq!(planned.kernel, Kernel::ForwardSubgroup);
}

#[test]
fn subgroup_rows_must_be_powers_of_two_that_divide_every_size() {
    let caps = nvidia(Some((16, 64)));
    for (tx, fits) in [
        (1, true),
        (4, true),
        (8, true),
        (16, true),
        (32, false),
        (12, false),
    ] {
        assert_eq!(caps.subgroup_rows_fit(tx), fits, "threads_x {tx}");
    }
    assert!(!nvidia(None).subgroup_rows_fit(4));
}

#[test]
fn q_is_streamed_only_for_tiles_that_need_it() {
    let caps = nvidia(Some((32, 32)));
    let big = Tiles {
        block_m: 64,
        block_n: 32,
        threads_x: 8,
        threads_y: 16,
    };
    let p = Attention::new(1, 2, 2, 1000, 1000, 128);
    let streamed = plan_with(
        &p,
        &caps,
        PlanOptions {
            tiles: Some(big),
            ..Default::default()
        },
    )
    .unwrap();
    assert!(streamed.stream_q);
    assert_eq!(streamed.kernel, Kernel::ForwardSubgroup);
    assert!(big.workgroup_bytes(128) > 49152 && streamed.workgroup_bytes <= 49152);
    // The same tiles at d=64 fit with Q in workgroup memory.
    let p64 = Attention::new(1, 2, 2, 1000, 1000, 64);
    let kept = plan_with(
        &p64,
        &caps,
        PlanOptions {
            tiles: Some(big),
            ..Default::default()
        },
    )
    .unwrap();
    assert!(!kept.stream_q);
    // Plans stream Q only with the tuning table's streamed-Q tiles (NVIDIA, from d = 16), on any
    // family's limits, at any head dim.
    for caps in [caps.clone(), lavapipe(), DeviceCaps::webgpu_defaults()] {
        for d in (4..=256).step_by(4) {
            for dtype in [DType::F32, DType::F16] {
                let planned =
                    plan(&Attention::new(1, 8, 2, 1000, 1000, d).dtype(dtype), &caps).unwrap();
                let streamed = wgpu_flash_attn::tuning::streamed_q_tiles(&caps, d);
                assert!(
                    !planned.stream_q || streamed.contains(&planned.tiles),
                    "d={d} {:?}",
                    planned.tiles
                );
            }
        }
    }
    let f32_128 = plan(&Attention::new(1, 8, 8, 4096, 4096, 128), &caps).unwrap();
    assert!(f32_128.stream_q, "{:?}", f32_128.tiles);
}

#[test]
fn browsers_keep_the_portable_tier() {
    // The browser compiles WGSL itself and wants `enable subgroups;`, which naga cannot parse yet.
    let mut caps = nvidia(Some((32, 32)));
    caps.backend = "BrowserWebGpu".into();
    let p = Attention::new(1, 2, 2, 100, 100, 64);
    assert_eq!(plan(&p, &caps).unwrap().kernel, Kernel::ForwardPortable);
    let err = plan_with(&p, &caps, forced(Kernel::ForwardSubgroup, None)).unwrap_err();
    assert!(matches!(err, FlashError::MissingFeature { .. }), "{err}");
}

#[test]
fn tile_specs_parse_and_resolve_over_the_kernels_defaults() {
    use wgpu_flash_attn::kvcache::{self, DecodeKernel, DecodeTilesSpec, KvCacheAttention};
    let tiles: Tiles = "128x32x32x8".parse().unwrap();
    assert_eq!(tiles.to_string(), "128x32x32x8");
    for bad in ["128x32x32", "128x32x32x8x1", "axbxcxd", ""] {
        assert!(bad.parse::<Tiles>().is_err(), "{bad:?}");
    }

    let caps = nvidia(Some((32, 32)));
    let step = KvCacheAttention::decode(32, 8, 128, 1, &[32768; 8], 32768).dtype(DType::F16);
    let planned = kvcache::plan(&step, &caps).unwrap().tiles;
    // `plan` asks for nothing; a kernel's name for its default tiles.
    let plan_spec: DecodeTilesSpec = "plan".parse().unwrap();
    assert_eq!(plan_spec.resolve(&step, &caps).unwrap(), None);
    let portable = "portable".parse::<DecodeTilesSpec>().unwrap();
    assert_eq!(
        portable.resolve(&step, &caps).unwrap(),
        Some(kvcache::default_tiles(&step, DecodeKernel::Portable, &caps).unwrap())
    );
    // Knobs replace the defaults', and block_n follows them; the plan accepts the result.
    let t = "sg:64/16/2"
        .parse::<DecodeTilesSpec>()
        .unwrap()
        .resolve(&step, &caps)
        .unwrap()
        .unwrap();
    assert_eq!(t.kernel, DecodeKernel::Subgroup);
    assert_eq!(
        (t.threads, t.threads_per_key, t.keys_per_thread),
        (64, 16, 2)
    );
    assert_eq!(t.block_n, 64 * 2 / 16);
    assert_eq!(t.block_m, planned.block_m);
    assert_eq!(t.to_string(), format!("sg:{}x8x64/16/2", planned.block_m));
    assert!(kvcache::plan_with(&step, &caps, Some(t)).is_ok());
    // A single knob over the plan's own kernel (the benchmark's --threads).
    let wide = DecodeTilesSpec {
        threads: Some(128),
        ..Default::default()
    };
    let w = wide.resolve(&step, &caps).unwrap().unwrap();
    assert_eq!((w.kernel, w.threads), (planned.kernel, 128));
    for bad in [
        "sg:64/16",
        "64/16/8",
        "sg:64/16/8/4",
        "subgroups",
        "sg:a/b/c",
    ] {
        assert!(bad.parse::<DecodeTilesSpec>().is_err(), "{bad:?}");
    }
}

#[test]
fn kv_cache_lanes_hold_a_bounded_share_of_each_tile() {
    use wgpu_flash_attn::kvcache::{self, DecodeKernel, KvCacheAttention};
    // Over head dims, types, query heads per KV head and subgroup sizes, the subgroup kernel's
    // default tiles load at most 128 bytes of a tile's K per lane (one key may be larger, then
    // one key), with 1 to 8 keys per lane, a power of two, and tiles the plan accepts; every
    // such step has them (head dims below 32 included, whose keys have fewer than 8 chunks).
    let mut checked = 0;
    for subgroups in [(8, 8), (16, 32), (32, 32), (64, 64)] {
        let caps = nvidia(Some(subgroups));
        for dtype in [DType::F16, DType::BF16, DType::F32] {
            for head_dim in [12u32, 20, 24, 28, 32, 64, 96, 128, 256] {
                for (heads_q, heads_kv) in [(8u32, 8u32), (32, 8), (16, 2)] {
                    let step =
                        KvCacheAttention::decode(heads_q, heads_kv, head_dim, 1, &[4096; 2], 4096)
                            .dtype(dtype);
                    let t = kvcache::default_tiles(&step, DecodeKernel::Subgroup, &caps)
                        .unwrap_or_else(|e| panic!("{dtype:?} d={head_dim} {subgroups:?}: {e}"));
                    // At least 8 lanes per key where the subgroup and head_dim allow.
                    assert!(
                        t.threads_per_key >= 8.min(subgroups.0).min(1 << (head_dim / 4).ilog2()),
                        "{dtype:?} d={head_dim}: {t:?}"
                    );
                    let chunks = (head_dim / 4).div_ceil(t.threads_per_key);
                    let key_bytes = chunks * 4 * dtype.size() as u32;
                    let k = t.keys_per_thread;
                    assert!((1..=8).contains(&k) && k.is_power_of_two(), "{t:?}");
                    assert!(
                        k * key_bytes <= 128 || k == 1,
                        "{dtype:?} d={head_dim}: {t:?}"
                    );
                    assert!(
                        2 * k * key_bytes > 128 || k == 8,
                        "more keys would fit: {t:?}"
                    );
                    assert!(kvcache::plan_with(&step, &caps, Some(t)).is_ok(), "{t:?}");
                    checked += 1;
                }
            }
        }
    }
    assert!(checked >= 100, "only {checked} cases had subgroup tiles");
}

#[test]
fn products_unroll_on_nvidia_and_where_forced() {
    let p = Attention::new(1, 8, 8, 4096, 4096, 128);
    let p32 = Attention::new(1, 8, 8, 4096, 4096, 32);
    let p64 = Attention::new(1, 8, 8, 4096, 4096, 64);
    let caps = nvidia(Some((32, 32)));
    // NVIDIA: Q K^T always; P V where Q is streamed (the table's d = 128 tile), not where it is
    // held (d = 32 without subgroups).
    let streamed = plan(&p, &caps).unwrap();
    assert!(streamed.stream_q && streamed.unroll_qk && streamed.unroll_pv);
    assert_eq!(
        streamed.tiles_label(),
        format!("{} (Q streamed; Q K^T, P V unrolled)", streamed.tiles)
    );
    let held = plan(&p32, &nvidia(None)).unwrap();
    assert!(!held.stream_q && held.unroll_qk && !held.unroll_pv);
    assert_eq!(
        held.tiles_label(),
        format!("{} (Q K^T unrolled)", held.tiles)
    );
    // 80 accumulators at d = 160 with the first streamed tile; the limit, which is inclusive, at
    // d = 84 and 88 with the 256-row tile (2 rows a thread, 11 vec4s of each).
    let p160 = Attention::new(1, 8, 8, 4096, 4096, 160);
    let below_limit = plan(&p160, &caps).unwrap();
    assert_eq!(below_limit.tiles, streamed.tiles);
    assert!(below_limit.stream_q && below_limit.unroll_pv);
    for d in [84, 88] {
        let at_limit = plan(&Attention::new(1, 8, 8, 4096, 4096, d), &caps).unwrap();
        assert_eq!(at_limit.tiles.to_string(), "256x32x2x128", "d = {d}");
        assert!(at_limit.stream_q && at_limit.unroll_pv, "d = {d}");
    }
    // Forced tiles that stream Q but hold 256 accumulators a thread keep P V's loop.
    let many = Tiles {
        block_m: 128,
        block_n: 18,
        threads_x: 2,
        threads_y: 32,
    };
    let forced_many = plan_with(
        &p,
        &caps,
        PlanOptions {
            tiles: Some(many),
            ..Default::default()
        },
    )
    .unwrap();
    assert!(forced_many.stream_q && forced_many.unroll_qk && !forced_many.unroll_pv);
    // With more than 88 output accumulators a thread, P V's loop stays (its registers run out):
    // d = 192 with the first streamed tile (96); d = 256 takes the second, with 64.
    let p192 = Attention::new(1, 8, 8, 4096, 4096, 192);
    let wide = plan(&p192, &caps).unwrap();
    assert!(wide.stream_q && wide.unroll_qk && !wide.unroll_pv);
    let p256 = Attention::new(1, 8, 8, 2048, 2048, 256);
    let widest = plan(&p256, &caps).unwrap();
    assert_ne!(widest.tiles, streamed.tiles);
    assert!(widest.stream_q && widest.unroll_qk && widest.unroll_pv);
    let portable = plan(&p, &nvidia(None)).unwrap();
    assert_eq!(portable.kernel, Kernel::ForwardPortable);
    assert!(portable.unroll_qk && portable.unroll_pv);
    // Other families keep the loops unless forced; forcing works both ways, and P V unrolls
    // with forced tiles that stream Q (lavapipe's limits allow them; WebGPU's defaults do not).
    let unroll = |on| PlanOptions {
        unroll: Some(on),
        ..Default::default()
    };
    let big = Tiles {
        block_m: 128,
        block_n: 18,
        threads_x: 2,
        threads_y: 128,
    };
    let p132 = Attention::new(1, 8, 8, 1024, 1024, 132);
    for other in [lavapipe(), DeviceCaps::webgpu_defaults()] {
        let kept = plan(&p64, &other).unwrap();
        assert!(!kept.unroll_qk && !kept.unroll_pv, "{}", other.name);
        let on = plan_with(&p64, &other, unroll(true)).unwrap();
        assert!(
            on.unroll_qk && !on.stream_q && !on.unroll_pv,
            "{}",
            other.name
        );
    }
    let streamed = PlanOptions {
        tiles: Some(big),
        ..unroll(true)
    };
    let on = plan_with(&p132, &lavapipe(), streamed).unwrap();
    assert!(on.stream_q && on.unroll_qk && on.unroll_pv);
    let off = plan_with(&p, &caps, unroll(false)).unwrap();
    assert!(!off.unroll_qk && !off.unroll_pv);
    assert_eq!(off.tiles_label(), format!("{} (Q streamed)", off.tiles));
    // The tensor-core kernel has loops of its own: the option does not apply to it.
    let mut coop = caps.clone();
    coop.coop_matrix_f16 = true;
    let tensor = plan_with(&p.clone().dtype(DType::F16), &coop, unroll(true)).unwrap();
    assert_eq!(tensor.kernel, Kernel::ForwardCoopMatrix);
    assert!(!tensor.unroll_qk && !tensor.unroll_pv);
}
