#![doc = include_str!("../README.md")]
#![warn(missing_docs)]

pub mod autotune;
pub mod context;
pub mod error;
pub mod kernels;
pub mod kvcache;
pub mod plan;
pub mod problem;
pub mod reference;
pub mod timing;
pub mod tuning;

pub use context::{
    AttentionBuffers, AttentionOutput, FlashContext, FlashPlan, HostInputs, TensorBuffer,
};
pub use error::{FlashError, Result};
pub use kernels::decode::{KvCacheBuffers, KvCachePlanned, MergeBuffers, MergePlan, MergeStates};
pub use kvcache::{
    merge_states, CacheLayout, DecodeKernel, KvCacheAttention, KvCachePlan, PrefillRoute,
    RotaryAngles, RotaryEmbedding, RotaryStyle,
};
pub use plan::{DeviceCaps, Kernel, Plan, PlanOptions, Storage, Tiles};
pub use problem::{AlibiSlopes, Attention, AttnMask, DType, MaskKind, PagedKv, Strides, Tensor};
