//! Nothing panics on input: mutated knowledge files through the loaders and
//! the engine, and random frames through the protocol decoder.

mod common;

use std::path::Path;
use std::sync::Arc;

use common::{mutate, Rng};
use memd::engine::Engine;
use memd::knowledge::parse_file;
use memd::protocol::{decode, Encoding, Query, Request};

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
            let answer = engine
                .query(&memd::learning::Learned::default(), &query)
                .unwrap();
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

/// The frame fuzzer, against the real daemon, with a fixed budget: mutated
/// JSON and postcard requests of every kind, random bytes, lengths that lie
/// (short, long, huge), frames cut off. Each connection gets a typed error,
/// an answer or a close, never a hang; the daemon never crashes and answers
/// normally afterwards.
#[test]
fn fuzzed_frames_never_crash_or_hang_the_daemon() {
    use memd::protocol::{encode, RequestBody};
    use std::io::{Read, Write};
    use std::os::unix::net::UnixStream;
    use std::time::Duration;

    let sandbox = common::Sandbox::new();
    sandbox.write("g.yaml", common::gotcha("G-1", "database pool"));
    let mut daemon = common::Daemon::start(&sandbox);
    let json: Vec<&[u8]> = vec![
        br#"{"version": 1, "request": "ping"}"#,
        br#"{"version": 1, "request": "status"}"#,
        br#"{"version": 1, "request": {"query": {"task": "fix the database pool", "tags": ["rust"], "kinds": ["gotcha"], "session_id": "s"}}}"#,
        br#"{"version": 1, "request": {"get": {"id": "G-1", "query": {}}}}"#,
        br#"{"version": 1, "request": {"search": {"text": "pool", "limit": 5, "query": {}}}}"#,
        br#"{"version": 1, "request": {"explain": {"id": "G-1", "query": {"task": "pool"}}}}"#,
        br#"{"version": 1, "request": {"feedback": {"id": "G-1", "relevant": true, "tags": ["rust"]}}}"#,
        br#"{"version": 1, "request": {"log": {"id": null, "sort_by_score": false}}}"#,
    ];
    let postcard: Vec<Vec<u8>> = [
        RequestBody::Ping,
        RequestBody::Status,
        RequestBody::Query(Query {
            task: "fix the database pool".into(),
            session_id: Some("s".into()),
            ..Query::default()
        }),
        RequestBody::Get {
            id: "G-1".into(),
            query: Query::default(),
        },
    ]
    .into_iter()
    .map(|r| encode(Encoding::Postcard, &Request::new(r)).unwrap()[5..].to_vec())
    .collect();
    let frame = common::frame;
    let mut rng = Rng(0xf022);
    let (mut answered, mut errors, mut closed) = (0, 0, 0);
    for round in 0..3000 {
        let bytes = match round % 6 {
            0 | 1 => {
                let seed = json[rng.below(json.len())];
                frame(2, &mutate(&mut rng, seed))
            }
            2 => {
                let seed = &postcard[rng.below(postcard.len())];
                frame(1, &mutate(&mut rng, seed))
            }
            3 => (0..rng.below(64)).map(|_| rng.next() as u8).collect(),
            4 => {
                // A length that lies about what follows.
                let body = json[rng.below(json.len())];
                let mut f = frame(2, body);
                let claimed = (body.len() as u32 + 1).wrapping_add(rng.below(64) as u32)
                    ^ (rng.below(2) as u32 * 0x4000_0000);
                f[..4].copy_from_slice(&claimed.to_be_bytes());
                f
            }
            _ => {
                // Cut off anywhere.
                let f = frame(2, json[rng.below(json.len())]);
                f[..rng.below(f.len())].to_vec()
            }
        };
        let mut stream = UnixStream::connect(&daemon.socket).unwrap();
        stream
            .set_read_timeout(Some(Duration::from_secs(15)))
            .unwrap();
        let _ = stream.write_all(&bytes);
        let _ = stream.shutdown(std::net::Shutdown::Write);
        let mut reply = Vec::new();
        match stream.read_to_end(&mut reply) {
            Ok(_) => {}
            Err(e) if e.kind() == std::io::ErrorKind::ConnectionReset => {}
            Err(e) => panic!("round {round}: {e} (a hang?) after {bytes:?}"),
        }
        if reply.is_empty() {
            closed += 1;
        } else if String::from_utf8_lossy(&reply).contains("\"error\"")
            || reply.len() > 4 && reply[4] == 1 && reply.len() < 300
        {
            errors += 1;
        } else {
            answered += 1;
        }
        assert!(
            daemon.child.try_wait().unwrap().is_none(),
            "memd exited at round {round} after {bytes:?}"
        );
    }
    eprintln!("3000 fuzzed frames: {answered} answered, {errors} errors, {closed} closed");
    let out = daemon.memctl(&["query", "--task", "fix the db pool"]);
    assert!(out.status.success(), "{}", common::stderr(&out));
    let explain = daemon.memctl(&["explain", "G-1", "--task", "fix the db pool"]);
    assert!(
        common::stdout(&out).contains("database pool"),
        "{}\n{}",
        common::stdout(&out),
        common::stdout(&explain)
    );
    assert!(daemon.stop().success());
}
