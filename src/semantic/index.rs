//! Every live document's vector in one flat int8 array, so a query's
//! cosines are one pass over contiguous memory.

use crate::text::DocId;

use super::vector::Vector;

/// The vectors of the text index's documents, by [`DocId`].
#[derive(Default)]
pub struct VectorIndex {
    dims: usize,
    /// Document `d`'s vector is `values[d * dims..][..dims]`.
    values: Vec<i8>,
    /// Its scale; 0 for a document without a vector (none of its words is
    /// known to the model, or it was removed).
    scales: Vec<f32>,
}

impl VectorIndex {
    /// An empty index of `dims`-dimensional vectors.
    pub fn new(dims: usize) -> Self {
        VectorIndex {
            dims,
            ..VectorIndex::default()
        }
    }

    /// Sets `doc`'s vector (`None`: it has none).
    pub fn set(&mut self, doc: DocId, vector: Option<&Vector>) {
        let d = doc as usize;
        if self.scales.len() <= d {
            self.scales.resize(d + 1, 0.0);
            self.values.resize((d + 1) * self.dims, 0);
        }
        let slot = &mut self.values[d * self.dims..][..self.dims];
        match vector.filter(|v| v.values.len() == self.dims) {
            Some(v) => {
                slot.copy_from_slice(&v.values);
                self.scales[d] = v.scale;
            }
            None => {
                slot.fill(0);
                self.scales[d] = 0.0;
            }
        }
    }

    /// The cosine of `query` with every document, by [`DocId`] (0 for a
    /// document without a vector).
    pub fn cosines(&self, query: &Vector) -> Vec<f32> {
        if query.values.len() != self.dims || self.dims == 0 {
            return vec![0.0; self.scales.len()];
        }
        let mut dots = Vec::with_capacity(self.scales.len());
        super::vector::dots(&self.values, &query.values, &mut dots);
        dots.into_iter()
            .zip(&self.scales)
            .map(|(dot, &scale)| dot as f32 * scale * query.scale)
            .collect()
    }

    /// Releases spare capacity.
    pub fn shrink_to_fit(&mut self) {
        self.values.shrink_to_fit();
        self.scales.shrink_to_fit();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cosines_follow_the_documents_vectors() {
        let mut index = VectorIndex::new(3);
        let x = Vector::normalised(&[1.0, 0.0, 0.0]).unwrap();
        let y = Vector::normalised(&[0.0, 1.0, 0.0]).unwrap();
        index.set(0, Some(&x));
        index.set(2, Some(&y));
        let c = index.cosines(&x);
        assert_eq!(c.len(), 3);
        assert!((c[0] - 1.0).abs() < 0.01 && c[1] == 0.0 && c[2].abs() < 0.01);
        index.set(0, None);
        assert_eq!(index.cosines(&x)[0], 0.0);
        assert!((index.cosines(&y)[2] - 1.0).abs() < 0.01);
    }
}
