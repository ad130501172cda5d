//! A static embedding model in model2vec's format: a tokenizer
//! (`tokenizer.json`), one vector per token (`model.safetensors`, tensor
//! `embeddings`, optionally `weights` per token and a `mapping` of token to
//! row) and `config.json`. A text's embedding is the mean of its tokens'
//! vectors, normalised: no network, no transformer, microseconds per text.

use std::borrow::Cow;
use std::path::{Path, PathBuf};

use safetensors::{Dtype, SafeTensors};
use tokenizers::Tokenizer;

use super::vector::Vector;
use super::wordpiece::WordPieceTokenizer;

/// How a text becomes token ids.
enum Encoder {
    /// A WordPiece model, its vocabulary compacted (the common case).
    WordPiece(Box<WordPieceTokenizer>),
    /// Any other model, through the `tokenizers` crate as it is.
    Other(Box<Tokenizer>),
}

impl Encoder {
    fn new(tokenizer: Tokenizer) -> Self {
        match WordPieceTokenizer::from_tokenizer(&tokenizer) {
            Some(compact) => Encoder::WordPiece(Box::new(compact)),
            None => Encoder::Other(Box::new(tokenizer)),
        }
    }

    fn encode(&self, text: &str) -> Option<Vec<u32>> {
        match self {
            Encoder::WordPiece(t) => t.encode(text).ok(),
            Encoder::Other(t) => t.encode(text, false).ok().map(|e| e.get_ids().to_vec()),
        }
    }
}

/// The model that ships with memd (`models/minilm-l6-static`, made by
/// `tools/make_model.py`): all-MiniLM-L6-v2 distilled by model2vec to 128
/// dimensions, int8.
pub const BUILT_IN_NAME: &str = "minilm-l6-static";
pub(super) const BUILT_IN_TOKENIZER: &[u8] =
    include_bytes!("../../models/minilm-l6-static/tokenizer.json");
const BUILT_IN_TABLE: &[u8] = include_bytes!("../../models/minilm-l6-static/model.safetensors");
/// The built-in model's fingerprint ([`model_id`] of its two files), written
/// here rather than computed at each start, which would read all 4.5 MB of
/// them into memory; a unit test checks it against the files.
const BUILT_IN_ID: u64 = 0x5a09_04f8_e2a7_0cde;

/// The most of a text that is embedded, in bytes: its first and last halves
/// when longer (a pasted log), so embedding time stays bounded.
pub const MAX_EMBEDDED_BYTES: usize = 4 * 1024;

/// Why a model could not be loaded.
#[derive(Debug, thiserror::Error)]
pub enum ModelError {
    #[error("{path}: {source}")]
    Read {
        path: PathBuf,
        source: std::io::Error,
    },
    #[error("tokenizer.json: {0}")]
    Tokenizer(String),
    #[error("model.safetensors: {0}")]
    Table(String),
}

/// A loaded model: the tokenizer and the token table, quantised to int8
/// per row (each row's scale kept), so a 30k x 256 table takes 8 MB.
pub struct Model {
    name: String,
    id: u64,
    encoder: Encoder,
    dims: usize,
    /// Row `r` is `rows[r * dims..][..dims]` (int8 components as bytes),
    /// worth `scales[r]` per unit; the built-in model's is its compiled-in
    /// table, not a copy.
    rows: Cow<'static, [u8]>,
    scales: Vec<f32>,
    /// Token id -> row (model2vec's vocabulary quantisation); identity when
    /// absent.
    mapping: Option<Vec<u32>>,
    /// The unknown token, left out of the mean as model2vec does.
    unknown: Option<u32>,
}

impl std::fmt::Debug for Model {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Model")
            .field("name", &self.name)
            .field("dims", &self.dims)
            .field("tokens", &self.scales.len())
            .finish()
    }
}

impl Model {
    /// The model built into memd.
    pub fn built_in() -> Result<Model, ModelError> {
        Model::build(
            BUILT_IN_NAME,
            BUILT_IN_TOKENIZER,
            BUILT_IN_TABLE,
            BUILT_IN_ID,
            Cow::Borrowed,
        )
    }

    /// Loads the model2vec model in `dir`.
    pub fn load(dir: &Path) -> Result<Model, ModelError> {
        let read = |name: &str| {
            let path = dir.join(name);
            std::fs::read(&path).map_err(|source| ModelError::Read { path, source })
        };
        let tokenizer = read("tokenizer.json")?;
        let table = read("model.safetensors")?;
        Model::from_bytes(&dir.display().to_string(), &tokenizer, &table)
    }

    /// A model from the bytes of its `tokenizer.json` and
    /// `model.safetensors`.
    pub fn from_bytes(name: &str, tokenizer: &[u8], table: &[u8]) -> Result<Model, ModelError> {
        let id = model_id(tokenizer, table);
        Model::build(name, tokenizer, table, id, |rows| Cow::Owned(rows.to_vec()))
    }

    /// A model from its files' bytes and fingerprint; `keep` keeps an int8
    /// table's bytes (borrowed when they live as long as the program).
    fn build<'t>(
        name: &str,
        tokenizer: &[u8],
        table: &'t [u8],
        id: u64,
        keep: impl FnOnce(&'t [u8]) -> Cow<'static, [u8]>,
    ) -> Result<Model, ModelError> {
        let mut tokenizer =
            Tokenizer::from_bytes(tokenizer).map_err(|e| ModelError::Tokenizer(e.to_string()))?;
        tokenizer
            .with_truncation(None)
            .map_err(|e| ModelError::Tokenizer(e.to_string()))?;
        tokenizer.with_padding(None);
        let tensors =
            SafeTensors::deserialize(table).map_err(|e| ModelError::Table(e.to_string()))?;
        let embeddings = tensors
            .tensor("embeddings")
            .map_err(|e| ModelError::Table(format!("no `embeddings` tensor ({e})")))?;
        let &[tokens, dims] = embeddings.shape() else {
            return Err(ModelError::Table(format!(
                "`embeddings` has shape {:?}, not [tokens, dims]",
                embeddings.shape()
            )));
        };
        if tokens == 0 || dims == 0 || dims > super::vector::MAX_DIMS {
            return Err(ModelError::Table(format!(
                "`embeddings` has shape [{tokens}, {dims}]"
            )));
        }
        let weights = match tensors.tensor("weights") {
            Ok(w) => Some(floats(w.dtype(), w.data(), "weights")?),
            Err(_) => None,
        };
        let mapping = match tensors.tensor("mapping") {
            Ok(m) => Some(integers(m.dtype(), m.data())?),
            Err(_) => None,
        };
        let vocabulary = tokenizer.get_vocab_size(true);
        let (rows, scales) = match (embeddings.dtype(), &weights) {
            // Already int8 (as the built-in model): one scale for the table,
            // which the cosine does not depend on; taken as it is.
            (Dtype::I8, None) => (keep(embeddings.data()), vec![1.0; tokens]),
            _ => {
                let values = floats(embeddings.dtype(), embeddings.data(), "embeddings")?;
                let (rows, scales) = quantise_rows(&values, dims, weights.as_deref())?;
                (Cow::Owned(rows), scales)
            }
        };
        if let Some(mapping) = &mapping {
            if mapping.iter().any(|&r| r as usize >= tokens) {
                return Err(ModelError::Table("`mapping` points past the table".into()));
            }
        } else if vocabulary > tokens {
            return Err(ModelError::Table(format!(
                "the tokenizer has {vocabulary} tokens, the table {tokens} rows"
            )));
        }
        let unknown = tokenizer
            .token_to_id("[UNK]")
            .or_else(|| tokenizer.token_to_id("<unk>"));
        Ok(Model {
            name: name.to_string(),
            id,
            encoder: Encoder::new(tokenizer),
            dims,
            rows,
            scales,
            mapping,
            unknown,
        })
    }

    /// Where the model came from: a directory, or the built-in name.
    pub fn name(&self) -> &str {
        &self.name
    }

    /// A fingerprint of the model's files: stored vectors are used only by
    /// the model that made them.
    pub fn id(&self) -> u64 {
        self.id
    }

    /// Dimensions of its vectors.
    pub fn dims(&self) -> usize {
        self.dims
    }

    /// The normalised mean of `text`'s token vectors; `None` when no token
    /// of it is known (an empty or unknown-only text).
    pub fn embed(&self, text: &str) -> Option<Vector> {
        let text = crate::text::considered_within(text, MAX_EMBEDDED_BYTES);
        let ids = self.encoder.encode(text.as_ref())?;
        let mut sum = vec![0f32; self.dims];
        let mut count = 0usize;
        for &token in &ids {
            if Some(token) == self.unknown {
                continue;
            }
            let row = match &self.mapping {
                Some(m) => match m.get(token as usize) {
                    Some(&r) => r as usize,
                    None => continue,
                },
                None => token as usize,
            };
            let Some(&scale) = self.scales.get(row) else {
                continue;
            };
            let values = &self.rows[row * self.dims..][..self.dims];
            for (s, &v) in sum.iter_mut().zip(values) {
                *s += f32::from(v as i8) * scale;
            }
            count += 1;
        }
        (count > 0).then(|| Vector::normalised(&sum)).flatten()
    }
}

/// A stable fingerprint of a model: the CRC-32s of its two files' bytes.
fn model_id(tokenizer: &[u8], table: &[u8]) -> u64 {
    (u64::from(crc32fast::hash(tokenizer)) << 32) | u64::from(crc32fast::hash(table))
}

/// A tensor's values as `f32` (from f32, f16, bf16 or int8).
fn floats(dtype: Dtype, data: &[u8], name: &str) -> Result<Vec<f32>, ModelError> {
    let values = match dtype {
        Dtype::F32 => data
            .chunks_exact(4)
            .map(|b| f32::from_le_bytes([b[0], b[1], b[2], b[3]]))
            .collect(),
        Dtype::F16 => data
            .chunks_exact(2)
            .map(|b| f16_to_f32(u16::from_le_bytes([b[0], b[1]])))
            .collect(),
        Dtype::BF16 => data
            .chunks_exact(2)
            .map(|b| f32::from_bits(u32::from(u16::from_le_bytes([b[0], b[1]])) << 16))
            .collect(),
        Dtype::I8 => data.iter().map(|&b| f32::from(b as i8)).collect(),
        other => {
            return Err(ModelError::Table(format!(
                "`{name}` is {other:?}; f32, f16, bf16 or int8 expected"
            )))
        }
    };
    Ok(values)
}

/// A tensor's values as row indices (from any integer type).
fn integers(dtype: Dtype, data: &[u8]) -> Result<Vec<u32>, ModelError> {
    let wide = |b: &[u8]| -> u64 {
        let mut v = [0u8; 8];
        v[..b.len()].copy_from_slice(b);
        u64::from_le_bytes(v)
    };
    let size = match dtype {
        Dtype::I32 | Dtype::U32 => 4,
        Dtype::I64 | Dtype::U64 => 8,
        Dtype::I16 | Dtype::U16 => 2,
        other => {
            return Err(ModelError::Table(format!(
                "`mapping` is {other:?}; an integer type expected"
            )))
        }
    };
    data.chunks_exact(size)
        .map(|b| {
            u32::try_from(wide(b)).map_err(|_| ModelError::Table("`mapping` overflows".into()))
        })
        .collect()
}

/// IEEE half precision to single.
fn f16_to_f32(bits: u16) -> f32 {
    let sign = u32::from(bits >> 15) << 31;
    let exponent = u32::from((bits >> 10) & 0x1f);
    let mantissa = u32::from(bits & 0x3ff);
    let value = match (exponent, mantissa) {
        (0, 0) => sign,
        (0, m) => {
            // Subnormal: normalise it.
            let shift = m.leading_zeros() - 21;
            let m = (m << shift) & 0x3ff;
            sign | ((127 - 15 + 1 - shift) << 23) | (m << 13)
        }
        (0x1f, m) => sign | 0x7f80_0000 | (m << 13),
        (e, m) => sign | ((e + 127 - 15) << 23) | (m << 13),
    };
    f32::from_bits(value)
}

/// Each row (times its token weight, when given) to int8 with its own
/// scale.
fn quantise_rows(
    values: &[f32],
    dims: usize,
    weights: Option<&[f32]>,
) -> Result<(Vec<u8>, Vec<f32>), ModelError> {
    let tokens = values.len() / dims;
    if let Some(w) = weights {
        if w.len() < tokens {
            return Err(ModelError::Table(
                "`weights` is shorter than the table".into(),
            ));
        }
    }
    let mut rows = Vec::with_capacity(values.len());
    let mut scales = Vec::with_capacity(tokens);
    for (r, row) in values.chunks_exact(dims).enumerate() {
        let weight = weights.map_or(1.0, |w| w[r]);
        let max = row.iter().fold(0f32, |m, v| m.max(v.abs())) * weight.abs();
        if !max.is_finite() {
            return Err(ModelError::Table(format!("row {r} is not finite")));
        }
        let scale = if max > 0.0 { max / 127.0 } else { 0.0 };
        for &v in row {
            let q = if scale > 0.0 {
                (v * weight / scale).round()
            } else {
                0.0
            };
            rows.push(q.clamp(-127.0, 127.0) as i8 as u8);
        }
        scales.push(scale);
    }
    Ok((rows, scales))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn half_precision_converts() {
        assert_eq!(f16_to_f32(0x3c00), 1.0);
        assert_eq!(f16_to_f32(0xc000), -2.0);
        assert_eq!(f16_to_f32(0x0000), 0.0);
        assert!((f16_to_f32(0x3555) - 0.333_25).abs() < 1e-4);
        assert!((f16_to_f32(0x0001) - 5.96e-8).abs() < 1e-9);
    }

    #[test]
    fn the_built_in_fingerprint_is_that_of_its_files() {
        assert_eq!(
            model_id(BUILT_IN_TOKENIZER, BUILT_IN_TABLE),
            BUILT_IN_ID,
            "{:#018x}",
            model_id(BUILT_IN_TOKENIZER, BUILT_IN_TABLE)
        );
    }

    #[test]
    fn the_built_in_model_loads_and_embeds() {
        let model = Model::built_in().unwrap();
        assert_eq!(model.dims(), 128);
        let a = model
            .embed("the test is flaky and fails intermittently")
            .unwrap();
        let b = model
            .embed("an intermittent failure in the test suite")
            .unwrap();
        let c = model.embed("docker image layers and their size").unwrap();
        assert!(
            a.cosine(&b) > a.cosine(&c),
            "{} {}",
            a.cosine(&b),
            a.cosine(&c)
        );
        assert!((a.cosine(&a) - 1.0).abs() < 0.02);
        assert!(model.embed("").is_none());
    }

    #[test]
    fn a_table_that_does_not_fit_the_tokenizer_is_refused() {
        let tokenizer = BUILT_IN_TOKENIZER;
        let table = safetensors::serialize(
            [(
                "embeddings",
                safetensors::tensor::TensorView::new(Dtype::F32, vec![2, 4], &[0u8; 32]).unwrap(),
            )],
            None,
        )
        .unwrap();
        let err = Model::from_bytes("small", tokenizer, &table).unwrap_err();
        assert!(err.to_string().contains("rows"), "{err}");
        let err = Model::from_bytes("junk", tokenizer, b"not a table").unwrap_err();
        assert!(matches!(err, ModelError::Table(_)), "{err}");
    }
}
