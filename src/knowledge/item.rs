//! The knowledge items, one struct per kind (SPEC section 3).

use std::fmt;
use std::path::Path;
use std::sync::Arc;

use serde::{Deserialize, Serialize};

use crate::protocol::Kind;

use super::node::Pos;

/// Where an item is defined.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Source {
    /// The file.
    pub file: Arc<Path>,
    /// The item's first line and column.
    pub pos: Pos,
}

impl fmt::Display for Source {
    /// `file:line`, as shown in answers.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}:{}", self.file.display(), self.pos.line)
    }
}

/// The words of a text as tags would be written: split at whitespace and
/// punctuation, keeping the characters tags are written with (`-`, `+`,
/// `#`, and `.` inside a word: `node.js`, `c++`, `c#`); case as written.
pub fn text_words(text: &str) -> impl Iterator<Item = &str> {
    text.split(|c: char| !(c.is_alphanumeric() || matches!(c, '-' | '+' | '#' | '.')))
        .map(|w| w.trim_matches(|c: char| matches!(c, '.' | '-')))
        .filter(|w| !w.is_empty())
}

/// One knowledge item.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Item {
    /// Unique within its scope.
    pub id: String,
    /// Free tags.
    pub tags: Vec<String>,
    /// Where it is defined.
    pub source: Source,
    /// The kind-specific fields.
    pub body: Body,
}

impl Item {
    /// The tags its author gave it (its own and, for a lesson, its
    /// prerequisites' soft tags), lower case, each once. A lesson given
    /// none is tagged by the words of its text ([`Item::stack_words`]).
    pub fn own_tags(&self) -> Vec<String> {
        let mut out: Vec<String> = self.stack_words().map(str::to_lowercase).collect();
        out.sort();
        out.dedup();
        out
    }

    /// Its own tags as written, trimmed, without allocating: the tags its
    /// author gave it, or, for a lesson given none, the words of its text
    /// ([`text_words`]): one that says "In java services, ..." is a java
    /// lesson. Where these are read (another stack, evidence elsewhere),
    /// only the words that name a workspace memd has seen count.
    pub fn stack_words(&self) -> impl Iterator<Item = &str> {
        let lesson = match &self.body {
            Body::Lesson(l) => Some(l),
            _ => None,
        };
        let given = self
            .tags
            .iter()
            .chain(lesson.map_or(&[][..], |l| l.prerequisites.tags.as_slice()))
            .map(|t| t.trim())
            .filter(|t| !t.is_empty());
        let untagged = given.clone().next().is_none();
        let text = lesson.filter(|_| untagged).map_or("", |l| l.text.as_str());
        given.chain(text_words(text))
    }

    /// The item's kind.
    pub fn kind(&self) -> Kind {
        match &self.body {
            Body::Pattern(_) => Kind::Pattern,
            Body::AntiPattern(_) => Kind::AntiPattern,
            Body::Gotcha(_) => Kind::Gotcha,
            Body::Experience(_) => Kind::Experience,
            Body::Lesson(_) => Kind::Lesson,
            Body::Learning(_) => Kind::Learning,
            Body::Observation(_) => Kind::Observation,
            Body::Exemplar(_) => Kind::Exemplar,
            Body::Seed(_) => Kind::Seed,
        }
    }
}

/// The kind-specific part of an item.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub enum Body {
    /// Seed 000 pattern (boxed, like the other large kinds, so that an item
    /// of a small kind does not pay for the largest one).
    Pattern(Box<Pattern>),
    /// Seed 000 anti-pattern.
    AntiPattern(Box<AntiPattern>),
    /// Seed 000 gotcha.
    Gotcha(Gotcha),
    /// Seed 000 agent experience entry.
    Experience(Experience),
    /// Seed 001 lesson.
    Lesson(Box<Lesson>),
    /// Seed 003 learning.
    Learning(Box<Learning>),
    /// Seed 002 observation.
    Observation(Observation),
    /// Seed 004 exemplar.
    Exemplar(Exemplar),
    /// Seed 004 draft seed.
    Seed(Seed),
}

/// How sure the team is of a pattern (seed 000, dimension D).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub enum Confidence {
    /// Proven.
    High,
    /// Plausible.
    Medium,
    /// Untested.
    Low,
}

/// Where a pattern was learned.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
pub struct LearnedFrom {
    /// The product it came from.
    pub product: Option<String>,
    /// When, as Unix seconds.
    pub date: Option<i64>,
    /// The task it came from.
    pub task: Option<String>,
}

/// A problem/solution pattern.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Pattern {
    pub name: String,
    pub problem: String,
    pub solution: String,
    pub when_to_use: Option<String>,
    pub code: Option<String>,
    pub category: Option<String>,
    pub roles: Vec<String>,
    pub adjacent_roles: Vec<String>,
    pub learned_from: LearnedFrom,
    pub applies_to: Vec<String>,
    pub stack: Vec<String>,
    pub confidence: Option<Confidence>,
    pub times_applied: u32,
}

/// Something not to do.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct AntiPattern {
    pub name: String,
    pub problem: String,
    pub instead: String,
    pub category: Option<String>,
    pub roles: Vec<String>,
    pub adjacent_roles: Vec<String>,
}

/// A trap and its fix.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Gotcha {
    pub title: String,
    pub fix: String,
    pub category: Option<String>,
}

/// Which list of an agent-experience file an entry comes from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub enum ExperienceKind {
    /// `common_mistakes`.
    Mistake,
    /// `preferred_approaches`.
    Approach,
}

/// One entry of an agent's experience file.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Experience {
    /// The agent, normalised (see [`normalize_role`]).
    pub agent: String,
    pub kind: ExperienceKind,
    /// The mistake or the approach.
    pub text: String,
    /// The fix of a mistake, or the context of an approach.
    pub detail: Option<String>,
}

/// Structural prerequisites of a lesson: a hard gate (seed 001).
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
pub struct Prerequisites {
    pub os: Vec<String>,
    pub repos: Vec<String>,
    pub paths: Vec<String>,
    pub mcp_servers: Vec<String>,
    /// Soft: only a ranking signal, never a gate.
    pub tags: Vec<String>,
}

/// A lesson.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Lesson {
    pub text: String,
    pub category: Option<String>,
    pub prerequisites: Prerequisites,
    pub pinned: bool,
}

/// The six learning types of seed 003.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub enum LearningType {
    Pattern,
    Decision,
    Challenge,
    Optimization,
    Bugfix,
    Insight,
}

impl LearningType {
    /// The name used in files.
    pub fn as_str(self) -> &'static str {
        match self {
            LearningType::Pattern => "pattern",
            LearningType::Decision => "decision",
            LearningType::Challenge => "challenge",
            LearningType::Optimization => "optimization",
            LearningType::Bugfix => "bugfix",
            LearningType::Insight => "insight",
        }
    }
}

/// The four severity levels of seed 003.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
pub enum Severity {
    Low,
    Medium,
    High,
    Critical,
}

/// An entry of a learning index.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Learning {
    pub task_id: Option<String>,
    pub learning_type: LearningType,
    pub title: String,
    pub description: String,
    pub severity: Option<Severity>,
    pub keywords: Vec<String>,
    pub context: Option<String>,
    pub error_type: Option<String>,
    pub suggested_action: Option<String>,
    pub files: Vec<String>,
    pub created_at: Option<i64>,
    /// Effectiveness as written in the file, 0.0..=1.0.
    pub effectiveness: Option<f64>,
    pub times_applied: u32,
    pub confidence: Option<f64>,
}

/// The ten observation types of seed 002.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub enum ObservationType {
    Decision,
    Problem,
    Warning,
    Refactor,
    Success,
    Discovery,
    Feature,
    Bugfix,
    Pattern,
    Solution,
}

impl ObservationType {
    /// The name used in files.
    pub fn as_str(self) -> &'static str {
        match self {
            ObservationType::Decision => "decision",
            ObservationType::Problem => "problem",
            ObservationType::Warning => "warning",
            ObservationType::Refactor => "refactor",
            ObservationType::Success => "success",
            ObservationType::Discovery => "discovery",
            ObservationType::Feature => "feature",
            ObservationType::Bugfix => "bugfix",
            ObservationType::Pattern => "pattern",
            ObservationType::Solution => "solution",
        }
    }
}

/// A session observation.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Observation {
    pub kind: ObservationType,
    pub content: String,
    pub agent_type: Option<String>,
    /// Unix seconds.
    pub created_at: i64,
    pub confidence: Option<f64>,
}

/// Past work that performed well.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Exemplar {
    /// tweet, reply, commit, answer...
    pub kind: Option<String>,
    pub content: String,
    pub performance_score: Option<f64>,
    /// Unix seconds.
    pub posted_at: i64,
    /// As written, or classified by seed 004's heuristics.
    pub archetype: String,
}

/// A draft idea from notes.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Seed {
    pub hook: String,
    pub source: Option<String>,
    pub engagement_weight: f64,
}

/// Normalises a role or agent name so that `Backend Engineer`,
/// `backend_engineer` and `backend-engineer` compare equal.
pub fn normalize_role(role: &str) -> String {
    let mut out = String::with_capacity(role.len());
    for c in role.trim().chars() {
        if c.is_whitespace() || c == '_' || c == '-' {
            if !out.ends_with('-') && !out.is_empty() {
                out.push('-');
            }
        } else {
            out.extend(c.to_lowercase());
        }
    }
    while out.ends_with('-') {
        out.pop();
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn roles_normalise() {
        assert_eq!(normalize_role("Backend Engineer"), "backend-engineer");
        assert_eq!(normalize_role("backend_engineer"), "backend-engineer");
        assert_eq!(normalize_role(" QA  engineer "), "qa-engineer");
    }

    fn lesson(text: &str, tags: &[&str], soft: &[&str]) -> Item {
        Item {
            id: "L".into(),
            tags: tags.iter().map(|t| t.to_string()).collect(),
            source: Source {
                file: Arc::from(Path::new("lessons.yaml")),
                pos: Pos::default(),
            },
            body: Body::Lesson(Box::new(Lesson {
                text: text.into(),
                category: None,
                prerequisites: Prerequisites {
                    tags: soft.iter().map(|t| t.to_string()).collect(),
                    ..Prerequisites::default()
                },
                pinned: false,
            })),
        }
    }

    #[test]
    fn a_lesson_given_no_tags_is_tagged_by_its_words() {
        let own = lesson("In Go services, don't panic: use node.js or C++.", &[], &[]).own_tags();
        for word in ["go", "services", "panic", "node.js", "c++"] {
            assert!(own.iter().any(|t| t == word), "{word} in {own:?}");
        }
        // Tags given, by the author or its prerequisites, are its own.
        let tagged = lesson("In Go services, use C++", &["Go "], &["rust"]).own_tags();
        assert_eq!(tagged, ["go", "rust"]);
        assert_eq!(text_words(" -- . ").count(), 0);
    }
}
