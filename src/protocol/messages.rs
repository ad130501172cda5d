//! Requests, replies and errors.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use super::query::{Answer, Kind, Query};

/// The protocol version this build speaks; every request carries one.
pub const PROTOCOL_VERSION: u32 = 1;

/// A request: its protocol version, then what is asked.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Request {
    /// Must equal the daemon's [`PROTOCOL_VERSION`].
    pub version: u32,
    /// What is asked.
    pub request: RequestBody,
}

impl Request {
    /// A request of this build's version.
    pub fn new(request: RequestBody) -> Self {
        Request {
            version: PROTOCOL_VERSION,
            request,
        }
    }
}

/// What a request asks.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum RequestBody {
    /// Is the daemon there?
    Ping,
    /// Everything `memctl status` shows.
    Status,
    /// The block for a context.
    Query(Query),
    /// Why an item is or is not shown for a context.
    Explain { id: String, query: Query },
    /// One item, by id (as a query from `query.cwd`/`query.repo` sees it).
    Get { id: String, query: Query },
    /// Items matching text, best first.
    Search {
        text: String,
        limit: u32,
        query: Query,
    },
    /// Re-read every root now.
    Reload,
    /// Direct feedback on an item (seed 001, weight 2.0), for `tags` (or
    /// the tags of the query that last showed it).
    Feedback {
        id: String,
        relevant: bool,
        tags: Vec<String>,
        /// Why, in a few words: kept in memd's log with the verdict.
        #[serde(default)]
        note: Option<String>,
    },
    /// An application of an item (seed 003).
    Track {
        id: String,
        task_id: Option<String>,
        applied: bool,
        helpful: Option<bool>,
        score: Option<f64>,
        note: Option<String>,
    },
    /// A session ended: ready for evaluation.
    SessionEnd {
        session_id: String,
        transcript_path: Option<String>,
    },
    /// Per-tag relevance of one item or all, as seed 001's `log`.
    Log {
        id: Option<String>,
        sort_by_score: bool,
    },
    /// All learned state as YAML.
    Export,
    /// Evaluate up to `limit` finished sessions (0: all) other than those
    /// in `skip` (already tried by this run), or re-evaluate one session
    /// from the start of its transcript.
    Evaluate {
        limit: u32,
        force: Option<String>,
        #[serde(default)]
        skip: Vec<String>,
    },
    /// What a hook call came to, sent by the hook after its answer (for
    /// `status`).
    Hook(HookCall),
    /// Adds a new item to a knowledge file (`memctl add`, the MCP tool
    /// `remember`).
    Add(NewItem),
    /// Replaces one's own events in the team's files of the repository at
    /// `place` by a snapshot of one's evidence (`memctl team compact`).
    TeamCompact { place: String },
    /// Starts the local page (or finds it started): `memctl ui`.
    Ui,
    /// Pins `id` by hand where a query has all of `tags` (none: everywhere),
    /// or takes out its pins for exactly those tags (`pinned: false`).
    Pin {
        id: String,
        tags: Vec<String>,
        pinned: bool,
    },
}

/// An item to add, and where.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct NewItem {
    /// lesson, gotcha, anti_pattern or pattern.
    pub kind: Kind,
    /// The kind's fields by name (`text`; `title`, `fix`; ...), as text.
    pub fields: Vec<(String, String)>,
    pub tags: Vec<String>,
    pub scope: AddScope,
    /// Where the caller is (`cwd`, `repo`): which project.
    pub query: Query,
}

/// Where a new item goes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum AddScope {
    /// `<repo>/.memd/`, seen only from inside that repository.
    Project,
    /// The first configured root, seen everywhere.
    Personal,
}

/// One call of `memctl hook`, as the hook saw it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct HookCall {
    /// `claude` or `codex`.
    pub harness: String,
    /// The hook event (`SessionStart`, `UserPromptSubmit`, ...).
    pub event: String,
    /// Unix seconds.
    pub at: i64,
    pub outcome: HookOutcome,
}

/// What a hook call came to.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum HookOutcome {
    /// A block of this many characters went to the agent.
    Injected { chars: u64 },
    /// The daemon answered with nothing to inject.
    NothingRelevant,
    /// A session end was recorded.
    Recorded,
    /// No daemon answered on the socket.
    Unreachable { message: String },
    /// The daemon answered with an error, or the exchange failed.
    Failed { message: String },
}

impl HookOutcome {
    /// Whether the call failed to reach memd or to get an answer.
    pub fn failed(&self) -> bool {
        matches!(
            self,
            HookOutcome::Unreachable { .. } | HookOutcome::Failed { .. }
        )
    }
}

impl std::fmt::Display for HookCall {
    /// `harness event: outcome`.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{} {}: {}", self.harness, self.event, self.outcome)
    }
}

impl std::fmt::Display for HookOutcome {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            HookOutcome::Injected { chars } => write!(f, "injected {chars} chars"),
            HookOutcome::NothingRelevant => write!(f, "nothing relevant"),
            HookOutcome::Recorded => write!(f, "session recorded"),
            HookOutcome::Unreachable { message } => write!(f, "daemon unreachable: {message}"),
            HookOutcome::Failed { message } => write!(f, "failed: {message}"),
        }
    }
}

/// The answer to a request, in the request's encoding.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Response {
    /// The daemon's [`PROTOCOL_VERSION`].
    pub version: u32,
    /// The reply or a typed error.
    pub outcome: Outcome,
}

impl Response {
    /// A successful response.
    pub fn ok(reply: Reply) -> Self {
        Response {
            version: PROTOCOL_VERSION,
            outcome: Outcome::Ok(reply),
        }
    }

    /// An error response.
    pub fn error(kind: ErrorKind, message: impl Into<String>) -> Self {
        Response {
            version: PROTOCOL_VERSION,
            outcome: Outcome::Error(ErrorReply {
                kind,
                message: message.into(),
            }),
        }
    }
}

/// A reply or an error.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Outcome {
    /// It worked.
    Ok(Reply),
    /// It did not; the connection stays usable unless the frame was bad.
    Error(ErrorReply),
}

/// The kinds of error a request can get.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ErrorKind {
    /// The frame or the request could not be understood.
    BadRequest,
    /// No such item.
    NotFound,
    /// The request's protocol version is not the daemon's.
    UnsupportedVersion,
    /// The frame is over the size limit.
    TooLarge,
    /// The daemon failed.
    Internal,
    /// The daemon is serving its maximum of connections; try again.
    Busy,
    /// The peer is another user; nothing is answered.
    Forbidden,
}

/// A typed error with a human message.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ErrorReply {
    pub kind: ErrorKind,
    pub message: String,
}

/// What a successful request returns.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Reply {
    /// To `ping`.
    Pong { daemon_version: String, pid: u32 },
    /// To `status`.
    Status(Box<StatusReport>),
    /// To `query`.
    Answer(Answer),
    /// To `explain`.
    Explanation(Explanation),
    /// To `get`.
    Item(ItemView),
    /// To `search`.
    Hits(Vec<SearchHit>),
    /// To `reload`.
    Reloaded(ReindexReport),
    /// To `feedback`: the item's scores now.
    Judged(LogEntry),
    /// To `track`.
    Tracked {
        id: String,
        times_applied: u32,
        effectiveness: Option<f64>,
    },
    /// To `session_end`.
    SessionEnded { session_id: String, shown: u64 },
    /// To `log`.
    Log(Vec<LogEntry>),
    /// To `export`: YAML.
    Exported(String),
    /// To `evaluate`.
    Evaluated(EvaluateReport),
    /// To `hook`: noted.
    Noted,
    /// To `add`: the new item's id and the file it was appended to.
    Added { id: String, file: String },
    /// To `team_compact`: the file, the lines it had, the items its
    /// snapshot keeps, and the backup of it as it was.
    TeamCompacted {
        file: String,
        lines: u64,
        items: u64,
        backup: Option<String>,
    },
    /// To `ui`: the address to open first (its token in it).
    Ui { url: String },
}

/// One session's evaluation.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SessionEvaluation {
    pub session_id: String,
    /// Items judged.
    pub judged: u32,
    /// Why the session was left for later or skipped, if it was.
    pub problem: Option<String>,
}

/// What an evaluation run did.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct EvaluateReport {
    pub sessions: Vec<SessionEvaluation>,
    /// Sessions still waiting.
    pub pending: u64,
}

/// One tag's learned relevance.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct TagLine {
    pub tag: String,
    pub score: f64,
    pub positive: u32,
    pub negative: u32,
    /// Prompts it was held back from since it was last judged.
    #[serde(default)]
    pub held: u32,
    /// Judged relevant since it was filtered, not yet confirmed.
    #[serde(default)]
    pub trial: bool,
    /// On trial: relevant verdicts still needed to confirm it.
    #[serde(default)]
    pub to_confirm: u32,
}

/// What has been learned about one item.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct LogEntry {
    pub id: String,
    /// `None` when the item is not loaded (learned state outlives files).
    pub kind: Option<Kind>,
    pub title: String,
    pub pinned: Option<String>,
    pub tags: Vec<TagLine>,
    pub times_applied: u32,
    pub effectiveness: Option<f64>,
    /// The team's verdicts on it, per repository that shares them and
    /// member (last, so that an older `memctl` still reads the rest).
    #[serde(default)]
    pub team: Vec<TeamLine>,
}

/// One member's verdicts on an item in a team's repository.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct TeamLine {
    /// The repository's name in the team's events.
    pub repo: String,
    pub member: String,
    /// Whether it is this engineer's own file.
    pub own: bool,
    pub verdicts: u32,
    /// Weighted relevant and irrelevant verdicts.
    pub relevant: f64,
    pub irrelevant: f64,
}

/// One knowledge item as shown to people.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ItemView {
    pub id: String,
    pub kind: Kind,
    /// `file:line`.
    pub source: String,
    pub tags: Vec<String>,
    /// Its fields, in file order, as text.
    pub fields: Vec<(String, String)>,
}

/// One search result.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SearchHit {
    pub id: String,
    pub kind: Kind,
    /// Text similarity in [0, 1].
    pub similarity: f64,
    /// Its name, title or first words.
    pub title: String,
    /// `file:line`.
    pub source: String,
}

/// Why an item is or is not shown for a context.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Explanation {
    pub id: String,
    pub kind: Kind,
    /// Whether the query's answer includes it.
    pub shown: bool,
    /// Its score under its policy, when it was scored.
    pub score: Option<f64>,
    /// The score's dimensions.
    pub dimensions: BTreeMap<String, f64>,
    /// Each gate, dimension and threshold that decided, in words.
    pub reasons: Vec<String>,
}

/// One pass over the knowledge files.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct ReindexReport {
    /// When it finished, RFC 3339.
    pub at: String,
    /// How long it took.
    pub millis: f64,
    /// Files read and parsed.
    pub parsed: u64,
    /// Files whose items came from the store unchanged.
    pub from_store: u64,
    /// Files removed.
    pub removed: u64,
}

/// A knowledge root as the daemon watches it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RootStatus {
    pub path: String,
    /// `global`, or the project's repository path.
    pub scope: String,
    pub exists: bool,
    /// `inotify` (native events), `polling`, or `none`.
    pub watch: String,
}

/// Query latency inside the daemon, in microseconds.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Latency {
    pub count: u64,
    pub p50_us: f64,
    pub p90_us: f64,
    pub p99_us: f64,
    pub max_us: f64,
}

/// Everything `memctl status` shows.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct StatusReport {
    pub daemon_version: String,
    pub protocol_version: u32,
    pub pid: u32,
    pub uptime_secs: f64,
    pub config: Option<String>,
    pub data_dir: String,
    pub socket: String,
    pub roots: Vec<RootStatus>,
    pub files: u64,
    pub ignored_files: Vec<String>,
    /// Live items per kind.
    pub items: BTreeMap<String, u64>,
    /// Problems, each `file:line:col: message`.
    pub errors: Vec<String>,
    /// The load at start-up.
    pub startup: ReindexReport,
    /// The semantic tier's model and dimensions; `None` when off.
    #[serde(default)]
    pub semantic: Option<String>,
    /// The latest change applied.
    pub last_reindex: Option<ReindexReport>,
    pub query_latency: Latency,
    pub pending_evaluations: u64,
    pub sessions: u64,
    /// The last call of each harness and event since the daemon started.
    #[serde(default)]
    pub hooks: Vec<HookCall>,
    /// The latest failed hook calls the daemon heard of, newest last.
    #[serde(default)]
    pub hook_failures: Vec<HookCall>,
    /// Projects whose knowledge is not loaded (another user's, or writable
    /// by others), each with why. Last, so that an older `memctl` still
    /// reads the rest.
    #[serde(default)]
    pub refused_projects: Vec<String>,
    /// The projects that share their verdicts with their team.
    #[serde(default)]
    pub teams: Vec<TeamStatus>,
    /// How often the judge's verdicts on one item in one context disagree,
    /// and the filter line that gives (`crate::learning::noise`).
    #[serde(default)]
    pub judge: JudgeNoise,
    /// What queries showed, as the recorder thread has it
    /// (`crate::daemon::recorder`).
    #[serde(default)]
    pub recorder: RecorderStatus,
}

/// The recorder thread's backlog, as `memctl status` shows it.
#[derive(Debug, Clone, Copy, Default, Serialize, Deserialize, PartialEq, Eq)]
pub struct RecorderStatus {
    /// Showings handed to it and not yet applied and written.
    pub waiting: u64,
    /// Showings applied and written since the daemon started.
    pub recorded: u64,
    /// Showings dropped because its queue was full (a stalled disk).
    pub dropped: u64,
}

/// How often the judge contradicts itself, as `memctl status` shows it.
#[derive(Debug, Clone, Default, Serialize, Deserialize, PartialEq)]
pub struct JudgeNoise {
    /// Pairs of verdicts on one item in one context.
    pub pairs: u64,
    /// Of those, the pairs that disagree.
    pub disagreeing: u64,
    /// The judge's error rate that gives this disagreement, once there are
    /// enough pairs to say.
    pub error: Option<f64>,
    /// The line seed 001's rule filters below (its own -0.1, or lower).
    pub filter_line: f64,
    /// The pairs needed before the error is read.
    #[serde(default)]
    pub pairs_needed: u64,
    /// The error read is close to a coin's: learning filters almost
    /// nothing (`memctl doctor` fails the judge).
    #[serde(default)]
    pub near_coin: bool,
    /// Pairs of verdicts on one item in two different contexts.
    #[serde(default)]
    pub pairs_across: u64,
    /// Of those, the pairs that disagree.
    #[serde(default)]
    pub disagreeing_across: u64,
    /// How often an item's relevance differs between two contexts, read
    /// from those pairs and the judge's error, once there are enough.
    #[serde(default)]
    pub relevance_differs: Option<f64>,
}

/// A project that shares its verdicts (`.memd/team.toml`).
#[derive(Debug, Clone, Default, Serialize, Deserialize, PartialEq)]
pub struct TeamStatus {
    /// The repository's path here.
    pub repo: String,
    /// Its name in the team's events.
    pub name: String,
    /// This engineer's member name, and file.
    pub member: String,
    pub member_file: String,
    pub teammate_weight: f64,
    /// Why its settings or files could not be read.
    pub error: Option<String>,
    /// Each member's file.
    pub files: Vec<TeamFileStatus>,
    /// Items the team judged that no knowledge file defines (their
    /// verdicts move nothing).
    pub unknown_items: Vec<String>,
}

/// One member's file of a team.
#[derive(Debug, Clone, Default, Serialize, Deserialize, PartialEq)]
pub struct TeamFileStatus {
    /// Its path.
    pub file: String,
    pub member: String,
    /// Events counted.
    pub events: u64,
    /// Items they judged.
    pub items: u64,
    /// Lines skipped.
    pub skipped: u64,
    /// The first problems, each `file:line: why` (line 0: the file).
    pub problems: Vec<String>,
}
