//! Windows, softcap, ALiBi, sinks and bf16 against the f64 oracle, each alone and in random
//! combinations.
// Native only: these tests block on the GPU (the browser's are in tests/web.rs).
#![cfg(not(target_arch = "wasm32"))]

mod common;

use common::{check, ctx, random_problem, Inputs};
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use wgpu_flash_attn::{
    AlibiSlopes, Attention, AttnMask, DType, FlashError, MaskKind, PlanOptions, Tiles,
};

#[test]
fn sliding_windows() {
    // (seq_q, seq_kv, left, right, causal): windows narrower and wider than a tile, one-sided,
    // with causal, and seq_q != seq_kv both ways (the window follows the bottom-right diagonal).
    let cases = [
        (100, 100, 7, 7, false),
        (100, 100, 40, -1, false),
        (100, 100, -1, 3, false),
        (100, 100, 33, 0, true),
        (100, 100, 16, 16, true),
        (60, 150, 10, 5, false),
        (150, 60, 10, 5, false),
        (150, 60, 0, 0, false),
        (150, 60, 20, -1, true),
        (70, 70, 0, -1, false),
    ];
    for (n, &(sq, sk, left, right, causal)) in cases.iter().enumerate() {
        let p = Attention::new(1, 2, 1, sq, sk, 24)
            .window_size(left, right)
            .causal(causal)
            .with_lse(true);
        check(&p, PlanOptions::default(), 300 + n as u64, 1.0);
    }
}

#[test]
fn window_tiles_outside_the_band_are_not_visited() {
    // One query block at the bottom right of 1024 keys, window (16, 0): every key below 960 lies
    // outside the band of every query, tile-aligned. Those K and V entries are NaN: a visited tile
    // would turn the output into NaN (a masked probability is 0, and 0 * NaN is NaN).
    let p = Attention::new(1, 2, 1, 32, 1024, 16)
        .window_size(16, 0)
        .with_lse(true);
    let mut inputs = Inputs::new(&p, 13, 1.0);
    for x in inputs.k[..960 * 16]
        .iter_mut()
        .chain(inputs.v[..960 * 16].iter_mut())
    {
        *x = f32::NAN;
    }
    let want = wgpu_flash_attn::reference::attention(&p, &inputs.q, &inputs.k, &inputs.v);
    for (kernel, got) in common::run_tiers(&p, PlanOptions::default(), &inputs) {
        eprintln!("checking the {} tier", kernel.name());
        assert!(
            got.out.iter().chain(&got.lse).all(|x| x.is_finite()),
            "a tile outside the band was read"
        );
        let err = got
            .out
            .iter()
            .zip(&want.out)
            .map(|(g, w)| (*g as f64 - w).abs())
            .fold(0.0, f64::max);
        assert!(err < 1e-5, "error {err}");
    }
    // The plan counts the same: each block visits its band only, not all of N.
    let long = Attention::new(1, 1, 1, 4096, 4096, 64).window_size(64, 0);
    let plan = ctx().plan(&long).unwrap();
    let full = ctx()
        .plan(&Attention::new(1, 1, 1, 4096, 4096, 64))
        .unwrap()
        .plan()
        .key_tiles_visited();
    assert!(plan.plan().key_tiles_visited() * 10 < full);
}

#[test]
fn windows_wider_than_the_sequence_are_unbounded() {
    for (left, right) in [
        (i32::MAX, -1),
        (-1, i32::MAX),
        (i32::MAX, i32::MAX),
        (1 << 30, 5),
    ] {
        for (sq, sk) in [(8, 8), (10, 4), (4, 10)] {
            let p = Attention::new(1, 1, 1, sq, sk, 8)
                .window_size(left, right)
                .with_lse(true);
            check(&p, PlanOptions::default(), 17, 1.0);
        }
    }
}

#[test]
fn softcap_alibi_and_sinks() {
    for (softcap, alibi, sinks) in [
        (30.0, None, false),
        (0.5, None, false),
        (0.0, Some(AlibiSlopes::PerHead), false),
        (0.0, Some(AlibiSlopes::PerBatchHead), false),
        (0.0, None, true),
        (5.0, Some(AlibiSlopes::PerHead), true),
    ] {
        for causal in [false, true] {
            let p = Attention::new(2, 4, 2, 45, 77, 20)
                .softcap(softcap)
                .alibi(alibi)
                .sinks(sinks)
                .causal(causal)
                .with_lse(true);
            check(&p, PlanOptions::default(), 400, 3.0);
        }
    }
}

#[test]
fn sinks_give_rows_without_keys_their_own_lse() {
    let p = Attention::new(1, 2, 1, 50, 20, 16)
        .causal(true)
        .sinks(true)
        .with_lse(true);
    let inputs = Inputs::new(&p, 9, 1.0);
    for (kernel, got) in common::run_tiers(&p, PlanOptions::default(), &inputs) {
        eprintln!("checking the {} tier", kernel.name());
        let sinks = inputs.sinks.as_ref().unwrap();
        for (h, &sink) in sinks.iter().enumerate() {
            for i in 0..30 {
                let row = (i * 2 + h) * 16;
                assert!(
                    got.out[row..row + 16].iter().all(|&x| x == 0.0),
                    "row {i} head {h} must be 0"
                );
                let lse = got.lse[h * 50 + i];
                assert!(
                    (lse - sink).abs() < 1e-6,
                    "lse {lse} of a row without keys must be the sink {sink}"
                );
            }
        }
    }
    check(&p, PlanOptions::default(), 9, 1.0);
}

#[test]
fn bias_and_boolean_masks_with_broadcasting() {
    for kind in [MaskKind::Additive, MaskKind::Boolean] {
        for (per_batch, per_head) in [(false, false), (true, false), (false, true), (true, true)] {
            for causal in [false, true] {
                let mask = AttnMask {
                    kind,
                    per_batch,
                    per_head,
                };
                let p = Attention::new(2, 4, 2, 37, 53, 12)
                    .attn_mask(Some(mask))
                    .causal(causal)
                    .with_lse(true);
                check(&p, PlanOptions::default(), 600, 2.0);
            }
        }
    }
}

#[test]
fn rows_masked_entirely_by_a_bias_give_zero() {
    let mask = AttnMask {
        kind: MaskKind::Additive,
        per_batch: false,
        per_head: false,
    };
    let p = Attention::new(1, 1, 1, 10, 30, 8)
        .attn_mask(Some(mask))
        .with_lse(true);
    let mut inputs = Inputs::new(&p, 12, 1.0);
    let bias = inputs.mask.as_mut().unwrap();
    for j in 0..30 {
        bias[3 * 30 + j] = f32::NEG_INFINITY; // row 3 sees nothing
    }
    for (kernel, got) in common::run_tiers(&p, PlanOptions::default(), &inputs) {
        eprintln!("checking the {} tier", kernel.name());
        assert!(got.out[3 * 8..4 * 8].iter().all(|&x| x == 0.0));
        assert_eq!(got.lse[3], f32::NEG_INFINITY);
        assert!(got.out.iter().all(|x| x.is_finite()));
    }
}

#[test]
fn variable_length_batches() {
    // Lengths from 1 to a few hundred in one dispatch, keys longer and shorter than queries, an
    // empty key range; with GQA, causal, windows, ALiBi per (batch, head), sinks and LSE.
    let lens_q = [1u32, 300, 17, 64, 65, 2, 129];
    let lens_k = [5u32, 280, 17, 0, 90, 1, 129];
    let prefix = |l: &[u32]| {
        std::iter::once(0)
            .chain(l.iter().scan(0, |acc, &x| {
                *acc += x;
                Some(*acc)
            }))
            .collect::<Vec<u32>>()
    };
    let (cq, ck) = (prefix(&lens_q), prefix(&lens_k));
    for (dtype, causal, window, alibi, sinks) in [
        (DType::F32, false, (-1, -1), None, false),
        (
            DType::F32,
            true,
            (-1, -1),
            Some(AlibiSlopes::PerBatchHead),
            false,
        ),
        (DType::F16, true, (20, -1), None, true),
        (DType::BF16, false, (8, 8), Some(AlibiSlopes::PerHead), true),
    ] {
        let p = Attention::varlen(4, 2, 20, &cq, &ck)
            .dtype(dtype)
            .causal(causal)
            .window_size(window.0, window.1)
            .alibi(alibi)
            .sinks(sinks)
            .with_lse(true);
        assert_eq!((p.batch, p.seq_q, p.seq_kv), (7, 300, 280));
        check(&p, PlanOptions::default(), 700, 1.0);
    }
    // Strides other than the packed layout are refused, and so is the baseline.
    let mut padded = Attention::varlen(1, 1, 16, &cq, &ck);
    padded.strides[0].batch = 64;
    assert!(matches!(
        ctx().plan(&padded).unwrap_err(),
        FlashError::BadLayout { tensor: "q", .. }
    ));
    let p = Attention::varlen(1, 1, 16, &cq, &ck);
    let err = wgpu_flash_attn::kernels::materialized::Materialized::new(ctx(), &p).unwrap_err();
    assert!(
        matches!(err, FlashError::BadOption { what: "varlen", .. }),
        "{err}"
    );
    // Decreasing prefix sums, and a batch without any query token.
    for cq in [&[0, 5, 3][..], &[0, 0, 0][..]] {
        let bad = Attention::varlen(1, 1, 16, cq, &[0, 4, 8]);
        assert!(matches!(
            ctx().plan(&bad).unwrap_err(),
            FlashError::BadOption {
                what: "cu_seqlens_q",
                ..
            }
        ));
    }
}

#[test]
fn bf16_storage() {
    for causal in [false, true] {
        for d in [8, 36, 128] {
            let p = Attention::new(1, 2, 1, 70, 90, d)
                .dtype(DType::BF16)
                .causal(causal)
                .with_lse(true);
            check(&p, PlanOptions::default(), 500 + d as u64, 1.0);
        }
    }
}

#[test]
fn bad_option_values_and_missing_buffers() {
    let p = Attention::new(1, 1, 1, 8, 8, 8);
    for (bad, what) in [
        (p.clone().window_size(-2, 0), "window_size.0 (left)"),
        (p.clone().window_size(0, -5), "window_size.1 (right)"),
        (p.clone().softcap(-1.0), "softcap"),
        (p.clone().softcap(f32::INFINITY), "softcap"),
    ] {
        match ctx().plan(&bad).unwrap_err() {
            FlashError::BadOption { what: w, .. } => assert_eq!(w, what),
            e => panic!("unexpected {e}"),
        }
    }
    let q = vec![0.5f32; 64];
    let alibi = p.clone().alibi(Some(AlibiSlopes::PerHead));
    let err = ctx().run_blocking(&alibi, &q, &q, &q).unwrap_err();
    assert_eq!(
        err,
        FlashError::ShapeMismatch {
            tensor: "alibi_slopes",
            expected: 1,
            got: 0
        }
    );
    let sinks = p.clone().sinks(true);
    let err = ctx().run_blocking(&sinks, &q, &q, &q).unwrap_err();
    assert_eq!(
        err,
        FlashError::ShapeMismatch {
            tensor: "sinks",
            expected: 1,
            got: 0
        }
    );
    let err = wgpu_flash_attn::kernels::materialized::Materialized::new(
        ctx(),
        &p.clone().window_size(4, 4),
    )
    .unwrap_err();
    assert!(
        matches!(
            err,
            FlashError::BadOption {
                what: "window_size",
                ..
            }
        ),
        "{err}"
    );
}

/// 240 random problems drawing every option, awkward shapes and variable-length batches, each
/// against the oracle.
#[test]
fn random_combinations() {
    let mut rng = ChaCha8Rng::seed_from_u64(2026);
    let caps = ctx().caps().clone();
    let dims = [4, 8, 12, 20, 32, 36, 64];
    let tiles = [
        None,
        Some(Tiles {
            block_m: 8,
            block_n: 8,
            threads_x: 4,
            threads_y: 8,
        }),
        Some(Tiles {
            block_m: 16,
            block_n: 16,
            threads_x: 8,
            threads_y: 8,
        }),
    ];
    for case in 0..240u64 {
        let p = random_problem(&mut rng, &dims, &[DType::F32, DType::F16, DType::BF16], 70);
        let options = PlanOptions {
            tiles: tiles[rng.random_range(0..tiles.len())],
            force_packed_f16: caps.shader_f16 && rng.random_bool(0.5),
            ..Default::default()
        };
        check(&p, options, 1000 + case, 2.0);
    }
}

/// K and V through a block table: the same results as the contiguous problem, on every tier that
/// reads pages. Pages are shuffled, a page boundary falls inside key tiles, and the pages no
/// sequence uses hold NaN, so a wrong page would poison the output.
#[test]
fn paged_kv_reads_the_same_keys() {
    use wgpu_flash_attn::{reference::gather, Tensor};
    let varlen = |dtype| {
        Attention::varlen(4, 2, 32, &[0, 5, 5, 45], &[0, 9, 30, 100])
            .dtype(dtype)
            .causal(true)
            .with_lse(true)
    };
    let fixed = |dtype| {
        Attention::new(2, 4, 2, 7, 45, 32)
            .dtype(dtype)
            .with_lse(true)
    };
    let mut rng = ChaCha8Rng::seed_from_u64(41);
    for (n, dense) in [
        varlen(DType::F32),
        varlen(DType::F16),
        fixed(DType::F32),
        fixed(DType::F16).window_size(10, 3),
        // d = 128: on the tensor-core tier the key loop's unbranched, clamped loads
        // (plan::coop_load_always) read these pages, across several key tiles.
        Attention::varlen(4, 2, 128, &[0, 5, 5, 70], &[0, 9, 30, 230])
            .dtype(DType::F16)
            .causal(true)
            .with_lse(true),
    ]
    .into_iter()
    .enumerate()
    {
        for page in [1u32, 3, 16] {
            // Sequence b's keys in order, as the contiguous problem holds them.
            let inputs = Inputs::new(&dense, 900 + n as u64, 1.0);
            let keys = |t: Tensor| {
                gather(
                    &dense,
                    t,
                    if t == Tensor::K { &inputs.k } else { &inputs.v },
                )
            };
            let lens: Vec<u32> = (0..dense.batch).map(|b| dense.sequence(b).seq_kv).collect();
            let per_seq = lens.iter().map(|l| l.div_ceil(page)).max().unwrap();
            let used: u32 = lens.iter().map(|l| l.div_ceil(page)).sum();
            // Two spare pages, left NaN: the table's unused columns point at the last one.
            let num_pages = used + 2;
            let spare = num_pages - 1;
            let mut free: Vec<u32> = (0..spare).collect();
            for i in (1..free.len()).rev() {
                free.swap(i, rng.random_range(0..=i));
            }
            let mut table = vec![spare; (dense.batch * per_seq) as usize];
            let row = (dense.heads_kv * dense.head_dim) as usize;
            let mut paged_k = vec![f32::NAN; num_pages as usize * page as usize * row];
            let mut paged_v = paged_k.clone();
            let (dense_k, dense_v) = (keys(Tensor::K), keys(Tensor::V));
            let mut first_key = 0usize;
            for b in 0..dense.batch as usize {
                for p in 0..lens[b].div_ceil(page) as usize {
                    let page_id = free.pop().unwrap();
                    table[b * per_seq as usize + p] = page_id;
                    for t in 0..page as usize {
                        let key = p * page as usize + t;
                        if key >= lens[b] as usize {
                            break;
                        }
                        let src = (first_key + key) * row;
                        let dst = (page_id as usize * page as usize + t) * row;
                        paged_k[dst..dst + row].copy_from_slice(&dense_k[src..src + row]);
                        paged_v[dst..dst + row].copy_from_slice(&dense_v[src..src + row]);
                    }
                }
                first_key += lens[b] as usize;
            }
            let paged = dense.clone().paged_kv(page, num_pages, &table);
            paged.validate().unwrap();
            // The oracle reads pages too; a sequence of its own keeps its row of the table.
            let by_pages =
                wgpu_flash_attn::reference::attention(&paged, &inputs.q, &paged_k, &paged_v);
            let by_rows =
                wgpu_flash_attn::reference::attention(&dense, &inputs.q, &inputs.k, &inputs.v);
            assert_eq!(by_pages.out, by_rows.out);
            let last = paged.sequence(paged.batch - 1);
            if paged.cu_seqlens.is_some() {
                let row = &table[((paged.batch - 1) * per_seq) as usize..];
                assert_eq!(last.paged_kv.unwrap().block_table, row);
            }
            let paged_inputs = Inputs {
                k: paged_k,
                v: paged_v,
                q: inputs.q.clone(),
                alibi: None,
                sinks: None,
                mask: None,
            };
            for (kernel, got) in common::run_tiers(&paged, PlanOptions::default(), &paged_inputs) {
                let forced = PlanOptions {
                    kernel: Some(kernel),
                    ..Default::default()
                };
                common::compare(&dense, forced, &inputs, &got);
            }
        }
    }
    // A table of rows not all as long, too short for its sequence's 45 keys (2 pages of 32, or
    // 3 of 16), or pointing past the pages is refused.
    let p = fixed(DType::F16);
    assert!(p.clone().paged_kv(32, 4, &[0, 1, 2, 3]).validate().is_ok());
    for (page, table) in [
        (32, &[0, 1, 2][..]),
        (16, &[0, 1, 2, 3]),
        (32, &[0, 1, 2, 4]),
    ] {
        assert!(matches!(
            p.clone().paged_kv(page, 4, table).validate(),
            Err(FlashError::BadOption {
                what: "block_table",
                ..
            })
        ));
    }
    assert!(matches!(
        p.clone().paged_kv(0, 4, &[0, 1]).validate(),
        Err(FlashError::BadOption {
            what: "paged_kv",
            ..
        })
    ));
}
