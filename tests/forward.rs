//! The forward kernel against the f64 oracle, on the adapter WGPU_BACKEND selects.
// Native only: these tests block on the GPU (the browser's are in tests/web.rs).
#![cfg(not(target_arch = "wasm32"))]

mod common;

use common::{check, ctx, Inputs};
use wgpu_flash_attn::{Attention, DType, PlanOptions, Storage, Strides, Tensor, Tiles};

/// Every storage path this adapter has: f32, native f16 (where SHADER_F16 is enabled), packed f16.
fn storage_paths() -> Vec<(DType, PlanOptions)> {
    let mut v = vec![
        (DType::F32, PlanOptions::default()),
        (
            DType::F16,
            PlanOptions {
                force_packed_f16: true,
                ..Default::default()
            },
        ),
    ];
    if ctx().caps().shader_f16 {
        v.push((DType::F16, PlanOptions::default()));
    } else {
        eprintln!(
            "SKIPPED: native f16 storage (this adapter has no SHADER_F16); packed f16 is tested"
        );
    }
    v
}

#[test]
fn storage_paths_are_the_ones_planned() {
    let p = Attention::new(1, 1, 1, 8, 8, 8).dtype(DType::F16);
    let packed = ctx()
        .plan_with(
            &p,
            PlanOptions {
                force_packed_f16: true,
                ..Default::default()
            },
        )
        .unwrap();
    assert_eq!(packed.plan().storage, Storage::F16Packed);
    let native = ctx().plan(&p).unwrap();
    let want = if ctx().caps().shader_f16 {
        Storage::F16
    } else {
        Storage::F16Packed
    };
    assert_eq!(native.plan().storage, want);
}

#[test]
fn awkward_sequence_lengths() {
    // seq 1, around tile edges (tiles are at most 64), 113 x 203, both orders, causal both ways.
    let cases = [
        (1, 1),
        (1, 77),
        (77, 1),
        (31, 33),
        (33, 31),
        (63, 65),
        (65, 64),
        (113, 203),
        (203, 113),
        (129, 128),
    ];
    for (dtype, options) in storage_paths() {
        for (i, &(sq, sk)) in cases.iter().enumerate() {
            for causal in [false, true] {
                let p = Attention::new(1, 2, 1, sq, sk, 20)
                    .dtype(dtype)
                    .causal(causal)
                    .with_lse(true);
                check(&p, options, 100 + i as u64, 1.0);
            }
        }
    }
}

#[test]
fn long_rows_1023_by_1024() {
    for causal in [false, true] {
        let p = Attention::new(1, 1, 1, 1023, 1024, 36)
            .causal(causal)
            .with_lse(true);
        check(&p, PlanOptions::default(), 7, 1.0);
    }
}

#[test]
fn head_dims_including_non_powers_of_two() {
    for (dtype, options) in storage_paths() {
        for d in [4, 12, 36, 68, 96, 100, 128, 160, 192, 224, 256] {
            let p = Attention::new(1, 2, 2, 37, 70, d)
                .dtype(dtype)
                .causal(d % 8 == 4)
                .with_lse(true);
            check(&p, options, d as u64, 1.0);
        }
    }
}

#[test]
fn grouped_and_multi_query_heads() {
    for (hq, hkv) in [(8, 2), (4, 1), (3, 3), (6, 3)] {
        for causal in [false, true] {
            let p = Attention::new(2, hq, hkv, 45, 90, 32)
                .causal(causal)
                .with_lse(true);
            check(&p, PlanOptions::default(), hq as u64 * 10 + hkv as u64, 1.0);
        }
    }
}

#[test]
fn fully_masked_rows_give_zero_and_minus_infinity() {
    // Causal with seq_q > seq_kv: the first seq_q - seq_kv queries see no key at all.
    for (dtype, options) in storage_paths() {
        let p = Attention::new(1, 1, 1, 90, 20, 16)
            .dtype(dtype)
            .causal(true)
            .with_lse(true);
        let inputs = Inputs::new(&p, 5, 1.0);
        for (kernel, got) in common::run_tiers(&p, options, &inputs) {
            eprintln!("checking the {} tier", kernel.name());
            for i in 0..70 {
                assert!(
                    got.out[i * 16..(i + 1) * 16].iter().all(|&x| x == 0.0),
                    "row {i} must be 0"
                );
                assert_eq!(got.lse[i], f32::NEG_INFINITY, "lse of row {i}");
            }
            assert!(got.lse[70].is_finite() && got.out[70 * 16..].iter().any(|&x| x != 0.0));
        }
        check(&p, options, 5, 1.0);
    }
}

#[test]
fn large_logits_do_not_overflow() {
    // |scale * q.k| around 1e4: q, k entries of magnitude 25 over d = 32 with scale 1.
    for causal in [false, true] {
        let p = Attention::new(1, 2, 1, 50, 70, 32)
            .softmax_scale(1.0)
            .causal(causal)
            .with_lse(true);
        let inputs = Inputs::new(&p, 11, 25.0);
        let max_logit = (0..50)
            .flat_map(|i| (0..70).map(move |j| (i, j)))
            .map(|(i, j)| {
                (0..32)
                    .map(|c| inputs.q[i * 64 + c] * inputs.k[j * 32 + c])
                    .sum::<f32>()
                    .abs()
            })
            .fold(0.0f32, f32::max);
        assert!(
            max_logit > 3e3,
            "the case must reach large logits, max was {max_logit}"
        );
        for (kernel, got) in common::run_tiers(&p, PlanOptions::default(), &inputs) {
            eprintln!("checking the {} tier", kernel.name());
            assert!(got.out.iter().chain(&got.lse).all(|x| x.is_finite()));
        }
        check(&p, PlanOptions::default(), 11, 25.0);
    }
}

#[test]
fn explicit_strides_and_one_packed_qkv_buffer() {
    // (batch, head, seq, dim) layout for all four tensors.
    let (b, h, s, d) = (2u32, 3u32, 41u32, 24u32);
    let bhsd = Strides {
        batch: (h * s * d) as u64,
        seq: d as u64,
        head: (s * d) as u64,
    };
    let mut p = Attention::new(b, h, h, s, s, d).causal(true).with_lse(true);
    for t in [Tensor::Q, Tensor::K, Tensor::V, Tensor::O] {
        p = p.strides(t, bhsd);
    }
    check(&p, PlanOptions::default(), 21, 1.0);
    // Padded rows: seq stride larger than the row, batch stride with a gap.
    let padded = Strides {
        batch: (s as u64 + 3) * 40 * h as u64,
        seq: 40 * h as u64,
        head: 40,
    };
    let p = Attention::new(b, h, h, s, s, d)
        .strides(Tensor::K, padded)
        .strides(Tensor::V, padded);
    check(&p, PlanOptions::default(), 22, 1.0);
}

#[test]
fn every_tile_candidate_that_fits() {
    let caps = ctx().caps().clone();
    let p = Attention::new(1, 2, 1, 70, 91, 40)
        .causal(true)
        .with_lse(true);
    let mut tried = 0;
    for tiles in wgpu_flash_attn::tuning::forward_candidates() {
        if wgpu_flash_attn::plan::plan_with(
            &p,
            &caps,
            PlanOptions {
                tiles: Some(tiles),
                ..Default::default()
            },
        )
        .is_ok()
        {
            check(
                &p,
                PlanOptions {
                    tiles: Some(tiles),
                    ..Default::default()
                },
                31,
                1.0,
            );
            tried += 1;
        }
    }
    assert!(tried >= 5, "only {tried} tile candidates fit this adapter");
    let odd = Tiles {
        block_m: 12,
        block_n: 20,
        threads_x: 4,
        threads_y: 6,
    };
    check(
        &p,
        PlanOptions {
            tiles: Some(odd),
            ..Default::default()
        },
        32,
        1.0,
    );
}

#[test]
fn unrolled_products_match_the_oracle() {
    // The products' loops unrolled in the shader text, as NVIDIA's plans have them: with Q held
    // (a head dim of 3 vec4s, below those NVIDIA's plans stream Q at) and with Q streamed (Q
    // tiles of 64 KiB and more, which no device holds with the rest; P V unrolls too, in one of
    // them over 18 keys, not a multiple of 4).
    let unrolled = |tiles| PlanOptions {
        unroll: Some(true),
        tiles,
        ..Default::default()
    };
    let odd = Tiles {
        block_m: 12,
        block_n: 20,
        threads_x: 4,
        threads_y: 6,
    };
    let p = Attention::new(1, 2, 1, 70, 91, 12)
        .causal(true)
        .with_lse(true);
    for tiles in [None, Some(odd)] {
        let plan = ctx().plan_with(&p, unrolled(tiles)).unwrap();
        assert!(plan.plan().unroll_qk && !plan.plan().stream_q);
        check(&p, unrolled(tiles), 51, 1.0);
    }
    // 68 accumulators a thread with rows of 2 threads (the head dim's 33 vec4s do not divide);
    // 8 rows a thread, as NVIDIA's streamed tile at head dims 32 and 64 has them; rows of 2 and 4
    // lanes with 9 and 5 vec4s a lane, as NVIDIA's streamed tiles fitted to head dims 72 and 80
    // have them (`tuning::lanes_fitted`); rows of 1 lane with all 9 vec4s, as at d = 36. Q tiles
    // of 64 KiB and more (with 20 keys a tile at d = 36: 64.1 KiB with Q, 28 KiB without); 8 keys
    // a tile where that keeps both tiers within 32 KiB. check() runs every tier that can.
    for (p, tiles) in [
        (Attention::new(1, 2, 1, 40, 75, 132), "128x18x2x128"),
        (
            Attention::new(1, 2, 2, 300, 270, 64).causal(true),
            "256x8x8x32",
        ),
        (
            Attention::new(1, 2, 1, 280, 90, 72).with_lse(true),
            "256x8x2x128",
        ),
        (
            Attention::new(2, 2, 1, 270, 300, 80).causal(true),
            "256x8x4x64",
        ),
        (
            Attention::new(1, 2, 1, 290, 260, 36)
                .causal(true)
                .with_lse(true),
            "256x20x1x256",
        ),
    ] {
        let tiles: Tiles = tiles.parse().unwrap();
        let plan = ctx().plan_with(&p, unrolled(Some(tiles))).unwrap();
        assert!(plan.plan().stream_q && plan.plan().unroll_pv, "{tiles}");
        check(&p, unrolled(Some(tiles)), 52, 1.0);
    }
}

#[test]
fn run_convenience_matches_encode() {
    let p = Attention::new(1, 2, 1, 33, 47, 16)
        .causal(true)
        .with_lse(true);
    let inputs = Inputs::new(&p, 41, 1.0);
    let got = ctx()
        .run_blocking(&p, &inputs.q, &inputs.k, &inputs.v)
        .unwrap();
    let via_encode = common::run_gpu(ctx(), &p, PlanOptions::default(), &inputs);
    assert_eq!(got.out, via_encode.out);
    assert_eq!(got.lse.unwrap(), via_encode.lse);
}

#[test]
fn pipelines_are_cached() {
    // A context of its own: the shared one gains pipelines from tests running beside this one.
    let own = wgpu_flash_attn::FlashContext::default_blocking().unwrap();
    let p = Attention::new(1, 1, 1, 9, 9, 8).softmax_scale(0.3);
    own.plan(&p).unwrap();
    assert_eq!(own.cached_pipelines(), 1);
    own.plan(&p.clone().softmax_scale(0.7).causal(false))
        .unwrap(); // same shape class
    assert_eq!(own.cached_pipelines(), 1);
    own.plan(&p.clone().causal(true)).unwrap(); // another class
    assert_eq!(own.cached_pipelines(), 2);
}

#[test]
fn negative_and_zero_scales() {
    for scale in [-0.4f32, 0.0, 3.0] {
        for causal in [false, true] {
            let p = Attention::new(1, 2, 1, 40, 66, 16)
                .softmax_scale(scale)
                .causal(causal)
                .with_lse(true);
            check(&p, PlanOptions::default(), 51, 1.0);
        }
    }
}

#[test]
fn streamed_q_for_forced_tiles_too_large_for_workgroup_memory() {
    // Tiles whose Q tile does not fit this adapter's workgroup memory at d=256: the plan streams Q
    // from device memory instead. Query counts that are not multiples of block_m exercise the
    // rows past the end (clamped reads, never written).
    let limit = ctx().caps().max_workgroup_storage_bytes;
    let mut tried = 0;
    for tiles in wgpu_flash_attn::tuning::forward_candidates() {
        for (dtype, causal) in [(DType::F32, false), (DType::F16, true)] {
            let p = Attention::new(1, 2, 1, 45, 77, 256)
                .dtype(dtype)
                .causal(causal)
                .with_lse(true);
            let options = PlanOptions {
                tiles: Some(tiles),
                ..Default::default()
            };
            let Ok(plan) = ctx().plan_with(&p, options) else {
                continue;
            };
            if !plan.plan().stream_q {
                assert!(tiles.workgroup_bytes(256) <= limit, "{tiles:?}");
                continue;
            }
            assert!(plan.plan().workgroup_bytes <= limit, "{:?}", plan.plan());
            check(&p, options, 71, 1.0);
            tried += 1;
        }
    }
    assert!(
        tried >= 2,
        "only {tried} streamed-Q cases ran (limit {limit} B)"
    );
}
