//! The one error type of the crate.

use thiserror::Error;

/// Everything that can go wrong between describing a problem and reading its result back.
///
/// Each variant carries the numbers involved, so a message says what was given and what was allowed.
#[derive(Debug, Error, Clone, PartialEq)]
#[non_exhaustive]
pub enum FlashError {
    /// A size that must be at least 1 was 0.
    #[error("{what} must be at least 1, got 0")]
    ZeroSize {
        /// Which size.
        what: &'static str,
    },
    /// The head dimension is not one the kernels support.
    #[error("head_dim {got} is not supported: it must be a multiple of 4 between 4 and {max}")]
    UnsupportedHeadDim {
        /// The head dimension asked for.
        got: u32,
        /// The largest supported head dimension.
        max: u32,
    },
    /// heads_q is not a multiple of heads_kv (grouped-query attention needs whole groups).
    #[error("heads_q ({heads_q}) must be a multiple of heads_kv ({heads_kv})")]
    HeadsNotDivisible {
        /// Query heads.
        heads_q: u32,
        /// Key/value heads.
        heads_kv: u32,
    },
    /// A host slice or a tensor description does not hold the number of elements the problem needs.
    #[error("{tensor}: expected {expected} elements, got {got}")]
    ShapeMismatch {
        /// Which tensor ("q", "k", "v", ...).
        tensor: &'static str,
        /// Elements the problem describes.
        expected: u64,
        /// Elements given.
        got: u64,
    },
    /// A GPU buffer is smaller than the tensor laid out in it.
    #[error("{tensor}: buffer of {got} bytes is too small, the tensor needs {needed} bytes (offset included)")]
    BufferTooSmall {
        /// Which tensor.
        tensor: &'static str,
        /// Bytes the layout reaches.
        needed: u64,
        /// Bytes the buffer has.
        got: u64,
    },
    /// A stride or offset that the kernels cannot address.
    #[error("{tensor}: {what} = {got} is not allowed: {why}")]
    BadLayout {
        /// Which tensor.
        tensor: &'static str,
        /// Which stride or offset.
        what: &'static str,
        /// The value given.
        got: u64,
        /// The rule it breaks.
        why: &'static str,
    },
    /// An option value that is out of range (a NaN scale, say).
    #[error("{what} = {got} is invalid: {why}")]
    BadOption {
        /// Which option.
        what: &'static str,
        /// The value, printed.
        got: String,
        /// The rule it breaks.
        why: &'static str,
    },
    /// The problem needs more than this device allows.
    #[error("{what}: the problem needs {needed}, the device allows {limit}")]
    DeviceLimit {
        /// Which limit (e.g. "max_storage_buffer_binding_size").
        what: &'static str,
        /// What the problem needs.
        needed: u64,
        /// The device's value.
        limit: u64,
    },
    /// The problem needs a device feature that is not enabled.
    #[error("{what} needs the device feature {feature}, which this device does not have enabled")]
    MissingFeature {
        /// What asked for it.
        what: &'static str,
        /// The wgpu feature name.
        feature: &'static str,
    },
    /// Something the context found unusable when it was created; `why` says what it found (as
    /// [`FlashContext::coop_elements_status`](crate::FlashContext::coop_elements_status) does for
    /// scores in registers: missing features, the probe's mismatches, or no SPIR-V in a browser).
    #[error("{what} is not available on this device: {why}")]
    Unavailable {
        /// What asked for it.
        what: &'static str,
        /// What the context found.
        why: String,
    },
    /// No adapter, or the adapter refused a device.
    #[error("no usable GPU: {0}")]
    NoDevice(String),
    /// wgpu reported a validation or out-of-memory error while encoding or running.
    #[error("wgpu reported an error: {0}")]
    Wgpu(String),
    /// Reading a result back from the GPU failed.
    #[error("reading back from the GPU failed: {0}")]
    Readback(String),
    /// The autotuner's cache could not be read, parsed or written.
    #[error("tuning cache: {0}")]
    Cache(String),
}

/// Short for `Result<T, FlashError>`.
pub type Result<T> = std::result::Result<T, FlashError>;
