//! Replies as text for people.

use std::fmt::Write as _;
use std::time::Duration;

use memd::protocol::{Explanation, HookCall, ItemView, LogEntry, Reply, SearchHit, StatusReport};

/// Prints a reply.
pub fn reply(reply: &Reply, elapsed: Duration) {
    match reply {
        Reply::Pong {
            daemon_version,
            pid,
        } => outln!(
            "memd {daemon_version} is up (pid {pid}); round trip {:.2} ms",
            elapsed.as_secs_f64() * 1000.0
        ),
        Reply::Status(status) => print_status(status),
        Reply::Noted => outln!("noted"),
        Reply::Added { id, file } => outln!("added {id} to {file}"),
        Reply::Answer(answer) => {
            if !answer.block.is_empty() {
                outln!("{}", answer.block);
            }
        }
        Reply::Explanation(e) => out!("{}", explanation(e)),
        Reply::Item(item) => out!("{}", item_text(item)),
        Reply::Hits(hits) => {
            if hits.is_empty() {
                errln!("memctl: no item matches");
            }
            for h in hits {
                outln!("{}", hit_line(h));
            }
        }
        Reply::Reloaded(r) => outln!(
            "reloaded in {:.1} ms: {} parsed, {} removed",
            r.millis,
            r.parsed,
            r.removed
        ),
        Reply::Judged(entry) => out!("{}", log_entry(entry)),
        Reply::Tracked {
            id,
            times_applied,
            effectiveness,
        } => outln!(
            "{id}: applied {times_applied} time(s), effectiveness {}",
            effectiveness.map_or("not scored yet".to_string(), |e| format!("{e:.2}"))
        ),
        Reply::SessionEnded { session_id, shown } => {
            outln!("session {session_id} ended: {shown} item(s) shown, ready for evaluation")
        }
        Reply::Log(entries) => {
            if entries.is_empty() {
                errln!("memctl: nothing learned yet");
            }
            for (i, entry) in entries.iter().enumerate() {
                if i > 0 {
                    outln!();
                }
                out!("{}", log_entry(entry));
            }
        }
        Reply::Exported(yaml) => out!("{yaml}"),
        Reply::Ui { url } => outln!("{url}"),
        Reply::TeamCompacted {
            file,
            lines,
            items,
            backup,
        } => {
            outln!("{file}: {lines} line(s) replaced by one snapshot of {items} item(s)");
            if let Some(backup) = backup {
                outln!("as it was: {backup}");
            }
        }
        Reply::Evaluated(report) => {
            for s in &report.sessions {
                match &s.problem {
                    None => outln!("{}: {} item(s) judged", s.session_id, s.judged),
                    Some(why) if s.judged > 0 => {
                        outln!("{}: {} item(s) judged; {why}", s.session_id, s.judged)
                    }
                    Some(why) => outln!("{}: not evaluated: {why}", s.session_id),
                }
            }
            outln!("{} session(s) still pending", report.pending);
        }
    }
}

/// Why an item is or is not shown: the verdict, the reasons, the scores.
pub fn explanation(e: &Explanation) -> String {
    let score = e
        .score
        .map(|s| format!(", score {s:.3}"))
        .unwrap_or_default();
    let shown = if e.shown { "shown" } else { "not shown" };
    let mut text = format!("{} ({}): {shown}{score}\n", e.id, e.kind);
    for reason in &e.reasons {
        let _ = writeln!(text, "  - {reason}");
    }
    if !e.dimensions.is_empty() {
        let dims: Vec<String> = e
            .dimensions
            .iter()
            .map(|(k, v)| format!("{k} {v:.3}"))
            .collect();
        let _ = writeln!(text, "  dimensions: {}", dims.join(", "));
    }
    text
}

/// One item in full: where it is written, its tags and its fields.
pub fn item_text(item: &ItemView) -> String {
    let mut text = format!("{} ({}) at {}\n", item.id, item.kind, item.source);
    if !item.tags.is_empty() {
        let _ = writeln!(text, "  tags: {}", item.tags.join(", "));
    }
    for (key, value) in &item.fields {
        let _ = writeln!(text, "  {key}: {value}");
    }
    text
}

/// A search result on one line: similarity, id, kind, summary, source.
pub fn hit_line(h: &SearchHit) -> String {
    format!(
        "{:.3}  {:<24} {:<12} {}  ({})",
        h.similarity, h.id, h.kind, h.title, h.source
    )
}

/// Seed 001's per-tag format: `tag  score  (+positive/-negative)`, and
/// the prompts it was held back from since, if any, and whether it is on
/// trial.
/// `memctl log --mine` keeps one's own learned state, `--team` the team's
/// verdicts; neither, both.
pub fn keep_log(entries: &mut Vec<LogEntry>, mine: bool, team: bool) {
    if mine == team {
        return;
    }
    for e in entries.iter_mut() {
        if mine {
            e.team.clear();
        } else {
            e.tags.clear();
            e.pinned = None;
            e.times_applied = 0;
            e.effectiveness = None;
        }
    }
    entries.retain(|e| {
        if mine {
            !e.tags.is_empty() || e.pinned.is_some() || e.times_applied > 0
        } else {
            !e.team.is_empty()
        }
    });
}

pub fn log_entry(e: &LogEntry) -> String {
    let kind = e.kind.map_or("?".to_string(), |k| k.to_string());
    let mut text = format!("{} ({kind}): {}\n", e.id, e.title);
    if let Some(pin) = &e.pinned {
        let _ = writeln!(text, "Pinned: {pin}");
    }
    if e.times_applied > 0 || e.effectiveness.is_some() {
        let _ = writeln!(
            text,
            "Applied: {} time(s), effectiveness {}",
            e.times_applied,
            e.effectiveness
                .map_or("-".to_string(), |v| format!("{v:.2}"))
        );
    }
    if !e.team.is_empty() {
        text.push_str("Team (verdicts shared in the repository's .memd/learned):\n");
        for t in &e.team {
            let _ = writeln!(
                text,
                "  {} {}{}: {} verdict(s), relevant {:.1} / irrelevant {:.1}",
                t.repo,
                t.member,
                if t.own { " (you)" } else { "" },
                t.verdicts,
                t.relevant,
                t.irrelevant
            );
        }
    }
    if e.tags.is_empty() {
        return text;
    }
    text.push_str("Tags:\n");
    let width = e
        .tags
        .iter()
        .map(|t| t.tag.chars().count())
        .max()
        .unwrap_or(0);
    for t in &e.tags {
        let mut held = if t.held > 0 {
            format!("  held back from {} prompt(s) since", t.held)
        } else {
            String::new()
        };
        if t.trial {
            let _ = write!(
                held,
                "  on trial (relevant since filtered; {} more relevant to confirm)",
                t.to_confirm.max(1)
            );
        }
        let _ = writeln!(
            text,
            "  {:<width$}  {:+.3}  (+{}/-{}){held}",
            t.tag, t.score, t.positive, t.negative
        );
    }
    if e.tags.iter().any(|t| t.tag.starts_with('~')) {
        text.push_str(
            "  (~tag: on prompts it matched only in passing, from the verdicts on those and on strong matches)\n",
        );
    }
    if e.tags
        .iter()
        .any(|t| t.tag.trim_start_matches('~').starts_with('@'))
    {
        text.push_str(
            "  (@context: its own record in the context of these tags, which decides there once it has 3 judged sessions)\n",
        );
    }
    text
}

/// When a call was, from now.
fn ago(at: i64) -> String {
    let secs = (crate::activity::now() - at).max(0);
    match secs {
        0..=119 => format!("{secs} s ago"),
        120..=7199 => format!("{} min ago", secs / 60),
        _ => format!("{} h ago", secs / 3600),
    }
}

fn hook_line(call: &HookCall) -> String {
    format!("{call}, {}", ago(call.at))
}

/// The hook calls that found no daemon, kept by the hooks themselves.
pub fn local_hook_failures(calls: &[HookCall]) {
    if calls.is_empty() {
        return;
    }
    outln!("hook calls memd did not answer (kept by the hooks):");
    for call in calls {
        outln!("  {}", hook_line(call));
    }
}

fn print_status(s: &StatusReport) {
    outln!(
        "memd {} (protocol {}), pid {}, up {:.0} s",
        s.daemon_version,
        s.protocol_version,
        s.pid,
        s.uptime_secs
    );
    outln!("socket:   {}", s.socket);
    outln!("data dir: {}", s.data_dir);
    outln!(
        "config:   {}",
        s.config.as_deref().unwrap_or("(none: defaults)")
    );
    outln!("roots:");
    for r in &s.roots {
        outln!(
            "  {} [{}] {}{}",
            r.path,
            r.scope,
            r.watch,
            if r.exists { "" } else { " (missing)" }
        );
    }
    let total: u64 = s.items.values().sum();
    let per_kind: Vec<String> = s.items.iter().map(|(k, n)| format!("{k} {n}")).collect();
    outln!("files:    {} ({} ignored)", s.files, s.ignored_files.len());
    outln!("items:    {total} ({})", per_kind.join(", "));
    outln!(
        "start-up: {} from the store, {} parsed, in {:.1} ms",
        s.startup.from_store,
        s.startup.parsed,
        s.startup.millis
    );
    outln!(
        "semantic: {}",
        s.semantic
            .as_deref()
            .unwrap_or("off (lexical matching only)")
    );
    if let Some(r) = &s.last_reindex {
        outln!(
            "last reindex: {} ({} parsed, {} removed, {:.1} ms)",
            r.at,
            r.parsed,
            r.removed,
            r.millis
        );
    }
    let l = &s.query_latency;
    outln!(
        "queries:  {} (p50 {:.0} µs, p90 {:.0} µs, p99 {:.0} µs, max {:.0} µs)",
        l.count,
        l.p50_us,
        l.p90_us,
        l.p99_us,
        l.max_us
    );
    if s.hooks.is_empty() {
        outln!("hooks:    no calls since memd started");
    } else {
        outln!("hooks (last call of each):");
        for call in &s.hooks {
            outln!("  {}", hook_line(call));
        }
    }
    if !s.hook_failures.is_empty() {
        outln!("hook failures:");
        for call in &s.hook_failures {
            outln!("  {}", hook_line(call));
        }
    }
    outln!(
        "sessions: {}; pending evaluations: {}; showings waiting to be recorded: {}{}",
        s.sessions,
        s.pending_evaluations,
        s.recorder.waiting,
        if s.recorder.dropped > 0 {
            format!(
                " ({} dropped: the recorder fell behind)",
                s.recorder.dropped
            )
        } else {
            String::new()
        }
    );
    outln!("judge:    {}", judge_line(&s.judge));
    if s.errors.is_empty() {
        outln!("errors:   none");
    } else {
        outln!("errors:");
        for e in &s.errors {
            outln!("  {e}");
        }
    }
    for i in &s.ignored_files {
        outln!("ignored:  {i}");
    }
    for r in &s.refused_projects {
        outln!("not loaded: {r}");
    }
    for t in &s.teams {
        outln!(
            "team:     {} shares its verdicts as `{}` (you: {}, teammates' verdicts x{:.2})",
            t.repo,
            t.name,
            t.member,
            t.teammate_weight
        );
        if let Some(why) = &t.error {
            outln!("  not read: {why}");
        }
        for f in &t.files {
            outln!(
                "  {}: {} events on {} items{}",
                f.file,
                f.events,
                f.items,
                if f.skipped > 0 {
                    format!(", {} lines skipped", f.skipped)
                } else {
                    String::new()
                }
            );
            for p in &f.problems {
                outln!("    skipped {p}");
            }
        }
        if let Some(n) = crate::team::uncommitted_lines(
            std::path::Path::new(&t.repo),
            std::path::Path::new(&t.member_file),
        ) {
            outln!("  your events not committed yet: {n}");
        }
        if !t.unknown_items.is_empty() {
            outln!(
                "  judged items no knowledge file defines (they move nothing): {}",
                t.unknown_items.join(", ")
            );
        }
    }
}

/// How often the judge contradicts itself, and the filter line it gives.
fn judge_line(j: &memd::protocol::JudgeNoise) -> String {
    let seen = format!(
        "{} of {} pairs of verdicts on one item in one context disagree",
        j.disagreeing, j.pairs
    );
    let across = match j.relevance_differs {
        Some(d) => format!(
            "; across two contexts {} of {} disagree: a lesson's relevance differs between two contexts {:.0}% of the time",
            j.disagreeing_across,
            j.pairs_across,
            d * 100.0
        ),
        None => String::new(),
    };
    match j.error {
        Some(e) => format!(
            "{seen}, as from a judge wrong {:.1}% of the time; filter line {:.3} (seed 001: -0.1){across}",
            e * 100.0,
            j.filter_line
        ),
        None => format!(
            "{seen}; filter line {:.3} (seed 001's, until there are enough pairs to read the judge's noise)",
            j.filter_line
        ),
    }
}
