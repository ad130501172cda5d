//! The team's verdicts, shared through the repository's git (issue 35).
//!
//! A project opts in with `.memd/team.toml`. Each verdict on an item made
//! in its sessions (the evaluator's or direct feedback) is an [`Event`],
//! one JSON line appended to `.memd/learned/<member>.jsonl`: one file per
//! member, append-only, so a `git merge` of two clones never conflicts.
//! An event holds the item id, the context it was judged in (the team's
//! repository name and the session's tags), the verdict, its weight, the
//! time, an event id and the member, and nothing else: no prompt, no
//! transcript, no path.
//!
//! Reading ([`MemberFile`]): every member's file is read line by line; a
//! line that is not an event, an event of another member, an id not after
//! the one before it (a duplicated or forged event), a time in the future,
//! a verdict or weight out of range is reported with its line and skipped,
//! and the rest is read. A file that grew is read from where reading
//! stopped; one that changed otherwise is read again. What is kept of a
//! file is a [`Tally`] per item, not its events: memory follows the items
//! and members, not the events.
//!
//! Deciding ([`TeamEvidence`]): the tallies are sums of integers (verdict
//! times weight, in thousandths), so the same files give the same
//! evidence whatever order they were read in, on every teammate's machine.
//! Each member's say on an item is what one engineer's verdicts could be
//! worth and no more: their balance (relevant against irrelevant, from
//! -1 to 1) counted for at most [`MEMBER_CAP`] verdicts. The team's evidence
//! filters an item (seed 001's line: a level below -0.1 over three
//! verdicts or more) only when at least [`MIN_MEMBERS_TO_FILTER`] members
//! lean against it: no single file filters an item for the team, and none
//! pins one (pins stay each engineer's own). It decides only where the
//! engineer's own evidence here says nothing for the item; its boost is
//! the seed's, times the teammates' weight (`teammate_weight`, default
//! [`DEFAULT_TEAMMATE_WEIGHT`]).

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use super::tag_relevance::{MIN_EVALS_FOR_FILTER, NEGATIVE_SCORE_THRESHOLD, RELEVANCE_WEIGHT};

/// The file that opts a project in, in its `.memd/`.
pub const TEAM_FILE: &str = "team.toml";
/// The directory of the members' files, in the project's `.memd/`.
pub const LEARNED_DIR: &str = "learned";
/// A teammate's verdicts count this much of one's own, by default.
pub const DEFAULT_TEAMMATE_WEIGHT: f64 = 0.5;
/// One member's verdicts on an item count for at most this many.
pub const MEMBER_CAP: f64 = 3.0;
/// Members who must lean against an item for the team to filter it.
pub const MIN_MEMBERS_TO_FILTER: usize = 2;
/// A member's file larger than this is not read (and said so).
pub const MAX_FILE_BYTES: u64 = 256 * 1024 * 1024;
/// A line longer than this is not an event.
pub const MAX_LINE_BYTES: usize = 4096;
/// How far in the future an event's time may be (clocks differ).
pub const FUTURE_SLACK_SECS: i64 = 600;
/// Problems kept per file (the count goes on).
pub const PROBLEMS_KEPT: usize = 20;

/// One verdict, as a line of a member's file.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Event {
    /// Unique: `<unix milliseconds>-<16 hex digits>`, increasing within a
    /// member's file.
    pub event: String,
    /// Who judged (their file's name, without `.jsonl`).
    pub member: String,
    /// The item judged.
    pub item: String,
    /// The repository it was judged in (the team's `name`).
    pub repo: String,
    /// The context's tags.
    pub tags: Vec<String>,
    /// -1 (irrelevant) to 1 (relevant).
    pub verdict: f64,
    /// 1.0 for the evaluator, 2.0 for direct feedback.
    pub weight: f64,
    /// Unix seconds.
    pub time: i64,
}

/// One member's evidence as it stood, replacing their older events in
/// their own file (`memctl team compact`): each item's tally.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Snapshot {
    /// Its id, in the events' order (a snapshot is an event of the file).
    pub snapshot: String,
    pub member: String,
    pub repo: String,
    /// Unix seconds.
    pub time: i64,
    /// Per item: weighted relevant and irrelevant verdicts (thousandths),
    /// and verdicts.
    pub items: BTreeMap<String, [u64; 3]>,
}

impl Snapshot {
    /// The snapshot of `file`'s tallies, after `last` (its last id).
    pub fn of(file: &MemberFile, repo: &str, now_ms: u64, random: u64) -> Snapshot {
        Snapshot {
            snapshot: next_id(file.last_id.as_deref(), now_ms, random),
            member: file.member.clone(),
            repo: repo.to_string(),
            time: (now_ms / 1000) as i64,
            items: file
                .tallies
                .iter()
                .map(|(item, t)| {
                    (
                        item.clone(),
                        [t.relevant, t.irrelevant, u64::from(t.verdicts)],
                    )
                })
                .collect(),
        }
    }
}

/// An event id's order: its milliseconds, then its hex part.
fn id_key(id: &str) -> Option<(u64, &str)> {
    let (ms, hex) = id.split_once('-')?;
    let ms: u64 = ms.parse().ok()?;
    (hex.len() == 16 && hex.bytes().all(|b| b.is_ascii_hexdigit())).then_some((ms, hex))
}

/// A new event id after `last` (the file's last), at `now_ms`.
pub fn next_id(last: Option<&str>, now_ms: u64, random: u64) -> String {
    let after = last.and_then(id_key).map_or(0, |(ms, _)| ms + 1);
    format!("{}-{random:016x}", now_ms.max(after))
}

/// A member's name as a file name: the characters git's `user.email`
/// usually has, anything else as `_`.
pub fn member_file_name(member: &str) -> String {
    let stem: String = member
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || matches!(c, '.' | '@' | '-' | '_' | '+') {
                c
            } else {
                '_'
            }
        })
        .collect();
    let stem = stem.trim_start_matches('.');
    format!("{}.jsonl", if stem.is_empty() { "member" } else { stem })
}

/// One member's verdicts on one item, summed.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Tally {
    /// Weighted relevant verdicts, in thousandths.
    pub relevant: u64,
    /// Weighted irrelevant verdicts, in thousandths.
    pub irrelevant: u64,
    /// Verdicts.
    pub verdicts: u32,
}

impl Tally {
    fn add(&mut self, verdict: f64, weight: f64) {
        let milli = (verdict.abs() * weight * 1000.0).round() as u64;
        if verdict > 0.0 {
            self.relevant += milli;
        } else {
            self.irrelevant += milli;
        }
        self.verdicts += 1;
    }

    /// Relevant against irrelevant, -1 to 1 (0 with nothing either way).
    pub fn balance(&self) -> f64 {
        let total = self.relevant + self.irrelevant;
        if total == 0 {
            0.0
        } else {
            (self.relevant as f64 - self.irrelevant as f64) / total as f64
        }
    }

    /// How many verdicts this member's say counts for.
    pub fn say(&self) -> f64 {
        f64::from(self.verdicts).min(MEMBER_CAP)
    }
}

/// A line that was skipped, and why.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Problem {
    pub line: u64,
    pub what: String,
}

/// What is kept of one member's file.
#[derive(Debug, Clone, Default)]
pub struct MemberFile {
    /// The member the file is named for.
    pub member: String,
    /// Bytes read (whole lines).
    pub offset: u64,
    /// Lines read.
    pub lines: u64,
    /// Events counted.
    pub events: u64,
    /// The last event id counted.
    pub last_id: Option<String>,
    /// The last line read, to tell an append from a rewrite.
    last_line: Vec<u8>,
    /// Per item.
    pub tallies: BTreeMap<String, Tally>,
    /// Skipped lines (the first [`PROBLEMS_KEPT`]) and the file's own.
    pub problems: Vec<Problem>,
    /// Skipped lines in all.
    pub skipped: u64,
}

/// How a file's new bytes relate to what was read of it.
#[derive(Debug, PartialEq, Eq)]
pub enum Growth {
    /// Only appended to: read from the offset.
    Appended,
    /// Changed otherwise: read it all again.
    Rewritten,
}

impl MemberFile {
    pub fn new(member: &str) -> MemberFile {
        MemberFile {
            member: member.to_string(),
            ..MemberFile::default()
        }
    }

    /// Where to read the file from to go on: the start of the last line
    /// read, which must still be there for the file to have only grown.
    pub fn resume_at(&self) -> u64 {
        self.offset - self.last_line.len() as u64
    }

    /// Whether `bytes`, the file from [`MemberFile::resume_at`] on, only
    /// add to what was read.
    pub fn growth(&self, bytes: &[u8]) -> Growth {
        if bytes.starts_with(&self.last_line) {
            Growth::Appended
        } else {
            Growth::Rewritten
        }
    }

    /// Counts the complete lines of the file that follow what was read;
    /// `bytes` is the file from `from` on, where `from` is 0 or
    /// [`MemberFile::resume_at`]. Returns false when the file changed
    /// otherwise than by growing and `from` is not 0: read it again from
    /// the start. `now` is the time in Unix seconds.
    pub fn read(&mut self, from: u64, bytes: &[u8], repo: &str, now: i64) -> bool {
        let skip = if from == 0 {
            *self = MemberFile::new(&self.member);
            0
        } else if from == self.resume_at() && self.growth(bytes) == Growth::Appended {
            self.last_line.len()
        } else {
            return false;
        };
        let rest = &bytes[skip..];
        let complete = rest.iter().rposition(|&b| b == b'\n').map_or(0, |i| i + 1);
        for line in rest[..complete].split_inclusive(|&b| b == b'\n') {
            self.lines += 1;
            self.last_line = line.to_vec();
            let text = &line[..line.len() - 1];
            if text.iter().all(u8::is_ascii_whitespace) {
                continue;
            }
            if let Err(what) = self.count(text, repo, now) {
                self.skip(what);
            }
        }
        self.offset += complete as u64;
        true
    }

    fn skip(&mut self, what: String) {
        self.skipped += 1;
        if self.problems.len() < PROBLEMS_KEPT {
            self.problems.push(Problem {
                line: self.lines,
                what,
            });
        }
    }

    /// Records a problem of the whole file.
    pub fn refuse(&mut self, what: String) {
        *self = MemberFile::new(&self.member);
        self.problems.push(Problem { line: 0, what });
    }

    fn count(&mut self, text: &[u8], repo: &str, now: i64) -> Result<(), String> {
        if text.len() > MAX_LINE_BYTES {
            return Err(format!("longer than {MAX_LINE_BYTES} bytes"));
        }
        let event: Event = match serde_json::from_slice(text) {
            Ok(event) => event,
            Err(e) => match serde_json::from_slice::<Snapshot>(text) {
                Ok(snapshot) => return self.restore(snapshot, repo, now),
                Err(_) => return Err(format!("not an event: {e}")),
            },
        };
        if event.member != self.member {
            return Err(format!(
                "an event of `{}` in {}'s file",
                event.member, self.member
            ));
        }
        let Some(key) = id_key(&event.event) else {
            return Err(format!("`{}` is not an event id", event.event));
        };
        if let Some(last) = self.last_id.as_deref().and_then(id_key) {
            if key <= last {
                return Err(format!(
                    "event `{}` is not after the one before it (duplicated or forged)",
                    event.event
                ));
            }
        }
        if event.time > now + FUTURE_SLACK_SECS {
            return Err(format!("event `{}` is dated in the future", event.event));
        }
        if event.repo != repo {
            return Err(format!(
                "event `{}` is of the repository `{}`, not `{repo}`",
                event.event, event.repo
            ));
        }
        let in_range = event.verdict.is_finite()
            && (-1.0..=1.0).contains(&event.verdict)
            && event.verdict != 0.0
            && event.weight.is_finite()
            && event.weight > 0.0
            && event.weight <= 2.0;
        if !in_range {
            return Err(format!(
                "event `{}` has a verdict or weight out of range",
                event.event
            ));
        }
        if event.item.is_empty() || event.item.len() > 256 {
            return Err(format!("event `{}` has no usable item id", event.event));
        }
        self.tallies
            .entry(event.item)
            .or_default()
            .add(event.verdict, event.weight);
        self.last_id = Some(event.event);
        self.events += 1;
        Ok(())
    }
}

impl MemberFile {
    /// A snapshot line: the member's tallies are what it says, from here.
    fn restore(&mut self, s: Snapshot, repo: &str, now: i64) -> Result<(), String> {
        if s.member != self.member {
            return Err(format!(
                "a snapshot of `{}` in {}'s file",
                s.member, self.member
            ));
        }
        let Some(key) = id_key(&s.snapshot) else {
            return Err(format!("`{}` is not an event id", s.snapshot));
        };
        if self
            .last_id
            .as_deref()
            .and_then(id_key)
            .is_some_and(|last| key <= last)
        {
            return Err(format!(
                "snapshot `{}` is not after the event before it (duplicated or forged)",
                s.snapshot
            ));
        }
        if s.time > now + FUTURE_SLACK_SECS || s.repo != repo {
            return Err(format!(
                "snapshot `{}` is dated in the future or of another repository",
                s.snapshot
            ));
        }
        if s.items.keys().any(|i| i.is_empty() || i.len() > 256)
            || s.items
                .values()
                .any(|[_, _, n]| *n == 0 || *n > u64::from(u32::MAX))
        {
            return Err(format!("snapshot `{}` has an unusable item", s.snapshot));
        }
        self.tallies = s
            .items
            .into_iter()
            .map(|(item, [relevant, irrelevant, verdicts])| {
                (
                    item,
                    Tally {
                        relevant,
                        irrelevant,
                        verdicts: verdicts as u32,
                    },
                )
            })
            .collect();
        self.events = self.tallies.values().map(|t| u64::from(t.verdicts)).sum();
        self.last_id = Some(s.snapshot);
        Ok(())
    }
}

/// What the team's files say about one item, summed up once when the
/// files change ([`Team::refresh`]).
#[derive(Debug, Clone, Default, PartialEq)]
pub struct TeamEvidence {
    /// Each member's tally, by member.
    pub members: Vec<(String, Tally)>,
    level: f64,
    evals: f64,
    against: usize,
}

/// What the team's evidence does to an item.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum TeamVerdict {
    /// At least two members lean against it, over the seed's line.
    Filtered,
    /// Kept, with this added to its ranking score.
    Boost(f64),
}

impl TeamEvidence {
    /// The evidence of these members' tallies.
    pub fn new(members: Vec<(String, Tally)>) -> TeamEvidence {
        let (sum, says) = members.iter().fold((0.0, 0.0), |(sum, says), (_, t)| {
            (sum + t.balance() * t.say(), says + t.say())
        });
        TeamEvidence {
            level: if says > 0.0 { sum / says } else { 0.0 },
            evals: says,
            against: members.iter().filter(|(_, t)| t.balance() < 0.0).count(),
            members,
        }
    }

    /// The members' balances, each counted for its [`Tally::say`].
    pub fn level(&self) -> f64 {
        self.level
    }

    /// Verdicts behind it, each member's counted up to [`MEMBER_CAP`].
    pub fn evals(&self) -> f64 {
        self.evals
    }

    /// Members whose verdicts lean against the item.
    pub fn against(&self) -> usize {
        self.against
    }

    /// Seed 001's filter line over the team's evidence, when two members
    /// or more lean against it; else the seed's boost times `weight`.
    pub fn verdict(&self, weight: f64) -> TeamVerdict {
        let level = self.level();
        if level < NEGATIVE_SCORE_THRESHOLD
            && self.evals() >= MIN_EVALS_FOR_FILTER
            && self.against() >= MIN_MEMBERS_TO_FILTER
        {
            TeamVerdict::Filtered
        } else {
            TeamVerdict::Boost(level / 3.0 * RELEVANCE_WEIGHT * weight)
        }
    }
}

/// A project's team: its settings and its members' files.
#[derive(Debug, Clone, Default)]
pub struct Team {
    /// The repository's name, as events record it.
    pub name: String,
    /// This engineer's member name, as their file names it
    /// ([`member_file_name`]).
    pub member: String,
    /// A teammate's verdicts count this much of one's own.
    pub teammate_weight: f64,
    /// Why the project's `team.toml` or `learned/` could not be read.
    pub error: Option<String>,
    /// Each member's file, by file name.
    pub files: BTreeMap<String, MemberFile>,
    /// The [`crate::scoring::lesson::spread_of`] of every item some member
    /// judged ([`Team::refresh`]), for a query to pass over the others.
    pub spreads: rustc_hash::FxHashSet<u64>,
    /// Each judged item's evidence ([`Team::refresh`]).
    by_item: rustc_hash::FxHashMap<String, std::sync::Arc<TeamEvidence>>,
}

impl Team {
    /// A team named `name` as `member` sees it, none of its files read.
    pub fn new(name: &str, member: &str, teammate_weight: f64) -> Team {
        Team {
            name: name.to_string(),
            member: member.to_string(),
            teammate_weight,
            ..Team::default()
        }
    }

    /// A team whose settings could not be read, and why.
    pub fn broken(why: String) -> Team {
        Team {
            error: Some(why),
            ..Team::default()
        }
    }

    /// What the team's files say about `item` (`None`: nothing).
    pub fn evidence(&self, item: &str) -> Option<std::sync::Arc<TeamEvidence>> {
        self.by_item.get(item).cloned()
    }

    /// Recomputes what is derived from the files, after they changed: each
    /// judged item's evidence, and the spreads.
    pub fn refresh(&mut self) {
        let mut members: rustc_hash::FxHashMap<&str, Vec<(String, Tally)>> = Default::default();
        for f in self.files.values() {
            for (item, tally) in &f.tallies {
                members
                    .entry(item.as_str())
                    .or_default()
                    .push((f.member.clone(), *tally));
            }
        }
        let by_item = members
            .into_iter()
            .map(|(item, m)| (item.to_string(), std::sync::Arc::new(TeamEvidence::new(m))))
            .collect();
        self.by_item = by_item;
        self.spreads = self
            .by_item
            .keys()
            .map(|id| crate::scoring::lesson::spread_of(id))
            .collect();
    }

    /// Every item some member judged.
    pub fn items(&self) -> impl Iterator<Item = &String> {
        self.files.values().flat_map(|f| f.tallies.keys())
    }

    /// Events counted, over every file.
    pub fn events(&self) -> u64 {
        self.files.values().map(|f| f.events).sum()
    }
}

/// The settings in `.memd/team.toml`.
#[derive(Debug, Clone, Deserialize, Serialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct TeamFile {
    pub team: TeamSettings,
}

#[derive(Debug, Clone, Deserialize, Serialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct TeamSettings {
    /// The repository's name, the same in every clone.
    pub name: String,
    /// A teammate's verdicts count this much of one's own (0 to 1).
    #[serde(default = "default_teammate_weight")]
    pub teammate_weight: f64,
}

fn default_teammate_weight() -> f64 {
    DEFAULT_TEAMMATE_WEIGHT
}

#[cfg(test)]
mod tests {
    use super::*;

    fn line(member: &str, id: &str, item: &str, verdict: f64, weight: f64) -> String {
        serde_json::to_string(&Event {
            event: id.into(),
            member: member.into(),
            item: item.into(),
            repo: "svc".into(),
            tags: vec!["python".into()],
            verdict,
            weight,
            time: 1_000,
        })
        .unwrap()
            + "\n"
    }

    fn id(ms: u64) -> String {
        format!("{ms}-{:016x}", ms * 7)
    }

    #[test]
    fn a_file_is_read_incrementally_and_bad_lines_are_skipped_with_their_line() {
        let mut f = MemberFile::new("ann");
        let mut text = line("ann", &id(1), "L-1", -1.0, 1.0);
        text += "{not json\n";
        text += &line("bob", &id(2), "L-1", -1.0, 1.0);
        text += &line("ann", &id(1), "L-1", -1.0, 1.0); // duplicated
        text += &line("ann", &id(3), "L-2", 1.0, 2.0);
        text += "{\"partial"; // no newline yet
        assert!(f.read(0, text.as_bytes(), "svc", 2_000));
        assert_eq!(f.events, 2);
        assert_eq!(f.lines, 5);
        assert_eq!(
            f.problems.iter().map(|p| p.line).collect::<Vec<_>>(),
            [2, 3, 4]
        );
        assert!(f.problems[2].what.contains("duplicated"));
        assert_eq!(
            f.tallies["L-1"],
            Tally {
                relevant: 0,
                irrelevant: 1000,
                verdicts: 1
            }
        );
        // Appended: only the new lines are read.
        let before = text.rfind("{\"partial").unwrap();
        let mut grown = text[..before].to_string();
        grown += &line("ann", &id(4), "L-1", -1.0, 2.0);
        let from = f.resume_at();
        assert_eq!(
            from,
            f.offset - line("ann", &id(3), "L-2", 1.0, 2.0).len() as u64
        );
        assert!(f.read(from, &grown.as_bytes()[from as usize..], "svc", 2_000));
        assert_eq!(f.events, 3);
        assert_eq!(f.tallies["L-1"].irrelevant, 3000);
        // Rewritten (a compaction, a reset): read again from the start.
        let rewritten =
            line("ann", &id(9), "L-3", 1.0, 1.0) + &line("ann", &id(10), "L-3", 1.0, 1.0);
        let from = f.resume_at() as usize;
        assert!(!f.read(
            from as u64,
            rewritten.as_bytes().get(from..).unwrap_or(&[]),
            "svc",
            2_000
        ));
        assert!(f.read(0, rewritten.as_bytes(), "svc", 2_000));
        assert_eq!(f.events, 2);
        assert!(f.tallies.contains_key("L-3") && !f.tallies.contains_key("L-1"));
    }

    #[test]
    fn future_foreign_and_out_of_range_events_are_skipped() {
        let mut f = MemberFile::new("ann");
        let mut future = Event {
            event: id(1),
            member: "ann".into(),
            item: "L-1".into(),
            repo: "svc".into(),
            tags: vec![],
            verdict: -1.0,
            weight: 1.0,
            time: 10_000,
        };
        let mut text = serde_json::to_string(&future).unwrap() + "\n";
        future.time = 1;
        future.event = id(2);
        future.repo = "other".into();
        text += &(serde_json::to_string(&future).unwrap() + "\n");
        text += &line("ann", &id(3), "L-1", -5.0, 1.0);
        text += &line("ann", &id(4), "L-1", -1.0, 50.0);
        text += "{\"event\":\"5-0000000000000005\",\"member\":\"ann\",\"item\":\"L-1\",\"repo\":\"svc\",\"tags\":[],\"verdict\":-1,\"weight\":1,\"time\":1,\"prompt\":\"secret\"}\n";
        assert!(f.read(0, text.as_bytes(), "svc", 1_000));
        assert_eq!(f.events, 0);
        assert_eq!(f.skipped, 5);
        assert!(f.problems[0].what.contains("future"), "{:?}", f.problems);
        assert!(f.problems[1].what.contains("repository"));
        assert!(f.problems[4].what.contains("unknown field"));
    }

    #[test]
    fn one_member_never_filters_for_the_team_two_can() {
        let mut ann = MemberFile::new("ann");
        let mut text = String::new();
        for ms in 1..=50 {
            text += &line("ann", &id(ms), "L-1", -1.0, 2.0);
        }
        ann.read(0, text.as_bytes(), "svc", 1_000);
        let mut team = Team::new("svc", "ann", DEFAULT_TEAMMATE_WEIGHT);
        team.files.insert("ann.jsonl".to_string(), ann);
        team.refresh();
        let alone = team.evidence("L-1").unwrap();
        assert_eq!(alone.evals(), MEMBER_CAP, "fifty verdicts count for three");
        assert!(matches!(alone.verdict(0.5), TeamVerdict::Boost(b) if b < 0.0));
        let mut bob = MemberFile::new("bob");
        bob.read(
            0,
            line("bob", &id(7), "L-1", -1.0, 1.0).as_bytes(),
            "svc",
            1_000,
        );
        team.files.insert("bob.jsonl".into(), bob);
        team.refresh();
        let both = team.evidence("L-1").unwrap();
        assert_eq!(both.against(), 2);
        assert_eq!(both.verdict(0.5), TeamVerdict::Filtered);
    }

    #[test]
    fn the_same_files_give_the_same_evidence_in_any_order() {
        let mut a = MemberFile::new("ann");
        let text = line("ann", &id(1), "L-1", 0.3, 1.0)
            + &line("ann", &id(2), "L-1", -0.7, 2.0)
            + &line("ann", &id(3), "L-1", 0.1, 1.0);
        a.read(0, text.as_bytes(), "svc", 1_000);
        let mut b = MemberFile::new("ann");
        let cut = text.find('\n').unwrap() + 1;
        b.read(0, &text.as_bytes()[..cut], "svc", 1_000);
        let from = b.resume_at();
        assert!(b.read(from, &text.as_bytes()[from as usize..], "svc", 1_000));
        assert_eq!(a.tallies, b.tallies);
    }

    #[test]
    fn a_snapshot_keeps_the_tallies_and_later_events_add_to_them() {
        let mut before = MemberFile::new("ann");
        let text = line("ann", &id(1), "L-1", -1.0, 2.0)
            + &line("ann", &id(2), "L-1", 1.0, 1.0)
            + &line("ann", &id(3), "L-2", -0.5, 1.0);
        before.read(0, text.as_bytes(), "svc", 2_000);
        let snapshot = Snapshot::of(&before, "svc", 4, 9);
        assert_eq!(snapshot.snapshot, "4-0000000000000009");
        let compacted = serde_json::to_string(&snapshot).unwrap() + "\n";
        let mut after = MemberFile::new("ann");
        after.read(0, compacted.as_bytes(), "svc", 2_000);
        assert_eq!(
            (after.tallies.clone(), after.events),
            (before.tallies.clone(), 3)
        );
        assert!(after.problems.is_empty());
        let grown = compacted.clone() + &line("ann", &id(5), "L-2", -1.0, 1.0);
        let from = after.resume_at();
        after.read(from, &grown.as_bytes()[from as usize..], "svc", 2_000);
        assert_eq!(after.tallies["L-2"].verdicts, 2);
        // Another member's snapshot in this file is skipped.
        let mut bob = MemberFile::new("bob");
        bob.read(0, compacted.as_bytes(), "svc", 2_000);
        assert!(bob.tallies.is_empty() && bob.problems[0].what.contains("snapshot of `ann`"));
    }

    #[test]
    fn ids_increase_and_names_are_file_safe() {
        let first = next_id(None, 5, 1);
        assert_eq!(first, "5-0000000000000001");
        // A clock that went back still gives a later id.
        assert_eq!(next_id(Some(&first), 3, 2), "6-0000000000000002");
        assert_eq!(member_file_name("ann@example.com"), "ann@example.com.jsonl");
        assert_eq!(member_file_name("../x y"), "_x_y.jsonl");
        assert_eq!(member_file_name(""), "member.jsonl");
    }
}
