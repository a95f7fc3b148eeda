//! Tile candidates for the portable forward kernel, in order of preference.
//!
//! The plan walks this table and takes the first entry that fits the device (workgroup storage,
//! invocations) and suits the head dimension. Larger tiles reuse each K/V tile for more query rows
//! and give each thread more independent multiply-adds; smaller tiles fit WebGPU's default limits.

use crate::plan::Tiles;

/// (block_m, block_n, threads_x, threads_y), largest first.
///
/// Measured on the H200 (f32, N=8k, BENCHMARKS.md): 32x32x16x16 is the fastest that fits 48 KiB at
/// d=64 (12.4 TFLOP/s, against 11.9 for 64x32x16x16) and at d=128 (10.3, against 10.1 for 48x16x16x16
/// and 8.3 or less for the rest).
const FORWARD_CANDIDATES: &[(u32, u32, u32, u32)] = &[
    (32, 32, 16, 16),
    (64, 32, 16, 16),
    (48, 16, 16, 16),
    (32, 32, 8, 16),
    (16, 32, 16, 8),
    (16, 16, 16, 8),
    (16, 16, 8, 8),
    (16, 8, 8, 8),
    (8, 8, 8, 8),
    (8, 8, 4, 8),
    (8, 4, 4, 8),
    (4, 4, 4, 4),
];

/// The candidate tiles for the portable forward kernel, best first.
pub fn forward_candidates() -> impl Iterator<Item = Tiles> {
    FORWARD_CANDIDATES
        .iter()
        .map(|&(block_m, block_n, threads_x, threads_y)| Tiles {
            block_m,
            block_n,
            threads_x,
            threads_y,
        })
}

/// (block_n, subgroups) for the cooperative-matrix forward kernel, best first. Each subgroup owns
/// 16 query rows; K and V tiles of block_n keys are shared by all of them.
const COOP_CANDIDATES: &[(u32, u32)] = &[(32, 8), (32, 4), (64, 4), (16, 4), (16, 2), (16, 1)];

/// The candidate (block_n, subgroups) pairs for the cooperative-matrix forward kernel, best first.
pub fn coop_candidates() -> impl Iterator<Item = (u32, u32)> {
    COOP_CANDIDATES.iter().copied()
}
