//! KV-cache attention against the f64 oracle: split-KV decoding with GQA packing, paged caches,
//! append + rotary, chunked prefill mixed with decoding, and the LSE merge of attention states.
//!
//! The oracle of a step is plain attention (`reference::attention_full`) per sequence over the
//! first kv_len(b) keys, gathered on the CPU from the cache (pages included) plus the appended
//! keys, with rotary embeddings computed in f64 from their definition. Cache slots the step must
//! not read hold NaN, and so do the outputs before the run.
// Native only: these tests block on the GPU (the browser's are in tests/web.rs).
#![cfg(not(target_arch = "wasm32"))]

mod common;
#[path = "common/kv.rs"]
mod kv;

use common::{ctx, guarded_buffer, read_guarded, Inputs, LEAD};
use kv::{check, check_on, make_step, shuffled_table};
use wgpu_flash_attn::context::{from_dtype_bytes, to_dtype_bytes};
use wgpu_flash_attn::kvcache;
use wgpu_flash_attn::timing::GpuTimer;
use wgpu_flash_attn::{
    merge_states, reference, Attention, DType, FlashContext, FlashError, KvCacheAttention,
    KvCacheBuffers, MergeBuffers, MergeStates, PrefillRoute, RotaryAngles, RotaryEmbedding,
    RotaryStyle, TensorBuffer,
};

#[test]
fn decode_gqa_split_kv() {
    // 8 query heads over 2 KV heads; caches of 1, 77 and 300 tokens; one split up to many, and the
    // plan's own choice. A split may get no key at all (the 1-token cache).
    for dtype in [DType::F32, DType::F16, DType::BF16] {
        for splits in [Some(1), Some(3), Some(7), None] {
            let mut p = KvCacheAttention::decode(8, 2, 64, 1, &[1, 77, 300], 320)
                .dtype(dtype)
                .with_lse(true);
            if let Some(n) = splits {
                p = p.num_splits(n);
            }
            let got = check(&p, 100);
            if let Some(n) = splits {
                assert_eq!(got.splits, n);
            }
        }
    }
}

#[test]
fn decode_head_dims_and_groups() {
    // MHA, GQA and MQA; head dims that are not powers of two; several query tokens per sequence.
    for (hq, hkv, d, seq_q, causal) in [
        (4, 4, 4, 1, true),
        (3, 1, 36, 2, true),
        (6, 2, 100, 3, false),
        (4, 1, 128, 1, true),
        (2, 2, 256, 4, true),
        (16, 2, 24, 16, true),
    ] {
        let p = KvCacheAttention::decode(hq, hkv, d, seq_q, &[45, 130], 140)
            .causal(causal)
            .num_splits(3)
            .with_lse(true);
        check(&p, 200 + d as u64);
    }
}

#[test]
fn rows_without_keys() {
    // A sequence with an empty cache, and a causal one with more queries than keys: rows that see
    // no key give O = 0 and LSE = -inf, through the combine as well.
    for splits in [1, 4] {
        let p = KvCacheAttention::new(4, 2, 16, &[0, 1, 3, 9], &[0, 0, 4])
            .contiguous(8)
            .causal(true)
            .num_splits(splits)
            .with_lse(true);
        check(&p, 300);
    }
}

#[test]
fn consecutive_steps_of_one_plan() {
    // Steps of one plan, three in one submission and three alone, each with its own inputs, must
    // equal a fresh plan's step (checked against the oracle) bit for bit. With 4200 cached keys in
    // 4 splits the subgroup kernel merges its own splits: each step tags its partial states (the
    // tag alternates from step to step, kept by counters in the plan's scratch), so a merge that
    // took the step before's states would differ, and one that never found this step's would
    // write NaN. With 300, a combine pass merges them.
    for (dtype, seq_q, longest) in [(DType::F32, 1, 300), (DType::F16, 3, 4200)] {
        let p = KvCacheAttention::decode(8, 2, 64, seq_q, &[5, 77, longest], longest + 20)
            .dtype(dtype)
            .causal(true)
            .num_splits(4)
            .with_lse(true);
        let plan = ctx().plan_kv_cache(&p).unwrap();
        let subgroup = plan.plan().tiles.kernel == kvcache::DecodeKernel::Subgroup;
        assert_eq!(plan.plan().merge_in_kernel, subgroup && longest == 4200);
        let seeds: Vec<u64> = (0..6).map(|i| 1500 + 10 * i).collect();
        let want: Vec<_> = seeds.iter().map(|&seed| check(&p, seed)).collect();
        let e = p.dtype.size();
        let steps: Vec<[wgpu::Buffer; 5]> = seeds
            .iter()
            .map(|&seed| {
                let s = make_step(&p, seed);
                let up = |label, x: &[f32]| guarded_buffer(ctx(), label, &to_dtype_bytes(x, dtype));
                let nan = vec![f32::NAN; p.lse_len() as usize];
                [
                    up("q", &s.q),
                    up("k_cache", &s.k_cache),
                    up("v_cache", &s.v_cache),
                    up("out", &vec![f32::NAN; p.q_len() as usize]),
                    guarded_buffer(ctx(), "lse", bytemuck::cast_slice(&nan)),
                ]
            })
            .collect();
        let encode = |enc: &mut wgpu::CommandEncoder, [q, k, v, out, lse]: &[wgpu::Buffer; 5]| {
            let at = |buffer| TensorBuffer {
                buffer,
                offset: LEAD,
            };
            let buffers = KvCacheBuffers::new(at(q), at(k), at(v), at(out)).lse(at(lse));
            plan.encode(enc, &buffers).unwrap();
        };
        let mut enc = ctx().device().create_command_encoder(&Default::default());
        for step in &steps[..3] {
            encode(&mut enc, step);
        }
        ctx().queue().submit([enc.finish()]);
        for step in &steps[3..] {
            let mut enc = ctx().device().create_command_encoder(&Default::default());
            encode(&mut enc, step);
            ctx().queue().submit([enc.finish()]);
        }
        for (n, (step, want)) in steps.iter().zip(&want).enumerate() {
            let out = from_dtype_bytes(&read_guarded(ctx(), &step[3], p.q_len() * e), dtype);
            let lse: Vec<f32> =
                bytemuck::pod_collect_to_vec(&read_guarded(ctx(), &step[4], p.lse_len() * 4));
            let bits = |x: &[f32]| x.iter().map(|v| v.to_bits()).collect::<Vec<_>>();
            assert_eq!(bits(&out), bits(&want.out), "{dtype:?}: step {n}, O");
            assert_eq!(bits(&lse), bits(&want.lse), "{dtype:?}: step {n}, LSE");
        }
    }
}

#[test]
fn many_splits_merged_in_batches() {
    // More splits than the merging workgroup reads at once (it reads them in several batches),
    // up to 8 query heads per KV head in a block, and several head_dim chunks per thread of a row
    // (d = 256); a 3-token cache leaves most of its splits empty.
    for (hq, hkv, d, splits) in [(16, 2, 256, 9), (8, 1, 64, 20), (4, 4, 32, 20)] {
        // 1030 keys per split of the longest sequence: long enough for the kernel to merge.
        let longest = 1030 * splits;
        let p = KvCacheAttention::decode(hq, hkv, d, 1, &[longest, 3, 700], longest)
            .dtype(DType::F16)
            .num_splits(splits)
            .with_lse(true);
        // The subgroup kernel's own tiles where the device has subgroups (the plan may take the
        // portable kernel at some of these shapes).
        let tiles = kvcache::default_tiles(&p, kvcache::DecodeKernel::Subgroup, ctx().caps()).ok();
        let plan = kvcache::plan_with(&p, ctx().caps(), tiles).unwrap();
        assert_eq!(plan.merge_in_kernel, tiles.is_some());
        assert_eq!(check_on(ctx(), &p, 1600 + d as u64, tiles).splits, splits);
    }
}

#[test]
fn paged_cache_matches_contiguous() {
    // Pages of 1, 3, 16, 64 and 128 tokens in shuffled order (unused pages are NaN); a tile of
    // keys (32 or 64 at this size, by kernel and device) spans several pages, or part of one. The
    // paged output equals the contiguous one bit for bit (same data, same order of operations),
    // and both match the oracle.
    let cached = [5u32, 190, 64];
    for dtype in [DType::F32, DType::F16] {
        let contiguous = KvCacheAttention::decode(8, 2, 32, 2, &cached, 192)
            .dtype(dtype)
            .num_splits(2)
            .with_lse(true);
        let base = check(&contiguous, 400);
        for page in [1u32, 3, 16, 64, 128] {
            let per_seq = 192u32.div_ceil(page);
            let (num_pages, table) = shuffled_table(3, per_seq, 5, page as u64);
            let p = contiguous.clone().paged(page, num_pages, &table);
            let got = check(&p, 400);
            assert_eq!(got.out.len(), base.out.len());
            let same = got
                .out
                .iter()
                .zip(&base.out)
                .all(|(a, b)| a.to_bits() == b.to_bits());
            assert!(
                same,
                "page size {page}: paged output differs from contiguous"
            );
        }
    }
}

#[test]
fn append_and_rotary() {
    let styles = [
        None,
        Some(RotaryEmbedding::interleaved(16, 10000.0)),
        Some(RotaryEmbedding::half_split(32, 10000.0)),
        Some(RotaryEmbedding::half_split(16, 10000.0)),
        Some(RotaryEmbedding {
            dim: 24,
            style: RotaryStyle::Interleaved,
            angles: RotaryAngles::Table { positions: 200 },
        }),
        Some(RotaryEmbedding {
            dim: 32,
            style: RotaryStyle::HalfSplit,
            angles: RotaryAngles::Table { positions: 150 },
        }),
    ];
    for (n, rotary) in styles.into_iter().enumerate() {
        for dtype in [DType::F32, DType::F16] {
            let p = KvCacheAttention::decode(4, 2, 32, 3, &[0, 17, 120], 150)
                .dtype(dtype)
                .append_new_kv(true)
                .rotary(rotary)
                .with_lse(true);
            check(&p, 500 + n as u64);
            // The same through pages of 8 tokens.
            let (num_pages, table) = shuffled_table(3, 19, 2, 7);
            check(&p.clone().paged(8, num_pages, &table), 500 + n as u64);
        }
    }
}

#[test]
fn chunked_prefill_mixed_with_decode() {
    // One dispatch: sequences 0 and 2 decode one token, 1 prefills a chunk of 40 tokens after 33
    // cached, 3 prefills its first 17 tokens, 4 sits out; appended and rotated, through pages.
    let cu = [0u32, 1, 41, 42, 59, 59];
    let cached = [100u32, 33, 7, 0, 12];
    for (dtype, splits) in [
        (DType::F32, None),
        (DType::F16, None),
        (DType::F16, Some(4)),
    ] {
        let (num_pages, table) = shuffled_table(5, 8, 3, 11);
        let mut p = KvCacheAttention::new(8, 2, 64, &cu, &cached)
            .dtype(dtype)
            .paged(16, num_pages, &table)
            .causal(true)
            .append_new_kv(true)
            .rotary(Some(RotaryEmbedding::half_split(64, 10000.0)))
            .with_lse(true);
        if let Some(n) = splits {
            p = p.num_splits(n);
        }
        check(&p, 600);
    }
}

#[test]
fn tile_variants_match_the_oracle() {
    // The tile knobs a benchmark sweeps: threads per key, keys per thread, tiles loaded ahead,
    // threads along head_dim, workgroup size; on a split GQA decode, a paged causal multi-token
    // decode over pages smaller than a tile, and an appended chunked prefill.
    let cu = [0u32, 1, 30, 31];
    let (num_pages, table) = shuffled_table(3, 70, 3, 21);
    let problems = [
        KvCacheAttention::decode(8, 2, 64, 1, &[1, 77, 300], 320)
            .dtype(DType::F16)
            .num_splits(3)
            .with_lse(true),
        KvCacheAttention::decode(8, 2, 32, 2, &[5, 190, 64], 210)
            .paged(3, num_pages, &table)
            .num_splits(2)
            .with_lse(true),
        KvCacheAttention::new(4, 4, 40, &cu, &[50, 9, 0])
            .contiguous(64)
            .causal(true)
            .append_new_kv(true)
            .num_splits(4),
    ];
    // (threads, threads_per_key, keys_per_thread, threads_v)
    let variants = [
        (128, 4, 1, 16),
        (128, 4, 2, 8),
        (128, 4, 2, 32),
        (64, 8, 4, 16),
        (256, 2, 1, 32),
        (128, 16, 4, 16),
    ];
    for (n, p) in problems.iter().enumerate() {
        let base = kvcache::plan(p, ctx().caps()).unwrap().tiles;
        for (threads, threads_per_key, keys_per_thread, threads_v) in variants {
            let tiles = kvcache::DecodeTiles {
                kernel: kvcache::DecodeKernel::Portable,
                threads,
                threads_per_key,
                keys_per_thread,
                threads_v,
                block_n: threads * keys_per_thread / threads_per_key,
                // 8 rows keep 16 threads per key within 32 KiB of workgroup memory.
                block_m: base.block_m.min(8),
            };
            eprintln!("{tiles:?}");
            check_on(ctx(), p, 700 + n as u64, Some(tiles));
        }
    }
    // The subgroup kernel's knobs (threads, lanes per key, keys per lane), where the device can
    // run it: lanes per key up to its smallest subgroup, workgroups of whole subgroups.
    let Some((min_sg, max_sg)) = ctx().caps().subgroup_sizes else {
        eprintln!("SKIPPED: subgroup KV-cache tiles (this adapter has no SUBGROUP)");
        return;
    };
    let mut tested = 0;
    for (n, p) in problems.iter().enumerate() {
        let base = kvcache::default_tiles(p, kvcache::DecodeKernel::Subgroup, ctx().caps())
            .expect("a device with subgroups runs the subgroup kernel");
        for (threads, threads_per_key, keys_per_thread) in [
            (64, 8, 4),
            (128, 4, 1),
            (64, 2, 2),
            (128, 8, 8),
            (256, 1, 1),
        ] {
            if threads_per_key > min_sg || threads % max_sg != 0 {
                continue;
            }
            let tiles = kvcache::DecodeTiles {
                threads,
                threads_per_key,
                keys_per_thread,
                block_n: threads * keys_per_thread / threads_per_key,
                // Rows no more than lanes per key; at most 2, so Q and O stay few registers.
                block_m: base.block_m.min(threads_per_key).min(2),
                ..base
            };
            eprintln!("{tiles:?}");
            check_on(ctx(), p, 800 + n as u64, Some(tiles));
            tested += 1;
        }
    }
    assert!(tested >= 6, "only {tested} subgroup tile variants ran");
}

#[test]
fn each_kernel_where_the_device_has_what_it_needs() {
    let step = KvCacheAttention::decode(32, 8, 128, 1, &[4096; 8], 4096).dtype(DType::F16);
    let mut caps = wgpu_flash_attn::DeviceCaps::webgpu_defaults();
    caps.compute_units = 132;
    // No subgroups: the portable kernel, and the subgroup kernel is an error when forced.
    let plan = kvcache::plan(&step, &caps).unwrap();
    assert_eq!(plan.tiles.kernel, kvcache::DecodeKernel::Portable);
    let forced = kvcache::DecodeTiles {
        kernel: kvcache::DecodeKernel::Subgroup,
        block_m: 4,
        block_n: 16,
        threads: 64,
        threads_per_key: 16,
        keys_per_thread: 4,
        threads_v: 0,
    };
    assert!(matches!(
        kvcache::plan_with(&step, &caps, Some(forced)),
        Err(wgpu_flash_attn::FlashError::MissingFeature { .. })
    ));
    assert!(kvcache::default_tiles(&step, kvcache::DecodeKernel::Subgroup, &caps).is_err());
    // Subgroups of 32 (NVIDIA): the subgroup kernel, 16 lanes per key for 4 rows of d = 128.
    caps.subgroup_sizes = Some((32, 32));
    let plan = kvcache::plan(&step, &caps).unwrap();
    assert_eq!(plan.tiles.kernel, kvcache::DecodeKernel::Subgroup);
    assert_eq!(
        (plan.tiles.block_m, plan.tiles.threads_per_key),
        (4, 16),
        "{plan:?}"
    );
    assert!(kvcache::plan_with(&step, &caps, Some(forced)).is_ok());
    // Lanes of a key beyond the smallest subgroup (8, as lavapipe) are refused.
    caps.subgroup_sizes = Some((8, 8));
    assert!(matches!(
        kvcache::plan_with(&step, &caps, Some(forced)),
        Err(wgpu_flash_attn::FlashError::BadOption { .. })
    ));
    // There, d = 128 leaves the subgroup kernel 2 rows per workgroup (K and V read twice for a
    // group of 4 heads), still its kernel (measured faster on lavapipe); d = 64 keeps 4 rows.
    let sub = kvcache::default_tiles(&step, kvcache::DecodeKernel::Subgroup, &caps).unwrap();
    assert_eq!((sub.block_m, sub.threads_per_key), (2, 8), "{sub:?}");
    let plan = kvcache::plan(&step, &caps).unwrap();
    assert_eq!(plan.tiles, sub);
    let d64 = KvCacheAttention::decode(32, 8, 64, 1, &[4096; 8], 4096).dtype(DType::F16);
    let plan = kvcache::plan(&d64, &caps).unwrap();
    assert_eq!(plan.tiles.kernel, kvcache::DecodeKernel::Subgroup);
    assert_eq!((plan.tiles.block_m, plan.tiles.threads_per_key), (4, 8));
    // wgpu's placeholder for Metal, smallest subgroup 4: one row per workgroup at d = 128, so
    // portable; at d = 64, 2 rows, which the placeholder does not make enough either.
    caps.subgroup_sizes = Some((4, 64));
    let plan = kvcache::plan(&step, &caps).unwrap();
    assert_eq!(plan.tiles.kernel, kvcache::DecodeKernel::Portable);
    let sub = kvcache::default_tiles(&d64, kvcache::DecodeKernel::Subgroup, &caps).unwrap();
    assert_eq!(sub.block_m, 2, "{sub:?}");
    let plan = kvcache::plan(&d64, &caps).unwrap();
    assert_eq!(plan.tiles.kernel, kvcache::DecodeKernel::Portable);
    // In the browser (naga cannot write `enable subgroups;` there): portable.
    caps.backend = "BrowserWebGpu".into();
    let plan = kvcache::plan(&step, &caps).unwrap();
    assert_eq!(plan.tiles.kernel, kvcache::DecodeKernel::Portable);
}

#[test]
fn wide_cache_loads_need_16_byte_offsets() {
    use wgpu_flash_attn::kernels::decode::wide_kv_loads;
    let mut caps = wgpu_flash_attn::DeviceCaps::webgpu_defaults();
    caps.subgroup_sizes = Some((32, 32));
    caps.shader_f16 = true;
    let step =
        |d: u32, dtype: DType| KvCacheAttention::decode(32, 8, d, 1, &[512; 2], 512).dtype(dtype);
    // 2-byte types read 16 bytes at a time where rows start on 16 bytes; f32 already does.
    assert!(wide_kv_loads(
        &kvcache::plan(&step(128, DType::F16), &caps).unwrap()
    ));
    assert!(wide_kv_loads(
        &kvcache::plan(&step(128, DType::BF16), &caps).unwrap()
    ));
    assert!(!wide_kv_loads(
        &kvcache::plan(&step(128, DType::F32), &caps).unwrap()
    ));
    assert!(!wide_kv_loads(
        &kvcache::plan(&step(68, DType::F16), &caps).unwrap()
    ));
    caps.subgroup_sizes = None;
    assert!(!wide_kv_loads(
        &kvcache::plan(&step(128, DType::F16), &caps).unwrap()
    ));

    // On this device: a wide plan refuses caches at 8 bytes past a 16-byte boundary, with a
    // typed error, and takes them at 16; any other plan takes both.
    let ctx = ctx();
    let p = step(64, DType::F16);
    let planned = ctx.plan_kv_cache(&p).unwrap();
    // Subgroups of 8 or more with f16 (lavapipe, NVIDIA) give 2 head_dim chunks a lane at d = 64:
    // there the refusals below are checked; elsewhere only the accepted offsets.
    let wide = wide_kv_loads(planned.plan());
    if ctx.caps().shader_f16 && ctx.caps().subgroup_sizes.is_some_and(|(lo, _)| lo >= 8) {
        assert!(wide, "{:?}", planned.plan());
    } else {
        eprintln!("SKIPPED: the refused offsets (this device's plan reads 8 bytes at a time)");
    }
    let e = 2u64;
    let buf = |label, elems: u64| guarded_buffer(ctx, label, &vec![0u8; (elems * e) as usize + 16]);
    let (q, k, v, out) = (
        buf("q", p.q_len()),
        buf("k_cache", p.cache_len()),
        buf("v_cache", p.cache_len()),
        buf("out", p.q_len()),
    );
    let at = |buffer, offset| TensorBuffer { buffer, offset };
    for (k_offset, v_offset, refused) in [
        (LEAD + 8, LEAD + 16, Some("k_cache")),
        (LEAD + 16, LEAD + 8, Some("v_cache")),
        (LEAD + 16, LEAD + 16, None),
    ] {
        let buffers = KvCacheBuffers::new(
            at(&q, LEAD),
            at(&k, k_offset),
            at(&v, v_offset),
            at(&out, LEAD),
        );
        let mut enc = ctx.device().create_command_encoder(&Default::default());
        let result = planned.encode(&mut enc, &buffers);
        match refused.filter(|_| wide) {
            Some(name) => assert!(
                matches!(result, Err(FlashError::BadLayout { tensor, .. }) if tensor == name),
                "{result:?}"
            ),
            None => result.unwrap(),
        }
    }
}

#[test]
fn plans_of_the_same_kernels_reuse_their_pipelines() {
    // A context of its own: the other tests plan concurrently on the shared one.
    let ctx = FlashContext::default_blocking().unwrap();
    let step = |cached: u32| {
        KvCacheAttention::decode(8, 2, 64, 1, &[cached, cached + 9], 4096)
            .dtype(DType::F16)
            .append_new_kv(true)
    };
    ctx.plan_kv_cache(&step(100)).unwrap();
    let compiled = ctx.cached_pipelines();
    assert!(compiled >= 2, "attention and append: {compiled}");
    // Other lengths (as every serving step has), same kernels: nothing compiled. (Under 512 keys
    // the plan does not split, so no split variant and no combine pass.)
    for cached in [101, 250, 400] {
        ctx.plan_kv_cache(&step(cached)).unwrap();
    }
    assert_eq!(ctx.cached_pipelines(), compiled);
    // Another head_dim is another kernel.
    ctx.plan_kv_cache(&KvCacheAttention::decode(8, 2, 32, 1, &[100, 109], 4096).dtype(DType::F16))
        .unwrap();
    assert!(ctx.cached_pipelines() > compiled);
    // The forward kernels too.
    let p = Attention::new(1, 2, 2, 64, 64, 32);
    ctx.plan(&p).unwrap();
    let compiled = ctx.cached_pipelines();
    ctx.plan(&Attention::new(3, 2, 2, 100, 100, 32)).unwrap();
    assert_eq!(ctx.cached_pipelines(), compiled);
}

/// Two decoding sequences around a prefill chunk of 80 tokens (sequence 1) over a cached prefix,
/// appended and rotated, causal; in 16-token pages shuffled by `table_seed` where `paged`.
fn mixed_prefill_step(dtype: DType, paged: bool, table_seed: u64) -> KvCacheAttention {
    let p = KvCacheAttention::new(8, 2, 32, &[0, 1, 81, 82], &[40, 50, 200])
        .dtype(dtype)
        .causal(true)
        .append_new_kv(true)
        .rotary(Some(RotaryEmbedding::half_split(32, 10000.0)));
    if !paged {
        return p;
    }
    let (num_pages, table) = shuffled_table(3, 20, 16, table_seed);
    p.paged(16, num_pages, &table)
}

#[test]
fn prefill_chunks_through_the_forward_kernels() {
    // The chunk runs through the forward kernels (asked for with PrefillRoute::Forward), the
    // decoding tokens through the KV-cache kernel, split 3 ways, so that the combine finds their
    // packed partial states through the token map.
    for dtype in [DType::F32, DType::F16] {
        for paged in [false, true] {
            let p = mixed_prefill_step(dtype, paged, 31)
                .num_splits(3)
                .prefill_route(PrefillRoute::Forward);
            let plan = kvcache::plan(&p, ctx().caps()).unwrap();
            let routed: Vec<u32> = plan.forward.iter().map(|(b, _)| *b).collect();
            assert_eq!(routed, vec![1], "{plan:?}");
            assert_eq!(plan.forward[0].1.problem, p.forward_problem(1));
            assert!(plan.work.iter().all(|&(b, _)| b != 1));
            // Partial states for the two decoding tokens only (8 heads, 3 splits, O and LSE);
            // splits this short meet in the combine pass, so no counters.
            assert_eq!(plan.partial_tokens(), 2);
            assert!(!plan.merge_in_kernel);
            assert_eq!(plan.partial_bytes(), 3 * 2 * 8 * (32 + 1) * 4);
            check(&p, 1300 + paged as u64);
            // Not when told so, nor when the LSE is asked for; by default (Auto), exactly where
            // the chunk's forward plan takes the tensor cores.
            let off = kvcache::plan(
                &p.clone().prefill_route(PrefillRoute::KvCache),
                ctx().caps(),
            )
            .unwrap();
            assert!(off.forward.is_empty() && off.work.iter().any(|&(b, _)| b == 1));
            let auto = KvCacheAttention {
                prefill_route: PrefillRoute::Auto,
                ..p.clone()
            };
            assert_eq!(
                mixed_prefill_step(dtype, paged, 31).prefill_route,
                PrefillRoute::Auto
            );
            let tensor_cores = wgpu_flash_attn::plan::plan(&p.forward_problem(1), ctx().caps())
                .unwrap()
                .kernel
                == wgpu_flash_attn::Kernel::ForwardCoopMatrix;
            let auto_plan = kvcache::plan(&auto, ctx().caps()).unwrap();
            assert_eq!(
                auto_plan.forward.len(),
                tensor_cores as usize,
                "{auto_plan:?}"
            );
            let lse = kvcache::plan(&p.clone().with_lse(true), ctx().caps()).unwrap();
            assert!(lse.forward.is_empty());
        }
    }
    // Routed sequences first and last, one sitting out (no query tokens) beside them: the packed
    // partial states hold the one decoding token, and the combine finds its row.
    let p = KvCacheAttention::new(8, 2, 32, &[0, 70, 70, 71, 151], &[10, 30, 60, 5])
        .causal(true)
        .append_new_kv(true)
        .num_splits(3)
        .prefill_route(PrefillRoute::Forward);
    let plan = kvcache::plan(&p, ctx().caps()).unwrap();
    let routed: Vec<u32> = plan.forward.iter().map(|(b, _)| *b).collect();
    assert_eq!(
        (routed, plan.partial_tokens(), plan.splits),
        (vec![0, 3], 1, 3)
    );
    check(&p, 1305);
    // Only prefill chunks: no KV-cache attention, no split.
    let p = KvCacheAttention::new(4, 4, 32, &[0, 70], &[30])
        .causal(true)
        .append_new_kv(true)
        .num_splits(4)
        .prefill_route(PrefillRoute::Forward);
    let plan = kvcache::plan(&p, ctx().caps()).unwrap();
    assert_eq!(
        (plan.forward.len(), plan.work.len(), plan.splits),
        (1, 0, 1)
    );
    check(&p, 1310);
    // The KV-cache kernel's tiles are for the decoding tokens alone (on subgroups of 32 at
    // d = 128: 4 rows a workgroup; with the 128-token chunk among them, 8).
    let mut caps = wgpu_flash_attn::DeviceCaps::webgpu_defaults();
    caps.subgroup_sizes = Some((32, 32));
    caps.max_workgroup_storage_bytes = 32768;
    caps.compute_units = 132;
    let mixed = KvCacheAttention::new(32, 8, 128, &[0, 1, 2, 130], &[4000, 4000, 100]).causal(true);
    assert_eq!(kvcache::plan(&mixed, &caps).unwrap().tiles.block_m, 8);
    let routed = kvcache::plan(&mixed.clone().prefill_route(PrefillRoute::Forward), &caps).unwrap();
    assert_eq!(
        (routed.forward.len(), routed.tiles.block_m),
        (1, 4),
        "{routed:?}"
    );
    // Auto: the chunk stays on the KV-cache kernel without tensor cores (f32 here, or no
    // cooperative matrices), and goes to the forward kernels with them.
    assert!(kvcache::plan(&mixed, &caps).unwrap().forward.is_empty());
    caps.shader_f16 = true;
    caps.max_workgroup_storage_bytes = 49152;
    assert!(kvcache::plan(&mixed.clone().dtype(DType::F16), &caps)
        .unwrap()
        .forward
        .is_empty());
    caps.coop_matrix_f16 = true;
    assert!(
        kvcache::plan(&mixed, &caps).unwrap().forward.is_empty(),
        "f32: no tensor cores"
    );
    // Unless the step allows f16 products: then the chunk reads the f32 caches on them.
    let allowed = kvcache::plan(&mixed.clone().allow_f16_products(true), &caps).unwrap();
    assert_eq!(allowed.forward.len(), 1, "{allowed:?}");
    assert_eq!(
        allowed.forward[0].1.kernel,
        wgpu_flash_attn::Kernel::ForwardCoopMatrix
    );
    assert_eq!(allowed.forward[0].1.storage, wgpu_flash_attn::Storage::F32);
    let f16 = mixed.clone().dtype(DType::F16);
    let auto = kvcache::plan(&f16, &caps).unwrap();
    assert_eq!(auto.forward.len(), 1, "{auto:?}");
    assert_eq!(
        auto.forward[0].1.kernel,
        wgpu_flash_attn::Kernel::ForwardCoopMatrix
    );
    caps.coop_matrix_f16 = false;
    assert!(kvcache::plan(&f16, &caps).unwrap().forward.is_empty());
}

/// f32 and bf16 steps that allow f16 products: by default (Auto) their prefill chunk runs on the
/// tensor-core forward kernel where the device has it, reading the caches in their own type, and
/// is held to a naive attention that rounds as that kernel does; elsewhere everything stays on the
/// KV-cache kernel, in the storage type.
#[test]
fn f32_and_bf16_prefill_chunks_with_f16_products() {
    for dtype in [DType::F32, DType::BF16] {
        for paged in [false, true] {
            let p = mixed_prefill_step(dtype, paged, 37).allow_f16_products(true);
            let forward = wgpu_flash_attn::plan::plan(&p.forward_problem(1), ctx().caps()).unwrap();
            let tensor_cores = forward.kernel == wgpu_flash_attn::Kernel::ForwardCoopMatrix;
            let plan = kvcache::plan(&p, ctx().caps()).unwrap();
            let routed: Vec<u32> = plan.forward.iter().map(|(b, _)| *b).collect();
            if tensor_cores {
                assert_eq!(routed, vec![1], "{plan:?}");
                assert_eq!(plan.forward[0].1.storage, forward.storage);
                assert_ne!(forward.storage, wgpu_flash_attn::Storage::F16);
            } else {
                eprintln!(
                    "SKIPPED: no tensor-core tier here; the chunk stays on the KV-cache kernel"
                );
                assert!(routed.is_empty(), "{plan:?}");
            }
            check(&p, 1320 + paged as u64);
        }
    }
}

#[test]
fn timestamps_of_a_step_with_forward_passes() {
    // Begin only, end only, or both: the step's passes take what was given, and wgpu accepts it.
    let ctx = ctx();
    if !ctx.caps().timestamp_query {
        eprintln!("SKIPPED: no TIMESTAMP_QUERY on this device");
        return;
    }
    let p = KvCacheAttention::new(4, 2, 32, &[0, 1, 71], &[20, 10])
        .causal(true)
        .append_new_kv(true)
        .prefill_route(PrefillRoute::Forward);
    let planned = ctx.plan_kv_cache(&p).unwrap();
    assert_eq!(planned.plan().forward.len(), 1);
    let buf = |elems: u64| guarded_buffer(ctx, "t", &vec![0u8; (elems * 4) as usize]);
    let (q, k, v, out) = (
        buf(p.q_len()),
        buf(p.cache_len()),
        buf(p.cache_len()),
        buf(p.q_len()),
    );
    let (k_new, v_new) = (buf(p.new_kv_len()), buf(p.new_kv_len()));
    let set = ctx.device().create_query_set(&wgpu::QuerySetDescriptor {
        label: None,
        ty: wgpu::QueryType::Timestamp,
        count: 2,
    });
    for (begin, end) in [(Some(0), None), (None, Some(1)), (Some(0), Some(1))] {
        let scope = ctx.device().push_error_scope(wgpu::ErrorFilter::Validation);
        let mut enc = ctx.device().create_command_encoder(&Default::default());
        planned
            .encode_timed(
                &mut enc,
                &KvCacheBuffers::new(&q, &k, &v, &out).new_kv(&k_new, &v_new),
                Some(wgpu::ComputePassTimestampWrites {
                    query_set: &set,
                    beginning_of_pass_write_index: begin,
                    end_of_pass_write_index: end,
                }),
            )
            .unwrap();
        ctx.queue().submit([enc.finish()]);
        let error = pollster::block_on(scope.pop());
        assert!(error.is_none(), "{begin:?} {end:?}: {error:?}");
    }
}

#[test]
fn a_timer_of_several_passes_reads_each() {
    // Three steps in one submission, each between its own pair of timestamps: three times, each
    // a real interval (a pair left unresolved reads as 0 - 0, one resolved wrongly as garbage or
    // a wrapped difference).
    let ctx = ctx();
    let Some(timer) = GpuTimer::with_pairs(ctx, 3) else {
        eprintln!("SKIPPED: no TIMESTAMP_QUERY on this device");
        return;
    };
    let p = KvCacheAttention::decode(4, 2, 32, 1, &[40, 100], 100);
    let planned = ctx.plan_kv_cache(&p).unwrap();
    let buf = |elems: u64| guarded_buffer(ctx, "t", &vec![0u8; (elems * 4) as usize]);
    let (q, k, v, out) = (
        buf(p.q_len()),
        buf(p.cache_len()),
        buf(p.cache_len()),
        buf(p.q_len()),
    );
    let mut enc = ctx.device().create_command_encoder(&Default::default());
    for i in 0..timer.pairs() {
        planned
            .encode_timed(
                &mut enc,
                &KvCacheBuffers::new(&q, &k, &v, &out),
                Some(timer.writes_at(i)),
            )
            .unwrap();
    }
    timer.resolve(&mut enc);
    ctx.queue().submit([enc.finish()]);
    let ms = pollster::block_on(timer.read_all_ms(ctx)).unwrap();
    assert_eq!(ms.len(), 3);
    for t in &ms {
        assert!(t.is_finite() && *t > 0.0 && *t < 1e4, "{ms:?}");
    }
}

#[test]
#[should_panic(expected = "a GpuTimer times 1 to")]
fn a_timer_of_no_passes_is_refused() {
    GpuTimer::with_pairs(ctx(), 0);
}

#[test]
fn merge_states_on_gpu_and_host() {
    // Attention over 3 disjoint key ranges (one empty), merged by LSE, equals the attention over
    // all keys.
    check_merge(3, 20, &[(0, 30), (30, 30), (30, 90)]);
    // Many parts, some empty: each of the GPU merge's part groups (4 at d = 128, 2 at d = 256)
    // merges 10-11 of them in turn.
    let ranges: Vec<(u32, u32)> = (0..40u32)
        .scan(0, |end, i| {
            let lo = *end;
            *end += if i % 7 == 3 { 0 } else { 5 };
            Some((lo, *end))
        })
        .collect();
    check_merge(2, 128, &ranges);
    check_merge(1, 256, &ranges[..21]);
    // A row that no part saw: O = 0, LSE = -inf.
    let none = [f32::NEG_INFINITY];
    let (o, l) = merge_states(4, &[(&[1.0, 2.0, 3.0, 4.0], &none)]).unwrap();
    assert_eq!((o, l), (vec![0.0; 4], vec![f32::NEG_INFINITY]));
}

/// Attention of 4 query tokens over the keys of `ranges` (disjoint, covering 0..end, in order),
/// one part per range, merged by LSE on the GPU (f32 and f16 out) and the host against the
/// attention over all keys. An empty range's O is NaN: a part without keys must not be read.
fn check_merge(heads: u32, d: u32, ranges: &[(u32, u32)]) {
    let seq_kv = ranges.last().unwrap().1;
    let full = Attention::new(1, heads, heads, 4, seq_kv, d).with_lse(true);
    let inputs = Inputs::new(&full, 700, 1.0);
    let want = reference::attention(&full, &inputs.q, &inputs.k, &inputs.v);
    let rows = (4 * heads) as usize;
    let mut o_parts = Vec::new();
    let mut lse_parts = Vec::new();
    for &(lo, hi) in ranges {
        let mut o = vec![f32::NAN; rows * d as usize];
        let mut lse = vec![f32::NEG_INFINITY; rows];
        if hi > lo {
            let part = Attention::new(1, heads, heads, 4, hi - lo, d)
                .softmax_scale(full.scale())
                .with_lse(true);
            let kv = |x: &[f32]| x[(lo * heads * d) as usize..(hi * heads * d) as usize].to_vec();
            let r = reference::attention(&part, &inputs.q, &kv(&inputs.k), &kv(&inputs.v));
            o = r.out.iter().map(|&x| x as f32).collect();
            // reference LSE is (heads, seq_q); states are per output row (token, head).
            for t in 0..4 {
                for h in 0..heads as usize {
                    lse[t * heads as usize + h] = r.lse[h * 4 + t] as f32;
                }
            }
        }
        o_parts.push(o);
        lse_parts.push(lse);
    }
    let parts: Vec<(&[f32], &[f32])> = o_parts
        .iter()
        .zip(&lse_parts)
        .map(|(o, l)| (o.as_slice(), l.as_slice()))
        .collect();
    let (host_o, host_lse) = merge_states(d as usize, &parts).unwrap();
    let ctx = ctx();
    for dtype in [DType::F32, DType::F16] {
        let merge = MergeStates {
            parts: ranges.len() as u32,
            rows: rows as u32,
            heads,
            head_dim: d,
            dtype,
            with_lse: true,
        };
        let plan = ctx.plan_merge(&merge).unwrap();
        let o_buf = guarded_buffer(ctx, "o_parts", bytemuck::cast_slice(&o_parts.concat()));
        let l_buf = guarded_buffer(ctx, "lse_parts", bytemuck::cast_slice(&lse_parts.concat()));
        let out = guarded_buffer(
            ctx,
            "out",
            &to_dtype_bytes(&vec![f32::NAN; rows * d as usize], dtype),
        );
        let lse = guarded_buffer(ctx, "lse", bytemuck::cast_slice(&vec![f32::NAN; rows]));
        let at = |buffer| TensorBuffer {
            buffer,
            offset: LEAD,
        };
        let mut enc = ctx.device().create_command_encoder(&Default::default());
        plan.encode(
            &mut enc,
            &MergeBuffers {
                o_parts: at(&o_buf),
                lse_parts: at(&l_buf),
                out: at(&out),
                lse: Some(at(&lse)),
            },
        )
        .unwrap();
        ctx.queue().submit([enc.finish()]);
        let gpu_o = from_dtype_bytes(
            &read_guarded(ctx, &out, rows as u64 * d as u64 * dtype.size()),
            dtype,
        );
        let gpu_lse: Vec<f32> =
            bytemuck::pod_collect_to_vec(&read_guarded(ctx, &lse, rows as u64 * 4));
        let tol = if dtype == DType::F32 { 1e-5 } else { 2e-3 };
        for (i, w) in want.out.iter().enumerate() {
            assert!(
                (gpu_o[i] as f64 - w).abs() <= tol,
                "gpu merge {dtype:?}, d = {d}: O[{i}] = {}, want {w}",
                gpu_o[i]
            );
            assert!(
                (host_o[i] as f64 - w).abs() <= 1e-5,
                "host merge O[{i}] = {}, want {w}",
                host_o[i]
            );
        }
        for t in 0..4 {
            for h in 0..heads as usize {
                let w = want.lse[h * 4 + t];
                let r = t * heads as usize + h;
                assert!(
                    (gpu_lse[r] as f64 - w).abs() <= 1e-5 * w.abs().max(1.0),
                    "gpu merge {dtype:?}, d = {d}: LSE[{r}]"
                );
                assert!(
                    (host_lse[r] as f64 - w).abs() <= 1e-5 * w.abs().max(1.0),
                    "host merge LSE[{r}]"
                );
            }
        }
    }
}

#[test]
fn the_plan_splits_long_decodes_and_not_prefills() {
    let mut caps = wgpu_flash_attn::DeviceCaps::webgpu_defaults();
    caps.compute_units = 132;
    caps.max_storage_buffer_binding_size = 4 << 30;
    let decode = KvCacheAttention::decode(32, 8, 128, 1, &[131072; 8], 131072).dtype(DType::F16);
    let plan = kvcache::plan(&decode, &caps).unwrap();
    // No subgroups, so the portable kernel: one wave of 6 of its workgroups per compute unit,
    // 132 * 6 / (8 sequences * 8 KV heads) = 12.
    assert_eq!(plan.tiles.kernel, kvcache::DecodeKernel::Portable);
    assert_eq!(plan.splits, 12, "{plan:?}");
    assert_eq!(
        plan.tiles.block_m, 4,
        "the 4 query heads of a KV head share one workgroup"
    );
    assert_eq!(plan.work.len(), 8);
    // As on the H200: subgroups of 32, and a binding 4 bytes short of 2 GiB, so that KV 128k runs
    // as two dispatches of 4 sequences, each with its own wave of 8 subgroup-kernel workgroups
    // per compute unit: 132 * 8 / 32 = 33 splits; KV 32k in one: 16.
    let mut h200 = caps.clone();
    h200.subgroup_sizes = Some((32, 32));
    h200.max_storage_buffer_binding_size = (2 << 30) - 4;
    let plan = kvcache::plan(&decode, &h200).unwrap();
    assert_eq!((plan.windows.len(), plan.splits), (2, 33), "{plan:?}");
    // The subgroup kernel, with 8 keys of 16 bytes (f16) per lane and tile; 4 of 32 for f32.
    let t = plan.tiles;
    assert_eq!(t.kernel, kvcache::DecodeKernel::Subgroup);
    assert_eq!(
        (t.threads, t.threads_per_key, t.keys_per_thread),
        (64, 16, 8),
        "{t:?}"
    );
    let f32_tiles = kvcache::plan(&decode.clone().dtype(DType::F32), &h200)
        .unwrap()
        .tiles;
    assert_eq!(
        (f32_tiles.threads_per_key, f32_tiles.keys_per_thread),
        (16, 4),
        "{f32_tiles:?}"
    );
    let kv32k = KvCacheAttention::decode(32, 8, 128, 1, &[32768; 8], 32768).dtype(DType::F16);
    assert_eq!(kvcache::plan(&kv32k, &h200).unwrap().splits, 16);
    // Unknown compute units: 512 workgroups, 8 splits of 64 work items.
    h200.compute_units = 0;
    assert_eq!(kvcache::plan(&kv32k, &h200).unwrap().splits, 8);
    let short = KvCacheAttention::decode(32, 8, 128, 1, &[300; 8], 300);
    assert!(kvcache::plan(&short, &caps).unwrap().splits <= 2);
    let prefill = KvCacheAttention::new(32, 8, 128, &[0, 4096], &[0])
        .append_new_kv(true)
        .causal(true);
    let plan = kvcache::plan(&prefill, &caps).unwrap();
    assert_eq!(
        plan.splits,
        1,
        "{} work items fill the GPU",
        plan.work.len()
    );
    assert!(plan.workgroup_bytes <= 16384 && plan.tiles.threads <= 256);
}

#[test]
fn bad_steps_are_typed_errors() {
    let ok = KvCacheAttention::decode(8, 2, 64, 1, &[10, 20], 32);
    assert!(ok.validate().is_ok());
    let cases: Vec<(KvCacheAttention, &str)> = vec![
        (ok.clone().contiguous(15), "capacity"),
        (KvCacheAttention::new(8, 3, 64, &[0, 1], &[1]), "heads"),
        (KvCacheAttention::new(8, 2, 66, &[0, 1], &[1]), "head_dim"),
        (
            KvCacheAttention::new(8, 2, 64, &[0, 2, 1], &[1, 1]),
            "cu_seqlens_q",
        ),
        (KvCacheAttention::new(8, 2, 64, &[0, 1, 2], &[1]), "cached"),
        (KvCacheAttention::new(8, 2, 64, &[0, 0], &[1]), "no queries"),
        (ok.clone().num_splits(0), "num_splits"),
        (ok.clone().softmax_scale(f32::NAN), "scale"),
        (ok.clone().paged(16, 4, &[0, 1, 2]), "table shape"),
        (ok.clone().paged(16, 4, &[0, 1, 2, 4]), "page index"),
        (ok.clone().paged(8, 4, &[0, 1, 2, 3]), "paged capacity"),
        (
            ok.clone()
                .rotary(Some(RotaryEmbedding::half_split(64, 1e4))),
            "rotary without append",
        ),
        (
            ok.clone()
                .append_new_kv(true)
                .rotary(Some(RotaryEmbedding::half_split(12, 1e4))),
            "rotary dim",
        ),
        (
            ok.clone()
                .append_new_kv(true)
                .rotary(Some(RotaryEmbedding::half_split(64, -1.0))),
            "theta",
        ),
        (
            ok.clone().append_new_kv(true).rotary(Some(RotaryEmbedding {
                dim: 64,
                style: RotaryStyle::HalfSplit,
                angles: RotaryAngles::Table { positions: 8 },
            })),
            "table positions",
        ),
    ];
    for (p, what) in cases {
        let err = p.validate().expect_err(what);
        eprintln!("{what}: {err}");
        assert!(ctx().plan_kv_cache(&p).is_err(), "{what}");
    }
    // Buffers that do not fit, and a missing LSE buffer.
    let ctx = ctx();
    let p = ok.clone().with_lse(true);
    let plan = ctx.plan_kv_cache(&p).unwrap();
    let small = ctx.device().create_buffer(&wgpu::BufferDescriptor {
        label: None,
        size: 64,
        usage: wgpu::BufferUsages::STORAGE,
        mapped_at_creation: false,
    });
    let big = |n: u64| {
        ctx.device().create_buffer(&wgpu::BufferDescriptor {
            label: None,
            size: n * 4,
            usage: wgpu::BufferUsages::STORAGE,
            mapped_at_creation: false,
        })
    };
    let (q, kc, vc, o) = (
        big(p.q_len()),
        big(p.cache_len()),
        big(p.cache_len()),
        big(p.q_len()),
    );
    let mut enc = ctx.device().create_command_encoder(&Default::default());
    let e = plan
        .encode(&mut enc, &KvCacheBuffers::new(&q, &kc, &vc, &o))
        .unwrap_err();
    assert!(
        matches!(e, FlashError::BadOption { what: "lse", .. }),
        "{e}"
    );
    let e = plan
        .encode(
            &mut enc,
            &KvCacheBuffers::new(&q, &small, &vc, &o).lse(&big(16)),
        )
        .unwrap_err();
    assert!(
        matches!(
            e,
            FlashError::BufferTooSmall {
                tensor: "k_cache",
                ..
            }
        ),
        "{e}"
    );
    let e = plan
        .encode(
            &mut enc,
            &KvCacheBuffers::new(&q, &kc, &vc, &q).lse(&big(16)),
        )
        .unwrap_err();
    assert!(
        matches!(e, FlashError::BadLayout { tensor: "out", .. }),
        "{e}"
    );
}

#[test]
fn caches_larger_than_one_binding_run_by_windows() {
    // A device whose storage bindings hold 64 KiB: each sequence's cache (contiguous: 48 KiB;
    // paged: pages shuffled within the sequence's own region) gets its own window, and the step
    // runs as one dispatch per window, appending and attending as usual.
    let small = pollster::block_on(async {
        let instance =
            wgpu::Instance::new(wgpu::InstanceDescriptor::new_without_display_handle_from_env());
        let adapter = wgpu::util::initialize_adapter_from_env_or_default(&instance, None)
            .await
            .expect("an adapter");
        let limits = wgpu::Limits {
            max_storage_buffer_binding_size: 64 << 10,
            ..adapter.limits()
        };
        let (device, queue) = adapter
            .request_device(&wgpu::DeviceDescriptor {
                // Everything the library wants except wgpu's experimental features, which a
                // device must opt in to separately (and this test does not need).
                required_features: adapter.features()
                    & wgpu_flash_attn::context::WANTED_FEATURES
                    & !wgpu::Features::EXPERIMENTAL_COOPERATIVE_MATRIX,
                required_limits: limits,
                ..Default::default()
            })
            .await
            .expect("a device");
        FlashContext::new(device, queue, &adapter).unwrap()
    });
    let cached = [150u32, 0, 120];
    let contiguous = KvCacheAttention::decode(8, 2, 32, 2, &cached, 192)
        .num_splits(2)
        .append_new_kv(true)
        .rotary(Some(RotaryEmbedding::half_split(32, 10000.0)))
        .with_lse(true);
    let plan = kvcache::plan(&contiguous, small.caps()).unwrap();
    assert_eq!(plan.windows.len(), 3, "{:?}", plan.windows);
    // Several dispatches: their splits meet in a combine pass after them all.
    assert!(!plan.merge_in_kernel);
    check_on(&small, &contiguous, 800, None);
    // Pages of 16 tokens; sequence b owns pages 12b .. 12b + 12, in shuffled order.
    let table: Vec<u32> = (0..3u32)
        .flat_map(|b| {
            let (_, t) = shuffled_table(1, 12, 0, 40 + b as u64);
            t.into_iter().map(move |p| p + 12 * b)
        })
        .collect();
    let paged = contiguous.clone().paged(16, 36, &table);
    let plan = kvcache::plan(&paged, small.caps()).unwrap();
    assert!(plan.windows.len() >= 2, "{:?}", plan.windows);
    check_on(&small, &paged, 800, None);
    // Pages scattered over the whole pool cannot be windowed: a typed error.
    let (num_pages, scattered) = shuffled_table(3, 12, 0, 5);
    let err = kvcache::plan(
        &contiguous.clone().paged(16, num_pages, &scattered),
        small.caps(),
    );
    assert!(
        matches!(err, Err(FlashError::DeviceLimit { .. })),
        "{err:?}"
    );
}

#[test]
fn the_split_tuner_measures_around_the_plan_and_its_choice_is_correct() {
    use wgpu_flash_attn::autotune::{
        self, kv_split_candidates, TuneCache, TuneOptions, CACHE_FILE,
    };
    assert_eq!(kv_split_candidates(12), vec![1, 3, 6, 12, 24, 48]);
    assert_eq!(kv_split_candidates(1), vec![1, 2, 4]);
    assert_eq!(kv_split_candidates(200), vec![1, 50, 100, 200, 256]);
    let dir = std::env::temp_dir().join(format!(
        "wgpu-flash-attn-test-{}-kv-tune",
        std::process::id()
    ));
    let _ = std::fs::remove_dir_all(&dir);
    let options = TuneOptions {
        runs: 2,
        warmup: 0,
        cache_dir: Some(dir.clone()),
        ..Default::default()
    };
    // Four sequences decoding one token each over 600-900 cached tokens, appended and rotated.
    let step = KvCacheAttention::new(8, 2, 32, &[0, 1, 2, 3, 4], &[600, 700, 800, 900])
        .causal(true)
        .append_new_kv(true)
        .rotary(Some(RotaryEmbedding::half_split(32, 10000.0)));
    let tuned = autotune::tune_kv_cache_blocking(ctx(), &step, &options).unwrap();
    eprintln!("{tuned:?}");
    assert!(!tuned.from_cache);
    let own = kvcache::plan(&step, ctx().caps()).unwrap();
    // Every candidate is a (tiles, splits) pair the plan accepts; the plan's own choice is among
    // them, so tuning cannot pick worse than it measured; the winner is the fastest trial.
    assert!(
        tuned
            .trials
            .iter()
            .any(|t| (t.tiles, t.splits) == (own.tiles, own.splits)),
        "{:?} not in {:?}",
        (own.tiles, own.splits),
        tuned.trials
    );
    assert!(tuned.trials.len() >= kv_split_candidates(own.splits).len());
    let trial_ms: Vec<f64> = tuned.trials.iter().map(|t| t.ms).collect();
    common::assert_winner_is_fastest(tuned.ms, &trial_ms);
    // The winner runs the step correctly.
    let chosen = step.clone().num_splits(tuned.splits);
    check_on(ctx(), &chosen, 1400, Some(tuned.tiles));
    // Measured once: a cache hit the second time, and the file holds it.
    let again = autotune::tune_kv_cache_blocking(ctx(), &step, &options).unwrap();
    assert!(again.from_cache && again.trials.is_empty());
    assert_eq!((again.tiles, again.splits), (tuned.tiles, tuned.splits));
    let cache = TuneCache::load(&dir.join(CACHE_FILE)).unwrap();
    assert_eq!(cache.kv_entries.len(), 1);
    assert!(cache.entries.is_empty());
    // Paged, with an LSE output and rotary tables: the tuner binds every optional buffer, and a
    // step of another class gets an entry of its own.
    let (num_pages, table) = shuffled_table(4, 60, 16, 33);
    let other = step
        .clone()
        .paged(16, num_pages, &table)
        .with_lse(true)
        .rotary(Some(RotaryEmbedding {
            dim: 32,
            style: RotaryStyle::Interleaved,
            angles: RotaryAngles::Table { positions: 901 },
        }));
    let tuned_other = autotune::tune_kv_cache_blocking(ctx(), &other, &options).unwrap();
    assert!(!tuned_other.from_cache && !tuned_other.trials.is_empty());
    let cache = TuneCache::load(&dir.join(CACHE_FILE)).unwrap();
    assert_eq!(cache.kv_entries.len(), 2);
    std::fs::remove_dir_all(&dir).unwrap();
}
