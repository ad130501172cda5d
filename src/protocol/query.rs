//! The query a hook sends and the answer it gets back.

use std::collections::BTreeMap;
use std::fmt;
use std::str::FromStr;

use serde::{Deserialize, Serialize};

/// Default size of the injected block: Claude Code caps injected context at
/// 10,000 characters, so 9,000 leaves room for the harness's own framing.
pub const DEFAULT_BUDGET_CHARS: u32 = 9000;

/// How permissive selection is (seed 002: conservative keeps >= 0.6,
/// aggressive >= 0.3).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Mode {
    /// Only high-confidence items (the default).
    #[default]
    Conservative,
    /// More context with lower thresholds.
    Aggressive,
}

impl FromStr for Mode {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        match s.trim().to_ascii_lowercase().as_str() {
            "conservative" => Ok(Mode::Conservative),
            "aggressive" => Ok(Mode::Aggressive),
            other => Err(format!(
                "unknown mode `{other}`: expected conservative or aggressive"
            )),
        }
    }
}

/// Every kind of knowledge item memd knows.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Kind {
    /// A problem/solution pattern (seed 000).
    Pattern,
    /// Something not to do, and what to do instead (seed 000).
    AntiPattern,
    /// A trap with its fix (seed 000).
    Gotcha,
    /// One common mistake or preferred approach of an agent (seed 000).
    Experience,
    /// A lesson with structural prerequisites (seed 001).
    Lesson,
    /// An entry of a learning index (seed 003).
    Learning,
    /// A session observation (seed 002).
    Observation,
    /// Past work that performed well (seed 004).
    Exemplar,
    /// A draft idea from notes, the exemplars' cold-start fallback (seed 004).
    Seed,
}

impl Kind {
    /// Every kind, in rendering order's spirit.
    pub const ALL: [Kind; 9] = [
        Kind::Experience,
        Kind::Pattern,
        Kind::AntiPattern,
        Kind::Gotcha,
        Kind::Lesson,
        Kind::Learning,
        Kind::Observation,
        Kind::Exemplar,
        Kind::Seed,
    ];

    /// The snake_case name used in files, flags and JSON.
    pub fn as_str(self) -> &'static str {
        match self {
            Kind::Pattern => "pattern",
            Kind::AntiPattern => "anti_pattern",
            Kind::Gotcha => "gotcha",
            Kind::Experience => "experience",
            Kind::Lesson => "lesson",
            Kind::Learning => "learning",
            Kind::Observation => "observation",
            Kind::Exemplar => "exemplar",
            Kind::Seed => "seed",
        }
    }
}

impl fmt::Display for Kind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

impl FromStr for Kind {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        let norm = s.trim().to_ascii_lowercase().replace('-', "_");
        let norm = norm.strip_suffix('s').unwrap_or(&norm);
        Kind::ALL
            .into_iter()
            .find(|k| k.as_str() == norm)
            .ok_or_else(|| {
                let names: Vec<_> = Kind::ALL.iter().map(|k| k.as_str()).collect();
                format!("unknown kind `{s}`: expected one of {}", names.join(", "))
            })
    }
}

/// The context of one agent session or prompt (SPEC section 4).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct Query {
    /// Free text: the prompt or task description.
    pub task: String,
    /// The agent's role, e.g. `backend-engineer`.
    pub agent: Option<String>,
    /// The product being worked on.
    pub product: Option<String>,
    /// The repository (name or path).
    pub repo: Option<String>,
    /// The working directory of the session.
    pub cwd: Option<String>,
    /// Files in play.
    pub paths: Vec<String>,
    /// Operating system; the daemon's own when absent.
    pub os: Option<String>,
    /// MCP servers available to the agent.
    pub mcp_servers: Vec<String>,
    /// Environment tags (languages, frameworks, repo name).
    pub tags: Vec<String>,
    /// Keywords from the recent conversation.
    pub keywords: Vec<String>,
    /// Selection mode.
    pub mode: Mode,
    /// Size cap of the rendered block, in characters.
    pub budget_chars: u32,
    /// Restrict the answer to these kinds; empty means all.
    pub kinds: Vec<Kind>,
    /// The agent session, for audit and de-duplication.
    pub session_id: Option<String>,
    /// The instant to score against (RFC 3339); only for reproducible tests
    /// and benchmarks. Absent means the current time.
    pub now: Option<String>,
    /// Only items the task is about (their task dimension at least 1): the
    /// hooks set it on each prompt, so what qualifies on role, history or
    /// recency alone comes at session start, once.
    pub task_match: bool,
}

impl Default for Query {
    fn default() -> Self {
        Query {
            task: String::new(),
            agent: None,
            product: None,
            repo: None,
            cwd: None,
            paths: Vec::new(),
            os: None,
            mcp_servers: Vec::new(),
            tags: Vec::new(),
            keywords: Vec::new(),
            mode: Mode::Conservative,
            budget_chars: DEFAULT_BUDGET_CHARS,
            kinds: Vec::new(),
            session_id: None,
            now: None,
            task_match: false,
        }
    }
}

impl Query {
    /// Where the query is asked from: its `repo` when that is a path, else
    /// its `cwd`; only an absolute path.
    pub fn place(&self) -> Option<&str> {
        self.repo
            .as_deref()
            .filter(|r| r.starts_with('/'))
            .or(self.cwd.as_deref().filter(|c| c.starts_with('/')))
    }

    /// The command-line options that set a query's fields, shared by
    /// `memd query` and `memctl`.
    pub const OPTIONS: [&'static str; 15] = [
        "task",
        "agent",
        "product",
        "repo",
        "cwd",
        "path",
        "os",
        "mcp-server",
        "tags",
        "keywords",
        "kinds",
        "mode",
        "budget",
        "session",
        "now",
    ];

    /// Sets the field of option `--name` from its value (lists are
    /// comma-separated and repeatable options add up).
    pub fn set_option(&mut self, name: &str, value: &str) -> Result<(), String> {
        let list = || {
            value
                .split(',')
                .map(str::trim)
                .filter(|s| !s.is_empty())
                .map(String::from)
                .collect::<Vec<_>>()
        };
        match name {
            "task" => self.task = value.to_string(),
            "agent" => self.agent = Some(value.to_string()),
            "product" => self.product = Some(value.to_string()),
            "repo" => self.repo = Some(value.to_string()),
            "cwd" => self.cwd = Some(value.to_string()),
            "path" => self.paths.push(value.to_string()),
            "os" => self.os = Some(value.to_string()),
            "mcp-server" => self.mcp_servers.push(value.to_string()),
            "tags" => self.tags.extend(list()),
            "keywords" => self.keywords.extend(list()),
            "kinds" => {
                for kind in list() {
                    self.kinds.push(kind.parse()?);
                }
            }
            "mode" => self.mode = value.parse()?,
            "budget" => {
                self.budget_chars = value
                    .parse()
                    .map_err(|_| format!("--budget wants a number of characters, not `{value}`"))?
            }
            "session" => self.session_id = Some(value.to_string()),
            "now" => self.now = Some(value.to_string()),
            other => return Err(format!("unknown query option --{other}")),
        }
        Ok(())
    }
}

/// What a query returns: the block to inject and why each item is in it.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
pub struct Answer {
    /// The rendered markdown block (empty when nothing is relevant).
    pub block: String,
    /// Each item in the block, in rendering order.
    pub items: Vec<SelectedItem>,
    /// The query was the first memd heard of its session: a hook that
    /// brings a session's start with its first prompt (Gemini CLI) adds
    /// the line on memd's tools then.
    #[serde(default)]
    pub first_of_session: bool,
}

/// One item of an answer, with the numbers that selected it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SelectedItem {
    /// The item's id.
    pub id: String,
    /// Its kind.
    pub kind: Kind,
    /// Its score under its kind's policy.
    pub score: f64,
    /// The per-dimension breakdown of that score.
    pub dimensions: BTreeMap<String, f64>,
    /// Where it is defined, as `file:line`.
    pub source: String,
}
