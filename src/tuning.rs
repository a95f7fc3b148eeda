//! Tile candidates for the portable forward kernel, in order of preference.
//!
//! The plan walks this table and takes the first entry that fits the device (workgroup storage,
//! invocations) and suits the head dimension. Larger tiles reuse each K/V tile for more query rows
//! and give each thread more independent multiply-adds; smaller tiles fit WebGPU's default limits.

use crate::plan::Tiles;

/// (block_m, block_n, threads_x, threads_y), largest first.
const FORWARD_CANDIDATES: &[(u32, u32, u32, u32)] = &[
    (64, 64, 16, 16),
    (64, 32, 16, 16),
    (32, 64, 16, 16),
    (32, 32, 16, 16),
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
