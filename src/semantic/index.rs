//! The vectors of the documents that have one, in one flat int8 array, so
//! a query's cosines are one pass over contiguous memory; documents
//! without a vector take no room but their slot in the row map.

use crate::text::DocId;

use super::vector::Vector;

/// A document without a row.
const NO_ROW: u32 = u32::MAX;

/// The vectors of the text index's documents, by [`DocId`].
#[derive(Default)]
pub struct VectorIndex {
    dims: usize,
    /// Row `r`'s vector is `values[r * dims..][..dims]`.
    values: Vec<i8>,
    /// Row `r`'s scale.
    scales: Vec<f32>,
    /// Row `r`'s document.
    docs: Vec<DocId>,
    /// Each document's row, [`NO_ROW`] when it has none.
    rows: Vec<u32>,
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
        if self.rows.len() <= d {
            self.rows.resize(d + 1, NO_ROW);
        }
        let row = self.rows[d];
        match vector.filter(|v| v.values.len() == self.dims && self.dims > 0) {
            Some(v) if row == NO_ROW => {
                self.rows[d] = self.docs.len() as u32;
                self.docs.push(doc);
                self.values.extend_from_slice(&v.values);
                self.scales.push(v.scale);
            }
            Some(v) => {
                let r = row as usize;
                self.values[r * self.dims..][..self.dims].copy_from_slice(&v.values);
                self.scales[r] = v.scale;
            }
            None if row == NO_ROW => {}
            None => {
                // The last row takes the freed one's place.
                let r = row as usize;
                let last = self.docs.len() - 1;
                if r != last {
                    self.values
                        .copy_within(last * self.dims..(last + 1) * self.dims, r * self.dims);
                    self.scales[r] = self.scales[last];
                    self.docs[r] = self.docs[last];
                    self.rows[self.docs[r] as usize] = row;
                }
                self.values.truncate(last * self.dims);
                self.scales.truncate(last);
                self.docs.truncate(last);
                self.rows[d] = NO_ROW;
            }
        }
    }

    /// How many documents have a vector.
    pub fn len(&self) -> usize {
        self.docs.len()
    }

    /// Whether no document has a vector.
    pub fn is_empty(&self) -> bool {
        self.docs.is_empty()
    }

    /// The cosine of `query` with every document, by [`DocId`] (0 for a
    /// document without a vector).
    pub fn cosines(&self, query: &Vector) -> Vec<f32> {
        let mut by_doc = vec![0.0; self.rows.len()];
        if query.values.len() != self.dims || self.dims == 0 {
            return by_doc;
        }
        super::vector::cosines(&self.values, &self.scales, query, |row, cosine| {
            by_doc[self.docs[row] as usize] = cosine;
        });
        by_doc
    }

    /// Releases spare capacity.
    pub fn shrink_to_fit(&mut self) {
        self.values.shrink_to_fit();
        self.scales.shrink_to_fit();
        self.docs.shrink_to_fit();
        self.rows.shrink_to_fit();
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
        assert_eq!(index.len(), 2);
        let c = index.cosines(&x);
        assert_eq!(c.len(), 3);
        assert!((c[0] - 1.0).abs() < 0.01 && c[1] == 0.0 && c[2].abs() < 0.01);
        index.set(0, None);
        assert_eq!(index.len(), 1);
        assert_eq!(index.cosines(&x)[0], 0.0);
        assert!((index.cosines(&y)[2] - 1.0).abs() < 0.01);
        // A document without a vector takes no row.
        index.set(1, None);
        assert_eq!(index.len(), 1);
    }

    #[test]
    fn removing_a_row_moves_the_last_into_its_place() {
        let axis = |i: usize| {
            let mut v = [0.0f32; 4];
            v[i] = 1.0;
            Vector::normalised(&v).unwrap()
        };
        let mut index = VectorIndex::new(4);
        for doc in 0..4 {
            index.set(doc, Some(&axis(doc as usize)));
        }
        index.set(1, None);
        index.set(0, Some(&axis(3)));
        assert_eq!(index.len(), 3);
        for doc in [2u32, 3] {
            let c = index.cosines(&axis(doc as usize));
            assert!((c[doc as usize] - 1.0).abs() < 0.01, "{doc} {c:?}");
            assert_eq!(c[1], 0.0);
        }
        let c = index.cosines(&axis(3));
        assert!((c[0] - 1.0).abs() < 0.01 && (c[3] - 1.0).abs() < 0.01);
        index.set(3, None);
        index.set(2, None);
        index.set(0, None);
        assert!(index.is_empty());
        assert!(index.cosines(&axis(0)).iter().all(|&c| c == 0.0));
    }
}
