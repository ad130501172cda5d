//! Reading each item kind of SPEC section 3 out of a mapping node.

use crate::protocol::Kind;
use crate::scoring::exemplar::classify_archetype;

use super::fields::{scalar_text, FieldError, FieldResult, Fields};
use super::item::*;
use super::node::{Node, Value};

/// The top-level keys of a collections document and the kind each holds.
pub const COLLECTION_KEYS: [(&str, Kind); 8] = [
    ("patterns", Kind::Pattern),
    ("anti_patterns", Kind::AntiPattern),
    ("gotchas", Kind::Gotcha),
    ("lessons", Kind::Lesson),
    ("learnings", Kind::Learning),
    ("observations", Kind::Observation),
    ("exemplars", Kind::Exemplar),
    ("seeds", Kind::Seed),
];

/// An item as read, before it is given its source.
pub struct ReadItem {
    pub id: String,
    pub tags: Vec<String>,
    pub body: Body,
}

const CONFIDENCE: [(&str, Confidence); 3] = [
    ("high", Confidence::High),
    ("medium", Confidence::Medium),
    ("low", Confidence::Low),
];

const LEARNING_TYPES: [(&str, LearningType); 6] = [
    ("pattern", LearningType::Pattern),
    ("decision", LearningType::Decision),
    ("challenge", LearningType::Challenge),
    ("optimization", LearningType::Optimization),
    ("bugfix", LearningType::Bugfix),
    ("insight", LearningType::Insight),
];

const SEVERITIES: [(&str, Severity); 4] = [
    ("critical", Severity::Critical),
    ("high", Severity::High),
    ("medium", Severity::Medium),
    ("low", Severity::Low),
];

const OBSERVATION_TYPES: [(&str, ObservationType); 10] = [
    ("decision", ObservationType::Decision),
    ("problem", ObservationType::Problem),
    ("warning", ObservationType::Warning),
    ("refactor", ObservationType::Refactor),
    ("success", ObservationType::Success),
    ("discovery", ObservationType::Discovery),
    ("feature", ObservationType::Feature),
    ("bugfix", ObservationType::Bugfix),
    ("pattern", ObservationType::Pattern),
    ("solution", ObservationType::Solution),
];

/// The id an item would report in an error, even when the item is invalid.
pub fn peek_id(kind: Kind, node: &Node) -> Option<String> {
    let key = if kind == Kind::Learning {
        "learning_id"
    } else {
        "id"
    };
    node.get(key).and_then(scalar_text)
}

/// Reads one item of a collections section.
pub fn read_item(kind: Kind, node: &Node) -> FieldResult<ReadItem> {
    let f = Fields::new(node)?;
    let id_key = if kind == Kind::Learning {
        "learning_id"
    } else {
        "id"
    };
    let id = f.req_str(id_key)?.trim().to_string();
    let tags = keywords(&f, "tags")?;
    let body = match kind {
        Kind::Pattern => Body::Pattern(Box::new(read_pattern(&f)?)),
        Kind::AntiPattern => Body::AntiPattern(Box::new(AntiPattern {
            name: f.req_str("name")?,
            problem: f.req_str("problem")?,
            instead: f.req_str("instead")?,
            category: f.opt_str("category")?.map(|c| normalize_keyword(&c)),
            roles: roles(&f, "roles")?,
            adjacent_roles: roles(&f, "adjacent_roles")?,
        })),
        Kind::Gotcha => Body::Gotcha(Gotcha {
            title: f.req_str("title")?,
            fix: f.req_str("fix")?,
            category: f.opt_str("category")?.map(|c| normalize_keyword(&c)),
        }),
        Kind::Lesson => Body::Lesson(Box::new(read_lesson(&f)?)),
        Kind::Learning => Body::Learning(Box::new(read_learning(&f)?)),
        Kind::Observation => Body::Observation(Observation {
            kind: f.req_enum("type", &OBSERVATION_TYPES)?,
            content: f.req_str("content")?,
            agent_type: f.opt_str("agent_type")?,
            created_at: f.req_time("created_at")?,
            confidence: f.opt_f64("confidence", 0.0, 1.0)?,
        }),
        Kind::Exemplar => {
            let content = f.req_str("content")?;
            let kind_name = f.opt_str("kind")?;
            let archetype = match f.opt_str("archetype")? {
                Some(a) => a,
                None => classify_archetype(kind_name.as_deref(), &content).to_string(),
            };
            Body::Exemplar(Exemplar {
                kind: kind_name,
                content,
                performance_score: f.opt_f64("performance_score", 0.0, f64::MAX)?,
                posted_at: f.req_time("posted_at")?,
                archetype,
            })
        }
        Kind::Seed => Body::Seed(Seed {
            hook: f.req_str("hook")?,
            source: f.opt_str("source")?,
            engagement_weight: f
                .opt_f64("engagement_weight", 0.0, 1.0)?
                .unwrap_or(crate::scoring::exemplar::COLD_START_WEIGHT),
        }),
        Kind::Experience => unreachable_experience(&f)?,
    };
    Ok(ReadItem { id, tags, body })
}

/// Experience entries come from agent-experience files, never from a
/// collections section.
fn unreachable_experience(f: &Fields<'_>) -> FieldResult<Body> {
    Err(FieldError {
        pos: f.pos(),
        message: "agent experience belongs in an agent-experience file".into(),
    })
}

fn read_pattern(f: &Fields<'_>) -> FieldResult<Pattern> {
    let learned_from = match f.sub("learned_from")? {
        Some(lf) => LearnedFrom {
            product: lf.opt_str("product")?.map(|p| normalize_keyword(&p)),
            date: lf.opt_time("date")?,
            task: lf.opt_str("task")?,
        },
        None => LearnedFrom::default(),
    };
    Ok(Pattern {
        name: f.req_str("name")?,
        problem: f.req_str("problem")?,
        solution: f.req_str("solution")?,
        when_to_use: f.opt_str("when_to_use")?,
        code: f.opt_str("code")?,
        category: f.opt_str("category")?.map(|c| normalize_keyword(&c)),
        roles: roles(f, "roles")?,
        adjacent_roles: roles(f, "adjacent_roles")?,
        learned_from,
        applies_to: keywords(f, "applies_to")?,
        stack: keywords(f, "stack")?,
        confidence: f.opt_enum("confidence", &CONFIDENCE)?,
        times_applied: f.opt_u32("times_applied")?.unwrap_or(0),
    })
}

/// A keyword (tag, stack, product, category) as compared: trimmed, lower case.
pub fn normalize_keyword(text: &str) -> String {
    text.trim().to_lowercase()
}

/// A list of keywords, normalised (see [`normalize_keyword`]).
fn keywords(f: &Fields<'_>, key: &str) -> FieldResult<Vec<String>> {
    Ok(f.str_list(key)?
        .iter()
        .map(|k| normalize_keyword(k))
        .filter(|k| !k.is_empty())
        .collect())
}

/// A list of role names, normalised (see [`normalize_role`]).
fn roles(f: &Fields<'_>, key: &str) -> FieldResult<Vec<String>> {
    Ok(f.str_list(key)?.iter().map(|r| normalize_role(r)).collect())
}

fn read_lesson(f: &Fields<'_>) -> FieldResult<Lesson> {
    let prerequisites = match f.sub("prerequisites")? {
        Some(p) => Prerequisites {
            os: p.str_list("os")?,
            repos: p.str_list("repos")?,
            paths: p.str_list("paths")?,
            mcp_servers: p.str_list("mcp_servers")?,
            tags: keywords(&p, "tags")?,
        },
        None => Prerequisites::default(),
    };
    Ok(Lesson {
        text: f.req_str("text")?,
        category: f.opt_str("category")?.map(|c| normalize_keyword(&c)),
        prerequisites,
        pinned: f.opt_bool("pinned")?.unwrap_or(false),
    })
}

fn read_learning(f: &Fields<'_>) -> FieldResult<Learning> {
    Ok(Learning {
        task_id: f.opt_str("task_id")?,
        learning_type: f.req_enum("learning_type", &LEARNING_TYPES)?,
        title: f.req_str("title")?,
        description: f.req_str("description")?,
        severity: f.opt_enum("severity", &SEVERITIES)?,
        keywords: f.str_list("keywords")?,
        context: f.opt_str("context")?,
        error_type: f.opt_str("error_type")?,
        suggested_action: f.opt_str("suggested_action")?,
        files: f.str_list("files")?,
        created_at: f.opt_time("created_at")?,
        effectiveness: f.opt_f64("effectiveness", 0.0, 1.0)?,
        times_applied: f.opt_u32("times_applied")?.unwrap_or(0),
        confidence: f.opt_f64("confidence", 0.0, 1.0)?,
    })
}

/// Checks the `metadata` and `statistics` mappings of a learning index: read
/// and validated, never scored.
pub fn check_index_metadata(root: &Node) -> Vec<FieldError> {
    let mut errors = Vec::new();
    for key in ["metadata", "statistics"] {
        if let Some(node) = root.get(key) {
            if !matches!(node.value, Value::Map(_) | Value::Null) {
                errors.push(FieldError {
                    pos: node.pos,
                    message: format!("`{key}` must be a mapping, found {}", node.type_name()),
                });
            }
        }
    }
    if let Some(meta) = root.get("metadata").and_then(|n| Fields::new(n).ok()) {
        let checks = [
            meta.opt_str("version").err(),
            meta.opt_time("last_updated").err(),
            meta.opt_u32("total_learnings").err(),
        ];
        errors.extend(checks.into_iter().flatten());
    }
    errors
}

/// Reads one entry of `common_mistakes` or `preferred_approaches`: either
/// text, or a mapping (`{mistake, fix}` / `{context, approach}`).
pub fn read_experience(agent: &str, kind: ExperienceKind, node: &Node) -> FieldResult<Experience> {
    if let Some(text) = scalar_text(node) {
        return Ok(Experience {
            agent: agent.to_string(),
            kind,
            text,
            detail: None,
        });
    }
    let f = Fields::new(node)?;
    let (text, detail) = match kind {
        ExperienceKind::Mistake => (f.req_str("mistake")?, f.opt_str("fix")?),
        ExperienceKind::Approach => (f.req_str("approach")?, f.opt_str("context")?),
    };
    Ok(Experience {
        agent: agent.to_string(),
        kind,
        text,
        detail,
    })
}
