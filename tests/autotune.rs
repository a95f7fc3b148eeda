//! The autotuner: its cache round-trips, a corrupt cache file is ignored (and replaced), and the
//! plan it picks passes the f64 oracle.
// Native only: these tests block on the GPU (the browser's are in tests/web.rs).
#![cfg(not(target_arch = "wasm32"))]

mod common;

use std::path::PathBuf;

use common::{check_one, ctx};
use wgpu_flash_attn::autotune::{
    self, DeviceKey, KvTuneKey, TuneCache, TuneEntry, TuneKey, TuneOptions, CACHE_FILE,
};
use wgpu_flash_attn::{Attention, DType, FlashError, KvCacheAttention, PrefillRoute};

/// A fresh directory under the system's temporary directory.
fn scratch_dir(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!(
        "wgpu-flash-attn-test-{}-{name}",
        std::process::id()
    ));
    let _ = std::fs::remove_dir_all(&dir);
    dir
}

fn entry(seq_bucket: u32, tiles: [u32; 4]) -> TuneEntry {
    TuneEntry {
        key: TuneKey {
            device: DeviceKey {
                adapter: "NVIDIA H200".into(),
                backend: "Vulkan".into(),
                driver: "NVIDIA 580.159.04".into(),
                vendor: 0x10de,
            },
            kernel: "auto".into(),
            storage: "f16".into(),
            f16_products: false,
            head_dim: 128,
            causal: true,
            seq_bucket,
            paged: false,
        },
        kernel: "subgroup".into(),
        tiles,
        ms: 1.25,
        timing: "gpu-timestamps".into(),
    }
}

#[test]
fn cache_round_trips_through_json_and_disk() {
    let mut cache = TuneCache::new();
    cache.insert(entry(8192, [32, 32, 16, 16]));
    cache.insert(entry(4096, [48, 16, 16, 16]));
    // Same key again: replaced, not duplicated.
    cache.insert(entry(8192, [64, 32, 16, 16]));
    assert_eq!(cache.entries.len(), 2);
    assert_eq!(
        cache.get(&entry(8192, [0; 4]).key).unwrap().tiles,
        [64, 32, 16, 16]
    );
    assert_eq!(TuneCache::from_json(&cache.to_json()).unwrap(), cache);
    // A paged twin keeps a winner of its own.
    let mut paged = entry(8192, [32, 32, 8, 16]);
    paged.key.paged = true;
    cache.insert(paged);
    assert_eq!(cache.entries.len(), 3);
    cache.entries.pop();

    let dir = scratch_dir("round-trip");
    let path = dir.join(CACHE_FILE);
    assert_eq!(
        TuneCache::load(&path).unwrap(),
        TuneCache::new(),
        "no file: empty"
    );
    cache.save(&path).unwrap();
    assert_eq!(TuneCache::load(&path).unwrap(), cache);
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn cached_keys_keep_the_device_fields_at_the_top_level() {
    // tiles.json of version 2 has "adapter", "backend", "driver" and "vendor" as fields of each
    // key; DeviceKey is flattened into both tuners' keys, so the file keeps that shape.
    let mut cache = TuneCache::new();
    cache.insert(entry(8192, [32, 32, 16, 16]));
    let text = cache.to_json();
    let json: serde_json::Value = serde_json::from_str(&text).unwrap();
    let key = &json["entries"][0]["key"];
    assert_eq!(key["adapter"], "NVIDIA H200", "{text}");
    assert_eq!(key["vendor"], 0x10de, "{text}");
    assert!(key.get("device").is_none(), "{text}");
    let caps = ctx().caps();
    let step = KvCacheAttention::decode(8, 2, 64, 1, &[100, 200], 256);
    let kv_key = serde_json::to_value(KvTuneKey::new(caps, &step)).unwrap();
    assert_eq!(kv_key["adapter"], caps.name.as_str(), "{kv_key}");
    assert_eq!(kv_key["driver"], caps.driver.as_str(), "{kv_key}");
    assert!(kv_key.get("device").is_none(), "{kv_key}");
}

#[test]
fn kv_cache_keys_tell_routes_and_f16_products_apart() {
    // Both decide which sequences the KV-cache kernel runs, so winners must not be shared.
    let caps = ctx().caps();
    let step = KvCacheAttention::new(8, 2, 64, &[0, 1, 129], &[100, 200]);
    let key = |s: &KvCacheAttention| KvTuneKey::new(caps, s);
    let auto = key(&step);
    assert_eq!(auto.prefill_route, "auto");
    // The names the keys record are the ones the tools parse.
    for route in [
        PrefillRoute::Auto,
        PrefillRoute::Forward,
        PrefillRoute::KvCache,
    ] {
        assert_eq!(route.name().parse::<PrefillRoute>(), Ok(route));
    }
    assert!("kvcache".parse::<PrefillRoute>().is_err());
    assert!(!auto.f16_products);
    assert_ne!(
        auto,
        key(&step.clone().prefill_route(PrefillRoute::Forward))
    );
    assert_ne!(
        auto,
        key(&step.clone().prefill_route(PrefillRoute::KvCache))
    );
    assert_ne!(auto, key(&step.clone().allow_f16_products(true)));
    assert_ne!(
        key(&step.clone().dtype(DType::BF16)),
        key(&step.clone().dtype(DType::BF16).allow_f16_products(true))
    );
    // f16 multiplies f16 either way: one class.
    let f16 = step.clone().dtype(DType::F16);
    assert_eq!(key(&f16), key(&f16.clone().allow_f16_products(true)));
}

#[test]
fn corrupt_or_foreign_cache_text_is_an_error_to_the_parser() {
    for text in [
        "",
        "{ not json",
        "[1, 2, 3]",
        r#"{"format": "something else", "version": 1, "entries": []}"#,
        r#"{"format": "wgpu-flash-attn tuning cache", "version": 99, "entries": []}"#,
        // Version 1 (before paged problems could take the tensor cores): measured again.
        r#"{"format": "wgpu-flash-attn tuning cache", "version": 1, "entries": []}"#,
    ] {
        assert!(
            matches!(TuneCache::from_json(text), Err(FlashError::Cache(_))),
            "{text:?} parsed"
        );
    }
}

#[test]
fn the_tuner_picks_a_plan_that_passes_the_oracle_and_caches_it() {
    let dir = scratch_dir("tune");
    std::fs::create_dir_all(&dir).unwrap();
    // A corrupt cache file: the tuner ignores it, says so, and replaces it.
    std::fs::write(dir.join(CACHE_FILE), "{ this is not a cache").unwrap();
    let options = TuneOptions {
        runs: 2,
        warmup: 0,
        max_candidates: 3,
        cache_dir: Some(dir.clone()),
        ..Default::default()
    };
    for (p, seed) in [
        (
            Attention::new(1, 2, 1, 70, 91, 40)
                .causal(true)
                .with_lse(true),
            61,
        ),
        (Attention::new(2, 2, 2, 50, 50, 32).dtype(DType::F16), 62),
    ] {
        let tuned = autotune::tune_blocking(ctx(), &p, &options).unwrap();
        eprintln!("{tuned:?}");
        assert!(!tuned.from_cache);
        assert!(tuned.trials.len() >= 2, "{:?}", tuned.trials);
        let trial_ms: Vec<f64> = tuned.trials.iter().map(|t| t.ms).collect();
        common::assert_winner_is_fastest(tuned.ms, &trial_ms);
        // The plan's own choice is among the trials, so tuning cannot do worse than it measured.
        let default = ctx().plan(&p).unwrap();
        let own = (default.plan().kernel, default.plan().tiles);
        assert!(
            tuned.trials.iter().any(|t| (t.kernel, t.tiles) == own),
            "{own:?} not in {:?}",
            tuned.trials
        );
        assert_eq!(tuned.options.kernel, Some(tuned.kernel));
        assert_eq!(tuned.options.tiles, Some(tuned.tiles));
        let planned = ctx().plan_with(&p, tuned.options).unwrap();
        assert_eq!(planned.plan().kernel, tuned.kernel);
        check_one(&p, tuned.options, seed, 1.0);

        // Measured once: the second call is a cache hit with the same choice.
        let again = autotune::tune_blocking(ctx(), &p, &options).unwrap();
        assert!(again.from_cache);
        assert!(again.cache_note.is_none(), "{:?}", again.cache_note);
        assert_eq!((again.kernel, again.tiles), (tuned.kernel, tuned.tiles));
    }
    // The corrupt file was replaced by a valid cache holding both winners, for this adapter.
    let cache = TuneCache::load(&dir.join(CACHE_FILE)).unwrap();
    assert_eq!(cache.entries.len(), 2);
    assert!(cache
        .entries
        .iter()
        .all(|e| e.key.device.adapter == ctx().caps().name));
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn a_corrupt_cache_is_reported_in_the_result() {
    let dir = scratch_dir("corrupt");
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(dir.join(CACHE_FILE), [0xff, 0xfe, 0x00]).unwrap();
    let p = Attention::new(1, 1, 1, 20, 20, 8);
    let tuned = autotune::tune_blocking(
        ctx(),
        &p,
        &TuneOptions {
            runs: 1,
            warmup: 0,
            max_candidates: 1,
            cache_dir: Some(dir.clone()),
            ..Default::default()
        },
    )
    .unwrap();
    let note = tuned.cache_note.expect("the corrupt file is reported");
    assert!(note.contains("ignored"), "{note}");
    assert!(!tuned.from_cache);
    assert_eq!(
        TuneCache::load(&dir.join(CACHE_FILE))
            .unwrap()
            .entries
            .len(),
        1
    );
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn keys_bucket_sequence_lengths_and_separate_classes() {
    let caps = ctx().caps();
    let key = |p: &Attention| TuneKey::new(caps, p, &[]);
    let a = key(&Attention::new(1, 1, 1, 3000, 3000, 64));
    assert_eq!(a.seq_bucket, 4096);
    assert_eq!(a, key(&Attention::new(4, 2, 2, 4096, 2049, 64)));
    assert_ne!(a, key(&Attention::new(1, 1, 1, 4097, 4097, 64)));
    assert_ne!(
        a,
        key(&Attention::new(1, 1, 1, 3000, 3000, 64).causal(true))
    );
    assert_ne!(a, key(&Attention::new(1, 1, 1, 3000, 3000, 128)));
    assert_ne!(
        a,
        key(&Attention::new(1, 1, 1, 3000, 3000, 64).dtype(DType::F16))
    );
    // f32 that allows f16 products may win on another tier: a class of its own. f16 problems
    // multiply f16 either way.
    assert_ne!(
        a,
        key(&Attention::new(1, 1, 1, 3000, 3000, 64).allow_f16_products(true))
    );
    let f16 = Attention::new(1, 1, 1, 3000, 3000, 64).dtype(DType::F16);
    assert_eq!(key(&f16), key(&f16.clone().allow_f16_products(true)));
    assert_eq!(a.device.adapter, caps.name);
    assert_eq!(a.device.driver, caps.driver);
}
