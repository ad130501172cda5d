//! The external judge the daemon runs (`[evaluator] command`), played by
//! this same bench binary: `learning judge TRUTH ERROR_PERCENT`. It answers
//! from the hidden truth the bench wrote for each session, and gets a given
//! share of its verdicts wrong, as an LLM judge would.

use std::io::Read;

/// Whether the verdict on `item` in `session` is one of the wrong ones.
/// Deterministic, and the same in every arm: the session's id
/// (`ARM-SEED-N`) counts without its arm, so arms that judge a lesson in
/// the same session get the same verdict and differ only by what they
/// learned.
pub fn wrong(session: &str, item: &str, error_percent: u64) -> bool {
    let session = session.split_once('-').map_or(session, |(_, rest)| rest);
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    for b in session.bytes().chain([0]).chain(item.bytes()) {
        h ^= u64::from(b);
        h = h.wrapping_mul(0x0100_0000_01b3);
    }
    h ^= h >> 29;
    h = h.wrapping_mul(0xbf58_476d_1ce4_e5b9);
    h ^= h >> 32;
    h % 100 < error_percent
}

/// The judge's verdict on `item` in `session` when the truth is `relevant`:
/// the truth, turned round when it is one of the wrong ones.
pub fn verdict(session: &str, item: &str, relevant: bool, error_percent: u64) -> bool {
    relevant != wrong(session, item, error_percent)
}

/// The lessons relevant to `session`, from the truth file (`session<TAB>id,id`).
pub fn relevant_in(truth: &str, session: &str) -> Vec<String> {
    truth
        .lines()
        .filter_map(|l| l.split_once('\t'))
        .find(|(s, _)| *s == session)
        .map(|(_, ids)| {
            ids.split(',')
                .filter(|s| !s.is_empty())
                .map(str::to_string)
                .collect()
        })
        .unwrap_or_default()
}

/// Judge mode: reads the daemon's JSON on stdin, prints `{"scores": ...}`.
pub fn run(truth_path: &str, error_percent: u64) {
    let mut input = String::new();
    std::io::stdin().read_to_string(&mut input).unwrap();
    let input: serde_json::Value = serde_json::from_str(&input).unwrap();
    let session = input["session_id"].as_str().unwrap_or("");
    let truth = std::fs::read_to_string(truth_path).unwrap_or_default();
    let relevant = relevant_in(&truth, session);
    let mut scores = serde_json::Map::new();
    for item in input["items"].as_array().into_iter().flatten() {
        let id = item["id"].as_str().unwrap_or("");
        let yes = verdict(session, id, relevant.iter().any(|r| r == id), error_percent);
        scores.insert(
            id.to_string(),
            serde_json::json!(if yes { 1.0 } else { -1.0 }),
        );
    }
    println!("{}", serde_json::json!({ "scores": scores }));
}
