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

/// The dot product of `query` with each `dims`-long row of `rows`, into
/// `out` (one CPU feature check for the whole pass).
pub fn dots(rows: &[i8], query: &[i8], out: &mut Vec<i32>) {
    #[cfg(target_arch = "x86_64")]
    {
        if std::is_x86_feature_detected!("avx2") {
            // SAFETY: the CPU has AVX2, checked just above.
            return unsafe { dots_avx2(rows, query, out) };
        }
    }
    dots_portable(rows, query, out)
}

#[inline(always)]
fn dots_portable(rows: &[i8], query: &[i8], out: &mut Vec<i32>) {
    if query.is_empty() {
        return;
    }
    out.extend(
        rows.chunks_exact(query.len())
            .map(|row| dot_portable(row, query)),
    );
}

#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2")]
fn dots_avx2(rows: &[i8], query: &[i8], out: &mut Vec<i32>) {
    dots_portable(rows, query, out)
}

#[inline(always)]
fn dot_portable(a: &[i8], b: &[i8]) -> i32 {
    a.iter()
        .zip(b)
        .map(|(&x, &y)| i32::from(x) * i32::from(y))
        .sum()
}

/// The same loop, compiled for AVX2 (the compiler vectorises it with
/// 16-bit multiply-adds).
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2")]
fn dot_avx2(a: &[i8], b: &[i8]) -> i32 {
    dot_portable(a, b)
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
    fn both_dot_products_agree() {
        let a: Vec<i8> = (0..300).map(|i| (i * 37 % 255 - 127) as i8).collect();
        let b: Vec<i8> = (0..300).map(|i| (i * 91 % 255 - 127) as i8).collect();
        assert_eq!(dot(&a, &b), dot_portable(&a, &b));
        let mut out = Vec::new();
        dots(&[a.clone(), b.clone()].concat(), &b, &mut out);
        assert_eq!(out, [dot_portable(&a, &b), dot_portable(&b, &b)]);
    }
}
