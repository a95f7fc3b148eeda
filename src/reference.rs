//! The oracle: naive attention in f64 on the CPU, with the same options as the GPU kernels.
//!
//! It materializes every score row, takes its maximum, exponentiates and normalizes: the textbook
//! softmax, deliberately not the online algorithm the kernels use.

use crate::context::HostInputs;
use crate::problem::{AlibiSlopes, Attention, MaskKind, Strides, Tensor};

/// O and the natural-log LSE of a problem, in f64.
#[derive(Debug, Clone, PartialEq)]
pub struct Reference {
    /// O, laid out contiguously as (batch, seq_q, heads_q, head_dim) ((total_q, heads_q, head_dim)
    /// for a variable-length batch).
    pub out: Vec<f64>,
    /// LSE, laid out (batch, heads_q, seq_q) ((heads_q, total_q) for a variable-length batch);
    /// -inf for a row that sees no key (the sink, with sinks).
    pub lse: Vec<f64>,
}

/// Whether query `i` may see key `j`: the causal mask and the sliding window, by their definitions
/// (off = seq_kv - seq_q; causal: j <= i + off; window (left, right): i + off - left <= j <= i + off + right).
pub fn visible(p: &Attention, i: u32, j: u32) -> bool {
    let diag = i as i64 + p.seq_kv as i64 - p.seq_q as i64;
    let j = j as i64;
    let (left, right) = p.window_size;
    (!p.causal || j <= diag)
        && (left < 0 || j >= diag - left as i64)
        && (right < 0 || j <= diag + right as i64)
}

/// Naive attention over host tensors laid out by the problem's strides (element 0 at index 0),
/// for problems without ALiBi or sinks.
pub fn attention(p: &Attention, q: &[f32], k: &[f32], v: &[f32]) -> Reference {
    attention_with(p, q, k, v, |x| x as f64)
}

/// [`attention`] with a rounding applied to each input element (e.g. to f16) before any product.
pub fn attention_with(
    p: &Attention,
    q: &[f32],
    k: &[f32],
    v: &[f32],
    read: impl Fn(f32) -> f64,
) -> Reference {
    attention_full(
        p,
        HostInputs {
            q,
            k,
            v,
            ..Default::default()
        },
        read,
    )
}

/// Naive attention with every option: each visible score is scale * q.k, soft-capped
/// (c * tanh(s / c)), minus slope * |i + off - j| under ALiBi, plus the bias (or -inf where a
/// boolean mask is 0) under a mask; the row's softmax denominator also
/// holds exp(sink) under sinks. A row with no visible key gives O = 0 and LSE = the sink, or -inf.
///
/// # Panics
/// When a slice is shorter than the problem describes, or an input the problem uses (slopes,
/// sinks, mask) is missing: this is a test oracle, and a missing input must not go unnoticed.
pub fn attention_full(p: &Attention, inputs: HostInputs, read: impl Fn(f32) -> f64) -> Reference {
    assert!(
        p.alibi.is_none() || inputs.alibi_slopes.is_some(),
        "the problem uses ALiBi: give its slopes"
    );
    assert!(
        !p.sinks || inputs.sinks.is_some(),
        "the problem uses sinks: give them"
    );
    assert!(
        p.mask.is_none() || inputs.mask.is_some(),
        "the problem has a mask: give it"
    );
    if p.paged_kv.is_some() {
        let (dense, k, v) = unpaged(p, inputs.k, inputs.v);
        let inputs = HostInputs {
            k: &k,
            v: &v,
            ..inputs
        };
        return attention_full(&dense, inputs, read);
    }
    if let Some((cq, ck)) = &p.cu_seqlens {
        return varlen(p, cq, ck, inputs, &read);
    }
    let HostInputs {
        q,
        k,
        v,
        alibi_slopes,
        sinks,
        mask,
    } = inputs;
    let d = p.head_dim as usize;
    let group = p.heads_q / p.heads_kv;
    let scale = p.scale() as f64;
    let at = |t: Tensor, b: u32, s: u32, h: u32| {
        p.strides_of(t).offset(b as u64, s as u64, h as u64) as usize
    };
    // Each element read (and rounded) once, not once per score or output it enters.
    let [q, k, v] = [q, k, v].map(|x| x.iter().map(|&e| read(e)).collect::<Vec<f64>>());
    let (heads, seq_q) = (p.heads_q as usize, p.seq_q as usize);
    // Rows in O's order (b, i, h): each one's O (head_dim values) and LSE; None when it sees no
    // key and no sink.
    let rows = par_map(p.batch as usize * seq_q * heads, |r| {
        let (b, i, h) = o_row(p, r);
        let hk = h / group;
        let slope = match p.alibi {
            None => 0.0,
            Some(AlibiSlopes::PerHead) => alibi_slopes.map_or(0.0, |s| s[h as usize] as f64),
            Some(AlibiSlopes::PerBatchHead) => {
                alibi_slopes.map_or(0.0, |s| s[(b * p.heads_q + h) as usize] as f64)
            }
        };
        let sink = if p.sinks {
            sinks.map(|s| s[h as usize] as f64)
        } else {
            None
        };
        let qi = at(Tensor::Q, b, i, h);
        let scores: Vec<f64> = (0..p.seq_kv)
            .map(|j| {
                if !visible(p, i, j) {
                    return f64::NEG_INFINITY;
                }
                let kj = at(Tensor::K, b, j, hk);
                let mut s = scale * (0..d).map(|c| q[qi + c] * k[kj + c]).sum::<f64>();
                if p.softcap > 0.0 {
                    let cap = p.softcap as f64;
                    s = cap * (s / cap).tanh();
                }
                let distance = (i as f64 + p.seq_kv as f64 - p.seq_q as f64 - j as f64).abs();
                // The mask element of (b, h, i, j): planes broadcast over batch or heads.
                let m = match (p.mask, mask) {
                    (Some(spec), Some(values)) => {
                        let plane = if spec.per_batch {
                            b as usize * if spec.per_head { heads } else { 1 }
                        } else {
                            0
                        } + if spec.per_head { h as usize } else { 0 };
                        let e =
                            values[(plane * seq_q + i as usize) * p.seq_kv as usize + j as usize];
                        match spec.kind {
                            MaskKind::Additive => e as f64,
                            MaskKind::Boolean if e != 0.0 => 0.0,
                            MaskKind::Boolean => f64::NEG_INFINITY,
                        }
                    }
                    _ => 0.0,
                };
                s - slope * distance + m
            })
            .collect();
        let max = scores
            .iter()
            .cloned()
            .chain(sink)
            .fold(f64::NEG_INFINITY, f64::max);
        if max == f64::NEG_INFINITY {
            return None; // no visible key and no sink: O stays 0, LSE -inf
        }
        let sum: f64 = scores
            .iter()
            .chain(sink.as_ref())
            .map(|s| (s - max).exp())
            .sum();
        let mut o = vec![0.0; d];
        for (j, score) in scores.iter().enumerate() {
            let w = (score - max).exp() / sum;
            if w == 0.0 {
                continue;
            }
            let vj = at(Tensor::V, b, j as u32, hk);
            for c in 0..d {
                o[c] += w * v[vj + c];
            }
        }
        Some((o, max + sum.ln()))
    });
    let mut lse = vec![f64::NEG_INFINITY; p.lse_len() as usize];
    for (r, row) in rows.iter().enumerate() {
        if let Some((_, row_lse)) = row {
            let (b, i, h) = o_row(p, r);
            lse[((b * p.heads_q + h) * p.seq_q + i) as usize] = *row_lse;
        }
    }
    let out = rows
        .into_iter()
        .flat_map(|row| row.map_or_else(|| vec![0.0; d], |(o, _)| o))
        .collect();
    Reference { out, lse }
}

/// (batch, query token, head) of row `r` of O, whose rows are laid out (b, i, h): the order in
/// which [`attention_full`] hands rows to [`par_map`], so that O is their concatenation.
pub fn o_row(p: &Attention, r: usize) -> (u32, u32, u32) {
    let (heads, seq_q) = (p.heads_q as usize, p.seq_q as usize);
    (
        (r / (seq_q * heads)) as u32,
        (r / heads % seq_q) as u32,
        (r % heads) as u32,
    )
}

/// `[f(0), f(1), ..., f(n - 1)]`, with `f` called once per index on any of the machine's threads
/// (on the calling thread alone where there are none, as in a browser, or where `n` is small),
/// so `f` must not depend on the order of its calls. Indices go to the threads in small chunks,
/// taken in turn, so that rows of different lengths (causal) spread evenly. A panic in `f`
/// reaches the caller as it was raised.
pub fn par_map<T: Send>(n: usize, f: impl Fn(usize) -> T + Sync) -> Vec<T> {
    #[cfg(not(target_arch = "wasm32"))]
    {
        let threads = std::thread::available_parallelism().map_or(1, |t| t.get());
        // A few chunks per thread, of at least 16 indices: fewer than two chunks, no threads.
        let chunk = n.div_ceil(8 * threads).max(16);
        let chunks = n.div_ceil(chunk);
        if threads > 1 && chunks > 1 {
            let f = &f;
            let threads = threads.min(chunks);
            return std::thread::scope(|scope| {
                let workers: Vec<_> = (0..threads)
                    .map(|t| {
                        scope.spawn(move || {
                            (t..chunks)
                                .step_by(threads)
                                .map(|c| (c * chunk..(c * chunk + chunk).min(n)).map(f).collect())
                                .collect::<Vec<Vec<T>>>()
                        })
                    })
                    .collect();
                let mut by_thread: Vec<_> = workers
                    .into_iter()
                    .map(|w| w.join().unwrap_or_else(|e| std::panic::resume_unwind(e)))
                    .map(Vec::into_iter)
                    .collect();
                // Chunk c is thread (c % threads)'s (c / threads)-th.
                (0..chunks)
                    .flat_map(|c| {
                        by_thread[c % threads]
                            .next()
                            .expect("every chunk is computed")
                    })
                    .collect()
            });
        }
    }
    (0..n).map(f).collect()
}

/// A variable-length batch, sequence by sequence: each is a problem of its own over its slice of
/// the packed tensors. O comes out as (total_q, heads_q, head_dim), LSE as (heads_q, total_q).
fn varlen(
    p: &Attention,
    cq: &[u32],
    ck: &[u32],
    inputs: HostInputs,
    read: &dyn Fn(f32) -> f64,
) -> Reference {
    let (hq, hkv, d) = (p.heads_q as usize, p.heads_kv as usize, p.head_dim as usize);
    let total_q = *cq.last().unwrap_or(&0) as usize;
    let mut out = vec![0.0; total_q * hq * d];
    let mut lse = vec![f64::NEG_INFINITY; total_q * hq];
    for b in 0..p.batch as usize {
        let mut seq = p.sequence(b as u32);
        let (q0, k0) = (cq[b] as usize, ck[b] as usize);
        let slopes = match p.alibi {
            Some(AlibiSlopes::PerBatchHead) => {
                seq.alibi = Some(AlibiSlopes::PerHead);
                inputs.alibi_slopes.map(|s| &s[b * hq..(b + 1) * hq])
            }
            _ => inputs.alibi_slopes,
        };
        let part = attention_full(
            &seq,
            HostInputs {
                // Only this sequence's tokens: each call reads (rounds) all it is given.
                q: &inputs.q[q0 * hq * d..(q0 + seq.seq_q as usize) * hq * d],
                k: &inputs.k[k0 * hkv * d..(k0 + seq.seq_kv as usize) * hkv * d],
                v: &inputs.v[k0 * hkv * d..(k0 + seq.seq_kv as usize) * hkv * d],
                alibi_slopes: slopes,
                sinks: inputs.sinks,
                mask: None,
            },
            read,
        );
        out[q0 * hq * d..(q0 + seq.seq_q as usize) * hq * d].copy_from_slice(&part.out);
        for h in 0..hq {
            for i in 0..seq.seq_q as usize {
                lse[h * total_q + q0 + i] = part.lse[h * seq.seq_q as usize + i];
            }
        }
    }
    Reference { out, lse }
}

/// A problem with paged K and V ([`Attention::paged_kv`]) as the same problem with K and V
/// contiguous ((batch, seq_kv, heads_kv, head_dim), or packed for a variable-length batch), and
/// its K and V gathered through the block table. A problem without pages comes back as it is.
pub fn unpaged(p: &Attention, k: &[f32], v: &[f32]) -> (Attention, Vec<f32>, Vec<f32>) {
    let Some(pk) = &p.paged_kv else {
        return (p.clone(), k.to_vec(), v.to_vec());
    };
    let mut dense = p.clone();
    dense.paged_kv = None;
    dense.strides[1] = match &p.cu_seqlens {
        Some(_) => Strides::packed(p.heads_kv, p.head_dim),
        None => Strides::contiguous(p.seq_kv, p.heads_kv, p.head_dim),
    };
    dense.strides[2] = dense.strides[1];
    let per_seq = pk.pages_per_seq(p.batch) as usize;
    let d = p.head_dim as usize;
    let gather_keys = |t: Tensor, data: &[f32]| {
        let st = p.strides_of(t);
        let mut out = Vec::with_capacity(dense.len_of(t) as usize);
        for b in 0..p.batch {
            let keys = p.seq_kv_of(b);
            for j in 0..keys {
                let page = pk.block_table[b as usize * per_seq + (j / pk.page_size) as usize];
                for h in 0..p.heads_kv as u64 {
                    let at = st.offset(page as u64, (j % pk.page_size) as u64, h) as usize;
                    out.extend_from_slice(&data[at..at + d]);
                }
            }
        }
        // Tensors keep at least one token (as dims_of says).
        out.resize(out.len().max(dense.span_of(t) as usize), 0.0);
        out
    };
    let (k, v) = (gather_keys(Tensor::K, k), gather_keys(Tensor::V, v));
    (dense, k, v)
}

/// Gathers a tensor laid out by the problem's strides into contiguous (batch, seq, heads, head_dim).
pub fn gather(p: &Attention, tensor: Tensor, data: &[f32]) -> Vec<f32> {
    let (nb, ns, nh) = p.dims_of(tensor);
    let st = p.strides_of(tensor);
    let d = p.head_dim as u64;
    let mut out = Vec::with_capacity(p.len_of(tensor) as usize);
    for b in 0..nb as u64 {
        for s in 0..ns as u64 {
            for h in 0..nh as u64 {
                let base = st.offset(b, s, h);
                out.extend((0..d).map(|c| data[(base + c) as usize]));
            }
        }
    }
    out
}

/// One output row of the oracle: O for query `(batch, head, i)` (head_dim values, f64) and its
/// natural-log LSE (-inf, with O all zero, for a row that sees no key).
pub type Row = (Vec<f64>, f64);

/// Naive attention in f64 for selected query rows only, each given as `(batch, head_q, query)`;
/// host tensors are laid out by the problem's strides (element 0 at index 0), as for [`attention`].
///
/// Written on its own (not through [`attention`]), as the textbook softmax: all scores of the row,
/// their maximum, the exponentials, their sum, then the weighted sum of V. Meant for checking large
/// problems, where the full oracle would take too long, on a sample of rows. It honours the causal
/// mask and the window, not softcap, ALiBi, sinks, masks or variable-length batches: it panics on
/// a problem that has them.
///
/// # Panics
/// When a row index is out of range, a slice is shorter than the problem's layout, or the problem
/// uses an option this function does not model.
pub fn rows(p: &Attention, q: &[f32], k: &[f32], v: &[f32], rows: &[(u32, u32, u32)]) -> Vec<Row> {
    if p.paged_kv.is_some() {
        let (dense, k, v) = unpaged(p, k, v);
        return self::rows(&dense, q, &k, &v, rows);
    }
    assert!(
        p.softcap == 0.0
            && p.alibi.is_none()
            && !p.sinks
            && p.mask.is_none()
            && p.cu_seqlens.is_none(),
        "reference::rows models plain, causal and windowed attention only"
    );
    let d = p.head_dim as usize;
    let group = p.heads_q / p.heads_kv;
    let scale = p.scale() as f64;
    let (sq, sk, sv) = (
        p.strides_of(Tensor::Q),
        p.strides_of(Tensor::K),
        p.strides_of(Tensor::V),
    );
    rows.iter()
        .map(|&(b, h, i)| {
            assert!(
                b < p.batch && h < p.heads_q && i < p.seq_q,
                "row ({b}, {h}, {i}) is out of range"
            );
            let hk = h / group;
            let qi = sq.offset(b as u64, i as u64, h as u64) as usize;
            let q_row: Vec<f64> = q[qi..qi + d].iter().map(|&x| x as f64).collect();
            // Visible keys and their scores.
            let scores: Vec<(u32, f64)> = (0..p.seq_kv)
                .filter(|&j| visible(p, i, j))
                .map(|j| {
                    let kj = sk.offset(b as u64, j as u64, hk as u64) as usize;
                    let dot: f64 = q_row
                        .iter()
                        .zip(&k[kj..kj + d])
                        .map(|(a, &b)| a * b as f64)
                        .sum();
                    (j, scale * dot)
                })
                .collect();
            let mut out = vec![0.0f64; d];
            if scores.is_empty() {
                return (out, f64::NEG_INFINITY);
            }
            let max = scores.iter().map(|s| s.1).fold(f64::NEG_INFINITY, f64::max);
            let weights: Vec<f64> = scores.iter().map(|s| (s.1 - max).exp()).collect();
            let sum: f64 = weights.iter().sum();
            for ((j, _), w) in scores.iter().zip(&weights) {
                let vj = sv.offset(b as u64, *j as u64, hk as u64) as usize;
                for (o, &x) in out.iter_mut().zip(&v[vj..vj + d]) {
                    *o += w / sum * x as f64;
                }
            }
            (out, max + sum.ln())
        })
        .collect()
}
