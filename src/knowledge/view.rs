//! Items as people see them: a title and the fields as text.

use crate::protocol::ItemView;

use super::item::{Confidence, ExperienceKind};
use super::{Body, Item};

/// An item's name, title or first words.
pub fn title(item: &Item) -> String {
    let line = subject(item)
        .split_whitespace()
        .collect::<Vec<_>>()
        .join(" ");
    match line.char_indices().nth(80) {
        Some((cut, _)) => format!("{}...", &line[..cut]),
        None => line,
    }
}

/// The field that says what an item is about: its title or name, else its
/// text.
pub fn subject(item: &Item) -> &str {
    match &item.body {
        Body::Pattern(p) => &p.name,
        Body::AntiPattern(a) => &a.name,
        Body::Gotcha(g) => &g.title,
        Body::Experience(e) => &e.text,
        Body::Lesson(l) => &l.text,
        Body::Learning(l) => &l.title,
        Body::Observation(o) => &o.content,
        Body::Exemplar(e) => &e.content,
        Body::Seed(s) => &s.hook,
    }
}

fn list(items: &[String]) -> Option<String> {
    (!items.is_empty()).then(|| items.join(", "))
}

/// An item with its fields as text, for `memctl get`.
pub fn view(item: &Item) -> ItemView {
    let mut fields: Vec<(&str, Option<String>)> = Vec::new();
    let date = |d: &Option<i64>| d.map(crate::time::format_instant);
    match &item.body {
        Body::Pattern(p) => {
            let confidence = p.confidence.map(|c| match c {
                Confidence::High => "high".to_string(),
                Confidence::Medium => "medium".to_string(),
                Confidence::Low => "low".to_string(),
            });
            fields.extend([
                ("name", Some(p.name.clone())),
                ("problem", Some(p.problem.clone())),
                ("solution", Some(p.solution.clone())),
                ("when_to_use", p.when_to_use.clone()),
                ("code", p.code.clone()),
                ("category", p.category.clone()),
                ("roles", list(&p.roles)),
                ("adjacent_roles", list(&p.adjacent_roles)),
                ("learned_from.product", p.learned_from.product.clone()),
                ("learned_from.date", date(&p.learned_from.date)),
                ("learned_from.task", p.learned_from.task.clone()),
                ("applies_to", list(&p.applies_to)),
                ("stack", list(&p.stack)),
                ("confidence", confidence),
                ("times_applied", Some(p.times_applied.to_string())),
            ]);
        }
        Body::AntiPattern(a) => fields.extend([
            ("name", Some(a.name.clone())),
            ("problem", Some(a.problem.clone())),
            ("instead", Some(a.instead.clone())),
            ("category", a.category.clone()),
            ("roles", list(&a.roles)),
            ("adjacent_roles", list(&a.adjacent_roles)),
        ]),
        Body::Gotcha(g) => fields.extend([
            ("title", Some(g.title.clone())),
            ("fix", Some(g.fix.clone())),
            ("category", g.category.clone()),
        ]),
        Body::Experience(e) => {
            let (what, detail) = match e.kind {
                ExperienceKind::Mistake => ("mistake", "fix"),
                ExperienceKind::Approach => ("approach", "context"),
            };
            fields.extend([
                ("agent", Some(e.agent.clone())),
                (what, Some(e.text.clone())),
                (detail, e.detail.clone()),
            ]);
        }
        Body::Lesson(l) => fields.extend([
            ("text", Some(l.text.clone())),
            ("category", l.category.clone()),
            ("prerequisites.os", list(&l.prerequisites.os)),
            ("prerequisites.repos", list(&l.prerequisites.repos)),
            ("prerequisites.paths", list(&l.prerequisites.paths)),
            (
                "prerequisites.mcp_servers",
                list(&l.prerequisites.mcp_servers),
            ),
            ("prerequisites.tags", list(&l.prerequisites.tags)),
            ("pinned", Some(l.pinned.to_string())),
        ]),
        Body::Learning(l) => fields.extend([
            ("task_id", l.task_id.clone()),
            ("learning_type", Some(l.learning_type.as_str().to_string())),
            ("title", Some(l.title.clone())),
            ("description", Some(l.description.clone())),
            (
                "severity",
                l.severity.map(|s| format!("{s:?}").to_lowercase()),
            ),
            ("keywords", list(&l.keywords)),
            ("context", l.context.clone()),
            ("error_type", l.error_type.clone()),
            ("suggested_action", l.suggested_action.clone()),
            ("files", list(&l.files)),
            ("created_at", date(&l.created_at)),
            ("effectiveness", l.effectiveness.map(|e| format!("{e:.2}"))),
            ("times_applied", Some(l.times_applied.to_string())),
        ]),
        Body::Observation(o) => fields.extend([
            ("type", Some(o.kind.as_str().to_string())),
            ("content", Some(o.content.clone())),
            ("agent_type", o.agent_type.clone()),
            (
                "created_at",
                Some(crate::time::format_instant(o.created_at)),
            ),
        ]),
        Body::Exemplar(e) => fields.extend([
            ("kind", e.kind.clone()),
            ("content", Some(e.content.clone())),
            (
                "performance_score",
                e.performance_score.map(|s| s.to_string()),
            ),
            ("posted_at", Some(crate::time::format_instant(e.posted_at))),
            ("archetype", Some(e.archetype.clone())),
        ]),
        Body::Seed(s) => fields.extend([
            ("hook", Some(s.hook.clone())),
            ("source", s.source.clone()),
            ("engagement_weight", Some(s.engagement_weight.to_string())),
        ]),
    }
    ItemView {
        id: item.id.clone(),
        kind: item.kind(),
        source: item.source.to_string(),
        tags: item.tags.clone(),
        fields: fields
            .into_iter()
            .filter_map(|(k, v)| Some((k.to_string(), v?)))
            .collect(),
    }
}
