//! A unit-length embedding kept as int8 with one scale: a quarter of the
//! memory of `f32`, and integer dot products.

use serde::{Deserialize, Serialize};

/// The most dimensions a model may have.
pub const MAX_DIMS: usize = 4096;

/// A unit-length vector, `values[i] * scale` per component.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Vector {
    pub values: Vec<i8>,
    pub scale: f32,
}

impl Vector {
    /// `v` normalised to unit length and quantised; `None` for a zero or
    /// non-finite vector.
    pub fn normalised(v: &[f32]) -> Option<Vector> {
        let norm = v.iter().map(|x| x * x).sum::<f32>().sqrt();
        if !norm.is_finite() || norm == 0.0 {
            return None;
        }
        let max = v.iter().fold(0f32, |m, x| m.max(x.abs())) / norm;
        let scale = max / 127.0;
        let values = v
            .iter()
            .map(|x| (x / norm / scale).round().clamp(-127.0, 127.0) as i8)
            .collect();
        Some(Vector { values, scale })
    }

    /// The cosine of two vectors of the same model, in `[-1, 1]`.
    pub fn cosine(&self, other: &Vector) -> f32 {
        dot(&self.values, &other.values) as f32 * self.scale * other.scale
    }
}

/// The integer dot product of two int8 vectors of the same length.
pub fn dot(a: &[i8], b: &[i8]) -> i32 {
    #[cfg(target_arch = "x86_64")]
    {
        if std::is_x86_feature_detected!("avx2") {
            // SAFETY: the CPU has AVX2, checked just above.
            return unsafe { dot_avx2(a, b) };
        }
    }
    dot_portable(a, b)
}

/// The cosine of `query` with each row of `rows` (as long as the query,
/// worth `scales[r]` per unit), given to `put(row, cosine)` row by row in
/// one pass with one CPU feature check.
pub fn cosines(rows: &[i8], scales: &[f32], query: &Vector, put: impl FnMut(usize, f32)) {
    #[cfg(target_arch = "x86_64")]
    {
        if std::is_x86_feature_detected!("avx2") {
            // SAFETY: the CPU has AVX2, checked just above.
            return unsafe { cosines_avx2(rows, scales, query, put) };
        }
    }
    cosines_portable(rows, scales, query, put)
}

#[inline(always)]
fn cosines_portable(rows: &[i8], scales: &[f32], query: &Vector, mut put: impl FnMut(usize, f32)) {
    if query.values.is_empty() {
        return;
    }
    for (r, (row, &scale)) in rows
        .chunks_exact(query.values.len())
        .zip(scales)
        .enumerate()
    {
        put(
            r,
            dot_portable(row, &query.values) as f32 * scale * query.scale,
        );
    }
}

#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2")]
fn cosines_avx2(rows: &[i8], scales: &[f32], query: &Vector, mut put: impl FnMut(usize, f32)) {
    match query.values.len() {
        0 => return,
        128 => return cosines_avx2_held::<4>(rows, scales, query, put),
        256 => return cosines_avx2_held::<8>(rows, scales, query, put),
        _ => {}
    }
    for (r, (row, &scale)) in rows
        .chunks_exact(query.values.len())
        .zip(scales)
        .enumerate()
    {
        put(r, dot_avx2(row, &query.values) as f32 * scale * query.scale);
    }
}

/// [`cosines_avx2`] for a query of `STEPS x 32` components, held in
/// registers for every row with its magnitudes (`|q|`) worked out once:
/// a row costs one load, `vpsignb`, `vpmaddubsw`, `vpmaddwd` and an add
/// a step, the same sums as [`dot_avx2`] with the query as `a`.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2")]
#[inline]
fn cosines_avx2_held<const STEPS: usize>(
    rows: &[i8],
    scales: &[f32],
    query: &Vector,
    mut put: impl FnMut(usize, f32),
) {
    use std::arch::x86_64::*;
    let dims = STEPS * 32;
    assert_eq!(query.values.len(), dims);
    let mut signs = [_mm256_setzero_si256(); STEPS];
    let mut magnitudes = [_mm256_setzero_si256(); STEPS];
    for step in 0..STEPS {
        // SAFETY: `step * 32 + 32 <= dims`, the query's length; unaligned.
        let q = unsafe { _mm256_loadu_si256(query.values.as_ptr().add(step * 32).cast()) };
        signs[step] = q;
        magnitudes[step] = _mm256_sign_epi8(q, q);
    }
    let ones = _mm256_set1_epi16(1);
    for (r, (row, &scale)) in rows.chunks_exact(dims).zip(scales).enumerate() {
        let mut sums = _mm256_setzero_si256();
        for step in 0..STEPS {
            // SAFETY: `step * 32 + 32 <= dims`, the row's length; unaligned.
            let v = unsafe { _mm256_loadu_si256(row.as_ptr().add(step * 32).cast()) };
            let pairs = _mm256_maddubs_epi16(magnitudes[step], _mm256_sign_epi8(v, signs[step]));
            sums = _mm256_add_epi32(sums, _mm256_madd_epi16(pairs, ones));
        }
        put(r, lanes_sum(sums) as f32 * scale * query.scale);
    }
}

#[inline(always)]
fn dot_portable(a: &[i8], b: &[i8]) -> i32 {
    a.iter()
        .zip(b)
        .map(|(&x, &y)| i32::from(x) * i32::from(y))
        .sum()
}

/// The dot product with AVX2, 32 components a step: `vpmaddubsw` on
/// `|a|` and `b` carrying `a`'s sign (pairs of products as 16-bit sums,
/// at most 2 x 127 x 127, so no saturation for components in
/// `[-127, 127]`, which is all quantisation makes), then widened to 32
/// bits.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2")]
#[inline]
fn dot_avx2(a: &[i8], b: &[i8]) -> i32 {
    use std::arch::x86_64::*;
    let n = a.len().min(b.len());
    let steps = n / 32;
    let ones = _mm256_set1_epi16(1);
    let mut sums = _mm256_setzero_si256();
    for step in 0..steps {
        // SAFETY: `step * 32 + 32 <= n`, within both slices; unaligned
        // loads.
        let (va, vb) = unsafe {
            (
                _mm256_loadu_si256(a.as_ptr().add(step * 32).cast()),
                _mm256_loadu_si256(b.as_ptr().add(step * 32).cast()),
            )
        };
        let magnitudes = _mm256_sign_epi8(va, va);
        let signed = _mm256_sign_epi8(vb, va);
        let pairs = _mm256_maddubs_epi16(magnitudes, signed);
        sums = _mm256_add_epi32(sums, _mm256_madd_epi16(pairs, ones));
    }
    let done = steps * 32;
    lanes_sum(sums) + dot_portable(&a[done..n], &b[done..n])
}

/// The sum of the eight 32-bit lanes of `sums`.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2")]
#[inline]
fn lanes_sum(sums: std::arch::x86_64::__m256i) -> i32 {
    use std::arch::x86_64::*;
    let half = _mm_add_epi32(
        _mm256_castsi256_si128(sums),
        _mm256_extracti128_si256::<1>(sums),
    );
    let quarter = _mm_add_epi32(half, _mm_shuffle_epi32::<0b01_00_11_10>(half));
    let total = _mm_add_epi32(quarter, _mm_shuffle_epi32::<0b10_11_00_01>(quarter));
    _mm_cvtsi128_si32(total)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn quantised_cosine_is_close_to_the_exact_one() {
        let a: Vec<f32> = (0..128)
            .map(|i| ((i * 7 % 13) as f32 - 6.0) / 3.0)
            .collect();
        let b: Vec<f32> = (0..128)
            .map(|i| ((i * 5 % 11) as f32 - 5.0) / 2.0)
            .collect();
        let exact = {
            let d: f32 = a.iter().zip(&b).map(|(x, y)| x * y).sum();
            let na: f32 = a.iter().map(|x| x * x).sum::<f32>().sqrt();
            let nb: f32 = b.iter().map(|x| x * x).sum::<f32>().sqrt();
            d / na / nb
        };
        let (qa, qb) = (
            Vector::normalised(&a).unwrap(),
            Vector::normalised(&b).unwrap(),
        );
        assert!(
            (qa.cosine(&qb) - exact).abs() < 0.01,
            "{} {exact}",
            qa.cosine(&qb)
        );
        assert!((qa.cosine(&qa) - 1.0).abs() < 0.01);
        assert!(Vector::normalised(&[0.0; 4]).is_none());
        assert!(Vector::normalised(&[f32::NAN; 4]).is_none());
    }

    #[test]
    fn the_dot_products_and_cosines_agree() {
        let a: Vec<i8> = (0..300).map(|i| (i * 37 % 255 - 127) as i8).collect();
        let b: Vec<i8> = (0..300).map(|i| (i * 91 % 255 - 127) as i8).collect();
        assert_eq!(dot(&a, &b), dot_portable(&a, &b));
        // The extremes, where 16-bit pair sums come closest to saturating.
        let low = vec![-127i8; 64];
        let high = vec![127i8; 64];
        assert_eq!(dot(&low, &high), -127 * 127 * 64);
        assert_eq!(dot(&low, &low), 127 * 127 * 64);
        let query = Vector {
            values: b.clone(),
            scale: 0.5,
        };
        let mut out = vec![0.0; 2];
        cosines(
            &[a.clone(), b.clone()].concat(),
            &[2.0, 0.25],
            &query,
            |row, cosine| out[row] = cosine,
        );
        let expected = [
            dot_portable(&a, &b) as f32 * 2.0 * 0.5,
            dot_portable(&b, &b) as f32 * 0.25 * 0.5,
        ];
        assert_eq!(out, expected);
    }

    /// The kernels that hold the query in registers (128 and 256
    /// components) give the portable sums, extremes included.
    #[test]
    fn cosines_with_the_query_held_agree_with_the_portable_ones() {
        for dims in [128usize, 256] {
            let rows: Vec<i8> = (0..dims * 5)
                .map(|i| ((i * 37 % 255) as i32 - 127) as i8)
                .chain(std::iter::repeat_n(-127, dims))
                .chain(std::iter::repeat_n(127, dims))
                .collect();
            let scales: Vec<f32> = (0..7).map(|r| 0.25 + r as f32).collect();
            for values in [
                (0..dims)
                    .map(|i| ((i * 91 % 255) as i32 - 127) as i8)
                    .collect(),
                vec![127i8; dims],
                vec![-127i8; dims],
                vec![0i8; dims],
            ] {
                let query = Vector { values, scale: 0.5 };
                let mut held = vec![f32::NAN; 7];
                cosines(&rows, &scales, &query, |r, c| held[r] = c);
                let mut portable = vec![f32::NAN; 7];
                cosines_portable(&rows, &scales, &query, |r, c| portable[r] = c);
                assert_eq!(held, portable, "{dims} dims");
            }
        }
    }
}
