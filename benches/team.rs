//! The team's files at scale (issue 35, item 4): a year of a 50-person
//! team, 50 files of 5,000 events each over 2,000 items, loaded cold as at
//! start-up, then again after a pull that appended 20 events to each of 5
//! files (only the new lines are read). Prints the times (median of
//! several runs) and what is kept in memory (tallies: items x members).
//!
//! `cargo bench --bench team` (`-- members N events M` to change the size).

use std::io::Write;
use std::path::Path;
use std::time::Instant;

use memd::learning::team::{member_file_name, Event};

fn event(member: &str, n: u64, item: u64) -> String {
    let e = Event {
        event: format!("{}-{:016x}", 1_700_000_000_000 + n, n * 2_654_435_761),
        member: member.to_string(),
        item: format!("L-{item}"),
        repo: "billing-svc".into(),
        tags: vec!["billing-svc".into(), "linux".into(), "python".into()],
        verdict: if (n * 7 + item).is_multiple_of(3) {
            1.0
        } else {
            -1.0
        },
        weight: if n.is_multiple_of(5) { 2.0 } else { 1.0 },
        time: 1_700_000_000 + n as i64,
    };
    serde_json::to_string(&e).unwrap() + "\n"
}

fn median(mut v: Vec<f64>) -> f64 {
    v.sort_by(f64::total_cmp);
    v[v.len() / 2]
}

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let arg = |name: &str, default: u64| {
        args.windows(2)
            .find(|w| w[0] == name)
            .map_or(default, |w| w[1].parse().unwrap())
    };
    let members = arg("members", 50);
    let events = arg("events", 5_000);
    let items = 2_000;
    let dir = tempfile::tempdir().unwrap();
    let repo = dir.path();
    let memd = repo.join(".memd");
    std::fs::create_dir_all(memd.join("learned")).unwrap();
    std::fs::write(memd.join("team.toml"), "[team]\nname = \"billing-svc\"\n").unwrap();
    let names: Vec<String> = (0..members)
        .map(|m| format!("member{m}@example.com"))
        .collect();
    let mut bytes = 0;
    for (m, name) in names.iter().enumerate() {
        let mut text = String::new();
        for n in 0..events {
            text += &event(name, n, (n * 31 + m as u64 * 17) % items);
        }
        bytes += text.len();
        std::fs::write(memd.join("learned").join(member_file_name(name)), text).unwrap();
    }
    let load =
        |before| memd::daemon::team::load(Path::new(repo), before, Some("member0@example.com"));
    println!(
        "team files: {members} members x {events} events over {items} items, {:.1} MiB",
        bytes as f64 / (1024.0 * 1024.0)
    );
    let mut cold = Vec::new();
    let mut team = None;
    for _ in 0..5 {
        let started = Instant::now();
        team = load(None);
        cold.push(started.elapsed().as_secs_f64() * 1000.0);
    }
    let team = team.unwrap();
    let tallies: usize = team.files.values().map(|f| f.tallies.len()).sum();
    println!(
        "cold load: median {:.0} ms (runs: {:?}); {} events counted, {} tallies (items x members judged) kept",
        median(cold.clone()),
        cold.iter().map(|t| t.round()).collect::<Vec<_>>(),
        team.events(),
        tallies
    );
    let mut pulled = Vec::new();
    let mut current = team;
    for round in 0..5u64 {
        for name in names.iter().take(5) {
            let mut f = std::fs::OpenOptions::new()
                .append(true)
                .open(memd.join("learned").join(member_file_name(name)))
                .unwrap();
            for n in 0..20 {
                let n = events + round * 20 + n;
                f.write_all(event(name, n, n % items).as_bytes()).unwrap();
            }
        }
        let started = Instant::now();
        current = load(Some(current)).unwrap();
        pulled.push(started.elapsed().as_secs_f64() * 1000.0);
    }
    println!(
        "after a pull (5 files, 20 new events each): median {:.1} ms (runs: {:?}); {} events counted",
        median(pulled.clone()),
        pulled.iter().map(|t| (t * 10.0).round() / 10.0).collect::<Vec<_>>(),
        current.events()
    );
}
