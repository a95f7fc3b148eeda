//! Every kernel tier the adapter offers, forced, on the same problems: awkward shapes, GQA, each
//! option, variable-length batches and seeded random combinations, against the f64 oracle.
//! A tier the adapter lacks is skipped loudly (the portable tier runs everywhere).
// Native only: these tests block on the GPU (the browser's are in tests/web.rs).
#![cfg(not(target_arch = "wasm32"))]

mod common;

use common::{check, check_inputs, ctx, random_problem, Inputs};
use rand::SeedableRng;
use rand_chacha::ChaCha8Rng;
use wgpu_flash_attn::{
    AlibiSlopes, Attention, AttnMask, DType, FlashError, Kernel, MaskKind, PlanOptions,
};

/// The tiers this adapter can run an f16 problem on, each with the options that force it; where
/// the tensor-core tier keeps scores in registers, that tier once more with them in workgroup
/// memory.
fn tiers() -> Vec<(Kernel, PlanOptions)> {
    let probe = Attention::new(1, 1, 1, 16, 16, 64).dtype(DType::F16);
    let mut found = vec![];
    for kernel in [
        Kernel::ForwardPortable,
        Kernel::ForwardSubgroup,
        Kernel::ForwardCoopMatrix,
    ] {
        match ctx().plan_with(&probe, forced(kernel)) {
            Ok(plan) => {
                found.push((kernel, forced(kernel)));
                if plan.plan().coop_elements {
                    found.push((kernel, in_workgroup_memory(forced(kernel))));
                }
            }
            Err(e) => eprintln!("SKIPPED tier {}: {e}", kernel.name()),
        }
    }
    found
}

fn forced(kernel: Kernel) -> PlanOptions {
    PlanOptions {
        kernel: Some(kernel),
        ..Default::default()
    }
}

fn in_workgroup_memory(options: PlanOptions) -> PlanOptions {
    PlanOptions {
        coop_elements: Some(false),
        ..options
    }
}

/// Shapes around the tile edges (16-row fragments, 16- to 64-key tiles).
#[test]
fn awkward_shapes_on_every_tier() {
    for (kernel, options) in tiers() {
        let mut shapes = vec![
            (1, 1, 1, 1, 1, 16),
            (1, 2, 1, 15, 17, 32),
            (2, 4, 2, 16, 16, 64),
            (1, 1, 1, 17, 33, 48),
            (1, 3, 1, 113, 203, 64),
            (1, 2, 2, 65, 31, 128),
            (1, 1, 1, 40, 70, 256),
        ];
        if kernel == Kernel::ForwardCoopMatrix {
            // Only real tensor-core GPUs run this tier: larger shapes cost them nothing.
            shapes.push((2, 4, 1, 1023, 1024, 128));
            shapes.push((1, 2, 2, 300, 2000, 64));
        }
        for (n, &(b, hq, hkv, sq, sk, d)) in shapes.iter().enumerate() {
            for causal in [false, true] {
                let p = Attention::new(b, hq, hkv, sq, sk, d)
                    .dtype(DType::F16)
                    .causal(causal)
                    .with_lse(true);
                check(&p, options, 2000 + n as u64, 1.0);
            }
        }
    }
}

/// Banded problems on the tensor-core tier run their (batch, head) pairs in groups
/// (`Plan::banded_groups`), each group's query blocks longest first: enough workgroups for more
/// than one group, and a prime number of pairs, so that the groups differ in size.
#[test]
fn banded_groups_of_heads_on_the_tensor_cores() {
    let options = forced(Kernel::ForwardCoopMatrix);
    // The smallest prime number of pairs that makes two groups of two query blocks each on this
    // device (269 on an H200).
    let is_prime = |n: u32| n > 1 && (2..n).take_while(|f| f * f <= n).all(|f| n % f != 0);
    let units = ctx().caps().compute_units;
    let pairs = (2u32..)
        .find(|&n| is_prime(n) && wgpu_flash_attn::plan::banded_groups([2, n, 1], units) > 1)
        .expect("a prime makes two groups");
    let causal = Attention::new(1, pairs, pairs, 256, 256, 64)
        .dtype(DType::F16)
        .causal(true)
        .with_lse(true);
    if !tiers().iter().any(|(k, _)| *k == Kernel::ForwardCoopMatrix) {
        return; // skipped loudly by tiers()
    }
    // Where the tier runs, it must plan this problem.
    let plan = ctx()
        .plan_with(&causal, options)
        .expect("a tensor-core plan");
    let groups = plan.plan().banded_groups;
    assert!(groups > 1, "{groups} group(s) of {:?}", plan.plan().grid);
    // Causal blocks grow with their index; windows bounded on the left only shrink.
    for (n, p) in [
        causal.clone(),
        causal.clone().causal(false).window_size(100, -1),
    ]
    .iter()
    .enumerate()
    {
        check(p, options, 4100 + n as u64, 1.0);
    }
}

/// Each option alone and a variable-length batch, on every tier.
#[test]
fn options_on_every_tier() {
    for (_, options) in tiers() {
        let base = || Attention::new(2, 4, 2, 37, 90, 32).dtype(DType::F16);
        let problems = [
            base().window_size(20, 5),
            base().causal(true).window_size(33, -1),
            base().softcap(5.0),
            base().alibi(Some(AlibiSlopes::PerBatchHead)).causal(true),
            base().sinks(true).with_lse(true),
            base().attn_mask(Some(AttnMask {
                kind: MaskKind::Additive,
                per_batch: true,
                per_head: true,
            })),
            base().attn_mask(Some(AttnMask {
                kind: MaskKind::Boolean,
                per_batch: false,
                per_head: true,
            })),
            base().softmax_scale(-0.2).with_lse(true),
            // Scales too small to push masked scores out of exp2's range: the plan scales these
            // scores before the exponential instead (forward::scaled).
            base().softmax_scale(0.0).causal(true).with_lse(true),
            base().softmax_scale(-1e-12).window_size(10, 3),
            // The same where the tensor-core kernel rescales every tile and loads without a
            // branch (d = 128), and where it does neither (d = 256).
            Attention::new(1, 2, 1, 70, 300, 128)
                .dtype(DType::F16)
                .softmax_scale(0.0)
                .causal(true)
                .with_lse(true),
            Attention::new(1, 2, 1, 40, 200, 256)
                .dtype(DType::F16)
                .softmax_scale(-1e-12)
                .window_size(50, 7),
            // Bands wide enough that whole key tiles lie inside every row's band (tiles the
            // tensor-core kernel runs without the per-element mask), with ragged edges on both
            // sides.
            Attention::new(1, 2, 1, 300, 700, 32)
                .dtype(DType::F16)
                .window_size(200, 100),
            Attention::new(1, 2, 1, 300, 700, 32)
                .dtype(DType::F16)
                .causal(true)
                .window_size(150, -1)
                .with_lse(true),
            Attention::varlen(4, 2, 64, &[0, 7, 7, 60, 93], &[0, 50, 52, 52, 140])
                .dtype(DType::F16)
                .causal(true)
                .with_lse(true),
        ];
        for (n, p) in problems.iter().enumerate() {
            check(p, options, 2100 + n as u64, 2.0);
        }
    }
}

/// f32 and bf16 problems that allow f16 products: the tensor-core tier rounds their inputs to f16
/// (and is held to a naive attention that does the same), the other tiers ignore the permission.
/// The head dims take each form of the tensor-core kernel's loads (src/plan.rs: 64 through a
/// function, 128 a tile ahead, 192 stepped, 256 in the key loop).
#[test]
fn f32_and_bf16_with_f16_products_on_every_tier() {
    for (kernel, options) in tiers() {
        for dtype in [DType::F32, DType::BF16] {
            let problems = [
                Attention::new(1, 2, 1, 113, 203, 64),
                Attention::new(2, 2, 2, 65, 131, 128)
                    .causal(true)
                    .with_lse(true),
                Attention::new(1, 2, 1, 40, 70, 192).softcap(5.0),
                Attention::new(1, 1, 1, 33, 90, 256).with_lse(true),
                Attention::varlen(2, 1, 64, &[0, 30, 77], &[0, 40, 140])
                    .causal(true)
                    .paged_kv(16, 14, &[3, 0, 5, 11, 1, 2, 13, 4, 6, 7, 8, 9, 10, 12]),
            ];
            for (n, p) in problems.into_iter().enumerate() {
                let p = p.dtype(dtype).allow_f16_products(true);
                if kernel == Kernel::ForwardCoopMatrix {
                    let plan = ctx().plan_with(&p, options).expect("a tensor-core plan");
                    assert_ne!(plan.plan().storage, wgpu_flash_attn::Storage::F16);
                }
                check(&p, options, 2300 + n as u64, 1.0);
            }
        }
    }
}

/// Keys whose scores grow along the sequence move every row's max by far more than 2^8 over the
/// tiles, so a kernel that postpones rescaling must rescale (here, many times).
#[test]
fn growing_scores_force_rescaling_on_every_tier() {
    for (_, options) in tiers() {
        let p = Attention::new(1, 2, 1, 40, 300, 64)
            .dtype(DType::F16)
            .with_lse(true);
        let mut inputs = Inputs::new(&p, 2200, 1.0);
        for q in inputs.q.iter_mut() {
            *q = q.abs() * 0.5 + 0.5;
        }
        // Key n's entries are about n / 25: its scores with every query grow with n.
        for (n, row) in inputs.k.chunks_mut(64).enumerate() {
            for x in row {
                *x = (x.abs() * 0.2 + 0.9) * (n as f32 / 25.0);
            }
        }
        check_inputs(&p, options, &inputs);
    }
}

/// Seeded random combinations of every option and shape the tiers share (f16, head_dim a
/// multiple of 16).
#[test]
fn random_combinations_on_every_tier() {
    for (kernel, options) in tiers() {
        let mut rng = ChaCha8Rng::seed_from_u64(77);
        let cases = if kernel == Kernel::ForwardCoopMatrix {
            100
        } else {
            12 // the portable tier has its own 240 in tests/variants.rs
        };
        for case in 0..cases {
            let p = random_problem(&mut rng, &[16, 32, 48, 64, 96, 128], &[DType::F16], 90);
            check(&p, options, 3000 + case, 2.0);
        }
    }
}

/// Every cooperative-matrix tile of the tuning tables this adapter can run (16 and 32 rows per
/// subgroup, each key tile), forced, on seeded random problems and a shape with partial tiles;
/// with scores in registers and through workgroup memory where the device has both.
#[test]
fn every_coop_tile_candidate() {
    let coop: Vec<PlanOptions> = tiers()
        .into_iter()
        .filter(|(k, _)| *k == Kernel::ForwardCoopMatrix)
        .map(|(_, options)| options)
        .collect();
    if coop.is_empty() {
        return; // skipped loudly by tiers()
    }
    let sg = ctx()
        .caps()
        .subgroup_sizes
        .expect("the coop tier needs subgroups")
        .0;
    let mut tried = 0;
    let start = std::time::Instant::now();
    for d in [64, 128, 256] {
        // Each way's own table (scores in registers lead with longer key tiles).
        for (tiles, tier) in coop.iter().flat_map(|&tier| {
            let elements = tier.coop_elements.unwrap_or(ctx().caps().coop_elements);
            wgpu_flash_attn::tuning::coop_tiles(d, sg, elements).map(move |tiles| (tiles, tier))
        }) {
            let options = PlanOptions {
                tiles: Some(tiles),
                ..tier
            };
            let probe = Attention::new(1, 1, 1, 16, 16, d).dtype(DType::F16);
            if let Err(e) = ctx().plan_with(&probe, options) {
                eprintln!("SKIPPED coop tiles {tiles:?} at d={d}: {e}");
                continue;
            }
            let seed =
                d * 1000 + tiles.block_n * 10 + tiles.block_m / tiles.threads_y + tiles.threads_y;
            let mut rng = ChaCha8Rng::seed_from_u64(u64::from(seed));
            for case in 0..5 {
                let p = random_problem(&mut rng, &[d], &[DType::F16], 90);
                check(&p, options, 5000 + case, 2.0);
            }
            let partial = Attention::new(2, 4, 2, 200, 333, d)
                .dtype(DType::F16)
                .causal(true);
            check(&partial, options, 5100, 2.0);
            tried += 1;
            // Progress: this test compiles a pipeline per candidate and option set.
            eprintln!(
                "coop tiles {tiles:?} at d={d}: done at {:.0?}",
                start.elapsed()
            );
        }
    }
    assert!(tried > 0, "no coop tile candidate fits this adapter");
}

/// Forcing a tier the problem or the device cannot use is a typed error, never a silent fallback.
#[test]
fn forcing_an_unusable_tier_is_an_error() {
    let coop = forced(Kernel::ForwardCoopMatrix);
    if !ctx().caps().coop_elements {
        let registers = PlanOptions {
            coop_elements: Some(true),
            ..Default::default()
        };
        let p = Attention::new(1, 1, 1, 16, 16, 64).dtype(DType::F16);
        let why = ctx().coop_elements_status().unwrap_err().to_string();
        // With the tier left to the plan, the error carries what the probe found; with the
        // tensor-core tier forced too, a device without it says that first.
        for (options, tier_forced) in [
            (registers, false),
            (
                PlanOptions {
                    kernel: coop.kernel,
                    ..registers
                },
                true,
            ),
        ] {
            match ctx().plan_with(&p, options) {
                Err(e @ FlashError::Unavailable { .. }) => {
                    assert!(e.to_string().contains(&why), "{e} lacks the reason {why}");
                }
                Err(FlashError::MissingFeature { .. })
                    if tier_forced && !ctx().caps().coop_matrix_f16 => {}
                other => panic!(
                    "scores in registers forced without the probe's approval: {:?}",
                    other.map(|_| ())
                ),
            }
        }
    }
    let f32_problem = Attention::new(1, 1, 1, 16, 16, 64);
    let odd_dim = Attention::new(1, 1, 1, 16, 16, 36).dtype(DType::F16);
    for p in [f32_problem, odd_dim] {
        match ctx().plan_with(&p, coop) {
            Err(FlashError::BadOption { .. } | FlashError::MissingFeature { .. }) => {}
            other => panic!(
                "{p:?}: expected a typed refusal, got {:?}",
                other.map(|_| ())
            ),
        }
    }
}
