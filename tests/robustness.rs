//! Nothing panics on input: mutated knowledge files through the loaders and
//! the engine, and random frames through the protocol decoder.

use std::path::Path;
use std::sync::Arc;

use memd::engine::Engine;
use memd::knowledge::parse_file;
use memd::protocol::{decode, Encoding, Query, Request};

/// A small deterministic generator (SplitMix64).
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }

    fn below(&mut self, n: usize) -> usize {
        (self.next() % n.max(1) as u64) as usize
    }
}

/// Flips, inserts, deletes and duplicates bytes.
fn mutate(rng: &mut Rng, input: &[u8]) -> Vec<u8> {
    let mut out = input.to_vec();
    for _ in 0..1 + rng.below(8) {
        let at = rng.below(out.len() + 1);
        match rng.below(5) {
            0 if at < out.len() => out[at] = rng.next() as u8,
            1 => {
                let specials = b"{}[]:,-\"'&*!|> \n\t";
                out.insert(at, specials[rng.below(specials.len())]);
            }
            2 if at < out.len() => {
                out.remove(at);
            }
            3 => {
                let end = (at + rng.below(40)).min(out.len());
                let chunk = out[at..end].to_vec();
                out.splice(at..at, chunk);
            }
            _ => out.insert(at, rng.next() as u8),
        }
    }
    out
}

#[test]
fn mutated_knowledge_files_never_panic() {
    let dir = concat!(env!("CARGO_MANIFEST_DIR"), "/config/knowledge");
    let files = memd::knowledge::scan::knowledge_files(Path::new(dir));
    assert!(files.len() >= 5);
    let originals: Vec<(String, Vec<u8>)> = files
        .iter()
        .map(|f| {
            (
                f.file_name().unwrap().to_string_lossy().into_owned(),
                std::fs::read(f).unwrap(),
            )
        })
        .collect();
    let mut rng = Rng(42);
    let mut engine = Engine::default();
    for round in 0..1500 {
        let (name, bytes) = &originals[round % originals.len()];
        let mutated = mutate(&mut rng, bytes);
        let load = parse_file(Arc::from(Path::new(name.as_str())), &mutated);
        for error in &load.errors {
            assert!(
                error.pos.line >= 1 || error.message.contains("cannot read"),
                "{error}"
            );
        }
        engine.apply(load);
        if round % 100 == 0 {
            let query = Query {
                task: "implement webhook idempotency".into(),
                agent: Some("backend-engineer".into()),
                budget_chars: 1 + rng.below(9000) as u32,
                ..Query::default()
            };
            let answer = engine.query(&query).unwrap();
            assert!(answer.block.chars().count() <= query.budget_chars as usize);
        }
    }
}

#[test]
fn random_frames_never_panic_the_decoder() {
    let mut rng = Rng(7);
    let valid_json = br#"{"version": 1, "request": {"query": {"task": "x", "tags": ["a"], "kinds": ["gotcha"]}}}"#;
    let valid_postcard = memd::protocol::encode(
        Encoding::Postcard,
        &Request::new(memd::protocol::RequestBody::Query(Query::default())),
    )
    .unwrap();
    for _ in 0..5000 {
        let json = mutate(&mut rng, valid_json);
        let _ = decode::<Request>(Encoding::Json, &json);
        let _ = memd::protocol::peek_version(Encoding::Json, &json);
        let postcard = mutate(&mut rng, &valid_postcard[5..]);
        let _ = decode::<Request>(Encoding::Postcard, &postcard);
        let _ = memd::protocol::peek_version(Encoding::Postcard, &postcard);
        let noise: Vec<u8> = (0..rng.below(64)).map(|_| rng.next() as u8).collect();
        let _ = decode::<Request>(Encoding::Postcard, &noise);
        let _ = memd::protocol::read_frame(&mut &noise[..], memd::protocol::MAX_FRAME_BYTES);
    }
}
