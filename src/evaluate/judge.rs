//! Judges: whether each item shown in a session was relevant to it. A raw
//! score in [-1, 1] per item, or none when the judge cannot tell.
//!
//! - The built-in judge needs no network: it looks in what the agent did
//!   after the item was shown (its replies, its tool calls and their
//!   inputs, its edits: the assistant's side of the transcript, from the
//!   prompt that showed the item on) for the item's topic (its title's
//!   terms) and its advice (the solution, fix or instead's terms). The
//!   user's prompts, tool outputs, memd's injected block and the agent's
//!   work before the item was shown are never evidence: the items were
//!   chosen because they match the prompt, so the prompt would confirm
//!   every one of them.
//! - A command judge (an LLM CLI, say) gets one JSON document on stdin and
//!   answers JSON scores on stdout, within a timeout.

use std::collections::{BTreeMap, HashSet};
use std::io::{Read, Write};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use serde::{Deserialize, Serialize};

use crate::knowledge::{Body, Item};
use crate::text::tokenize::terms;

/// Topic terms present at or above this share: relevant.
pub const TOPIC_EVIDENCE: f64 = 0.5;
/// Advice terms present at or above this share: relevant.
pub const ADVICE_EVIDENCE: f64 = 0.4;
/// Below this share of both: irrelevant (the topic never came up).
pub const NO_EVIDENCE: f64 = 0.15;

/// An item as a judge sees it.
#[derive(Debug, Clone, Serialize)]
pub struct ShownItem {
    pub id: String,
    pub kind: String,
    pub title: String,
    pub advice: String,
}

impl ShownItem {
    /// The item's topic and advice.
    pub fn of(item: &Item) -> ShownItem {
        let (title, advice): (&str, String) = match &item.body {
            Body::Pattern(p) => (&p.name, format!("{} {}", p.problem, p.solution)),
            Body::AntiPattern(a) => (&a.name, a.instead.clone()),
            Body::Gotcha(g) => (&g.title, g.fix.clone()),
            Body::Experience(e) => (&e.text, e.detail.clone().unwrap_or_default()),
            Body::Lesson(l) => (&l.text, String::new()),
            Body::Learning(l) => (
                &l.title,
                l.suggested_action
                    .clone()
                    .unwrap_or_else(|| l.description.clone()),
            ),
            Body::Observation(o) => (&o.content, String::new()),
            Body::Exemplar(e) => (&e.content, String::new()),
            Body::Seed(s) => (&s.hook, String::new()),
        };
        ShownItem {
            id: item.id.clone(),
            kind: item.kind().to_string(),
            title: title.to_string(),
            advice,
        }
    }
}

/// What a judge is given.
#[derive(Debug, Clone, Serialize)]
pub struct JudgeInput<'a> {
    pub session_id: &'a str,
    pub tags: &'a [String],
    pub repo: Option<&'a str>,
    /// The new part of the transcript, as `role: text` lines.
    pub transcript: &'a str,
    /// What the agent did after each item (in `items`' order) was shown:
    /// the assistant's turns after the prompt that showed it. The built-in
    /// judge reads this; a command judge gets the whole transcript.
    #[serde(skip)]
    pub work: &'a [&'a str],
    pub items: &'a [ShownItem],
}

/// What a command judge answers: `{"scores": {"ID": -1.0..1.0}}`.
#[derive(Debug, Deserialize)]
struct JudgeOutput {
    scores: BTreeMap<String, f64>,
}

/// A judge.
#[derive(Debug, Clone)]
pub enum Judge {
    /// Evidence in the transcript.
    Builtin,
    /// An external command.
    Command {
        argv: Vec<String>,
        timeout: Duration,
    },
}

impl Judge {
    /// Whether an item left out of an answer was judged and found neither
    /// way (the built-in judge) rather than forgotten (a command judge must
    /// answer for every item; what it leaves out stays pending).
    pub fn abstains(&self) -> bool {
        matches!(self, Judge::Builtin)
    }

    /// Scores each item; items missing from the result were not judged
    /// (see [`Judge::abstains`]). A command judge's answer may name ids it
    /// was not shown: the evaluation reports and ignores them.
    pub fn judge(&self, input: &JudgeInput<'_>) -> Result<BTreeMap<String, f64>, String> {
        match self {
            Judge::Builtin => Ok(builtin(input)),
            Judge::Command { argv, timeout } => command(argv, *timeout, input),
        }
    }
}

fn share(wanted: &HashSet<String>, present: &HashSet<String>) -> f64 {
    if wanted.is_empty() {
        return 0.0;
    }
    wanted.intersection(present).count() as f64 / wanted.len() as f64
}

/// The built-in judge: +1 when the topic or the advice shows up in what
/// the agent did, -1 when neither does, nothing in between.
pub fn builtin(input: &JudgeInput<'_>) -> BTreeMap<String, f64> {
    let mut seen: Vec<(&str, HashSet<String>)> = Vec::new();
    let mut scores = BTreeMap::new();
    for (i, item) in input.items.iter().enumerate() {
        let work = input.work.get(i).copied().unwrap_or_default();
        let at = match seen.iter().position(|(w, _)| *w == work) {
            Some(at) => at,
            None => {
                seen.push((work, terms(work).into_iter().collect()));
                seen.len() - 1
            }
        };
        let present = &seen[at].1;
        let topic: HashSet<String> = terms(&item.title).into_iter().collect();
        let advice: HashSet<String> = terms(&item.advice).into_iter().collect();
        let (t, a) = (share(&topic, present), share(&advice, present));
        if t >= TOPIC_EVIDENCE || a >= ADVICE_EVIDENCE {
            scores.insert(item.id.clone(), 1.0);
        } else if t < NO_EVIDENCE && a < NO_EVIDENCE {
            scores.insert(item.id.clone(), -1.0);
        }
    }
    scores
}

/// After the judge exits, how long its output may stay open (a process it
/// left behind holding it) before the judge's process group is killed.
const LEFTOVER_GRACE: Duration = Duration::from_millis(500);
/// Most of a judge's stderr quoted in an error.
const STDERR_QUOTED: usize = 2000;

/// Kills the judge's whole process group (it was started as its leader).
fn kill_group(child: &mut std::process::Child) {
    if let Ok(pid) = i32::try_from(child.id()) {
        // SAFETY: kill(2) with a negative pid signals the process group the
        // judge leads; it touches no memory of ours.
        unsafe {
            libc::kill(-pid, libc::SIGKILL);
        }
    }
    let _ = child.kill();
}

/// Reads a pipe to its end on a thread; the bytes arrive on the channel.
fn drain(mut pipe: impl Read + Send + 'static) -> std::sync::mpsc::Receiver<Vec<u8>> {
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        let mut out = Vec::new();
        let _ = pipe.read_to_end(&mut out);
        let _ = tx.send(out);
    });
    rx
}

/// Runs the judge in a process group of its own, feeding stdin and reading
/// stdout and stderr at once (so a judge that writes a lot to stderr before
/// answering never stalls on a full pipe). At the deadline, or when the
/// judge has exited but something it started still holds its output, the
/// whole group is killed: `evaluate` never waits past the timeout.
fn command(
    argv: &[String],
    timeout: Duration,
    input: &JudgeInput<'_>,
) -> Result<BTreeMap<String, f64>, String> {
    use std::os::unix::process::CommandExt;

    let (program, args) = argv.split_first().ok_or("the judge command is empty")?;
    let mut child = Command::new(program)
        .args(args)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .process_group(0)
        .spawn()
        .map_err(|e| format!("cannot run the judge `{program}`: {e}"))?;
    let document = serde_json::to_vec(input).map_err(|e| e.to_string())?;
    let mut stdin = child.stdin.take().ok_or("no stdin")?;
    std::thread::spawn(move || {
        let _ = stdin.write_all(&document);
    });
    let stdout = drain(child.stdout.take().ok_or("no stdout")?);
    let stderr = drain(child.stderr.take().ok_or("no stderr")?);
    let deadline = Instant::now() + timeout;
    let status = loop {
        match child.try_wait().map_err(|e| e.to_string())? {
            Some(status) => break status,
            None if Instant::now() >= deadline => {
                kill_group(&mut child);
                let _ = child.wait();
                return Err(format!(
                    "the judge did not answer within {} s (its process group was killed)",
                    timeout.as_secs_f64()
                ));
            }
            None => std::thread::sleep(Duration::from_millis(5)),
        }
    };
    let grace = deadline
        .saturating_duration_since(Instant::now())
        .min(LEFTOVER_GRACE);
    let out = match stdout.recv_timeout(grace) {
        Ok(out) => out,
        Err(_) => {
            // The judge is gone but its output is still open: whatever it
            // left running is killed, and what it wrote is read.
            kill_group(&mut child);
            stdout.recv_timeout(LEFTOVER_GRACE).unwrap_or_default()
        }
    };
    if !status.success() {
        let err = stderr.recv_timeout(LEFTOVER_GRACE).unwrap_or_default();
        let err = String::from_utf8_lossy(&err);
        let err = err.trim();
        let tail: String = err
            .chars()
            .skip(err.chars().count().saturating_sub(STDERR_QUOTED))
            .collect();
        return Err(format!("the judge failed ({status}): {tail}"));
    }
    let parsed: JudgeOutput = serde_json::from_slice(&out)
        .map_err(|e| format!("the judge's answer is not {{\"scores\": {{id: number}}}}: {e}"))?;
    // Ids it was not shown are kept: the evaluation reports them.
    Ok(parsed
        .scores
        .into_iter()
        .filter(|(_, score)| score.is_finite())
        .map(|(id, score)| (id, score.clamp(-1.0, 1.0)))
        .collect())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn item(id: &str, title: &str, advice: &str) -> ShownItem {
        ShownItem {
            id: id.into(),
            kind: "gotcha".into(),
            title: title.into(),
            advice: advice.into(),
        }
    }

    #[test]
    fn builtin_finds_evidence_and_its_absence() {
        let items = [
            item(
                "G-6",
                "Postgres unique violations surface as error 23505",
                "Catch code 23505 to detect duplicates",
            ),
            item(
                "G-13",
                "Safari caches 301 redirects forever",
                "Use 302 while a redirect is being tested",
            ),
            item(
                "G-2",
                "Port conflicts between dev servers",
                "ports registry file lists them",
            ),
        ];
        let transcript = "assistant: the duplicate insert raised Postgres error 23505; I catch code 23505 now.\nuser: services on port 3000";
        let input = JudgeInput {
            session_id: "s",
            tags: &[],
            repo: None,
            transcript,
            work: &["the duplicate insert raised Postgres error 23505; I catch code 23505 now. services on port 3000"; 3],
            items: &items,
        };
        let scores = builtin(&input);
        assert_eq!(scores.get("G-6"), Some(&1.0));
        assert_eq!(scores.get("G-13"), Some(&-1.0));
        assert_eq!(
            scores.get("G-2"),
            None,
            "some evidence, not enough: no judgement"
        );
    }

    #[test]
    fn the_prompt_alone_confirms_nothing() {
        let items = [item(
            "L-7",
            "Expired tokens in server handlers",
            "Refresh the token before retrying the handler",
        )];
        let verdict = |work: &str| {
            builtin(&JudgeInput {
                session_id: "s",
                tags: &[],
                repo: None,
                transcript:
                    "user: review server handlers, we keep getting expired tokens\nassistant: ok",
                work: &[work],
                items: &items,
            })
            .get("L-7")
            .copied()
        };
        // The agent answered "ok": the prompt's words are no evidence.
        assert_eq!(verdict("ok"), Some(-1.0));
        // The agent's own work on the topic is.
        assert_eq!(
            verdict("[Edit] refresh the expired token in server handlers before retrying"),
            Some(1.0)
        );
    }

    #[test]
    fn a_command_judge_is_fed_json_and_its_failures_are_reported() {
        let items = [item("A", "x", "y"), item("B", "x", "y")];
        let input = plain(&items);
        let echo = Judge::Command {
            argv: vec![
                "sh".into(),
                "-c".into(),
                r#"cat > /dev/null; echo '{"scores": {"A": 0.5, "B": -3, "Z": 1}}'"#.into(),
            ],
            timeout: Duration::from_secs(10),
        };
        let scores = echo.judge(&input).unwrap();
        assert_eq!(scores.get("A"), Some(&0.5));
        assert_eq!(scores.get("B"), Some(&-1.0), "clamped");
        assert_eq!(
            scores.get("Z"),
            Some(&1.0),
            "left for the evaluation to report"
        );
        let bad = Judge::Command {
            argv: vec!["sh".into(), "-c".into(), "echo nope".into()],
            timeout: Duration::from_secs(10),
        };
        assert!(bad.judge(&input).unwrap_err().contains("not {\"scores\""));
        let failing = Judge::Command {
            argv: vec!["sh".into(), "-c".into(), "echo oops >&2; exit 3".into()],
            timeout: Duration::from_secs(10),
        };
        assert!(failing.judge(&input).unwrap_err().contains("oops"));
        let slow = Judge::Command {
            argv: vec!["sleep".into(), "5".into()],
            timeout: Duration::from_millis(200),
        };
        assert!(slow.judge(&input).unwrap_err().contains("did not answer"));
    }

    /// A judge's input with nothing but the items.
    fn plain(items: &[ShownItem]) -> JudgeInput<'_> {
        JudgeInput {
            session_id: "s",
            tags: &[],
            repo: None,
            transcript: "t",
            work: &[],
            items,
        }
    }

    fn sh(script: &str, timeout: Duration) -> Judge {
        Judge::Command {
            argv: vec!["sh".into(), "-c".into(), script.into()],
            timeout,
        }
    }

    #[test]
    fn a_judge_that_writes_much_to_stderr_before_answering_is_heard() {
        let items = [item("A", "x", "y")];
        let input = plain(&items);
        // 200 KiB on stderr, three pipes' worth, before the answer.
        let chatty = sh(
            r#"cat > /dev/null; head -c 204800 /dev/zero | tr '\0' x >&2; echo '{"scores": {"A": 1}}'"#,
            Duration::from_secs(20),
        );
        assert_eq!(chatty.judge(&input).unwrap().get("A"), Some(&1.0));
    }

    #[test]
    fn a_judge_that_leaves_a_process_holding_its_output_does_not_hold_evaluate() {
        let items = [item("A", "x", "y")];
        let input = plain(&items);
        // Answers, then leaves a sleeper that keeps stdout open for 60 s.
        let leaky = sh(
            r#"cat > /dev/null; echo '{"scores": {"A": -1}}'; sleep 60 & exit 0"#,
            Duration::from_secs(30),
        );
        let started = Instant::now();
        assert_eq!(leaky.judge(&input).unwrap().get("A"), Some(&-1.0));
        assert!(
            started.elapsed() < Duration::from_secs(30),
            "waited for the sleeper"
        );
        // A judge that never answers, with a child: both go at the deadline.
        let stuck = sh("sleep 60 & sleep 60", Duration::from_millis(300));
        let started = Instant::now();
        assert!(stuck.judge(&input).unwrap_err().contains("did not answer"));
        assert!(started.elapsed() < Duration::from_secs(30));
    }
}
