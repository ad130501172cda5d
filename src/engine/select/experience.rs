//! Seed 000's agent experience: every common mistake and preferred
//! approach of the query's agent, at the session's start.

use std::collections::BTreeMap;
use std::sync::Arc;

use crate::knowledge::{Body, Item};
use crate::render::{Entry, Note, Section};

use super::{entry, QueryFacts};
use crate::engine::Live;

pub(super) fn experience(facts: &QueryFacts<'_>, items: &[&Live], out: &mut Vec<Entry>) {
    let Some(agent) = &facts.rubric.agent else {
        return;
    };
    // Not about any task: it belongs to the session's start.
    if facts.query.task_match {
        return;
    }
    let mut mine: Vec<&Arc<Item>> = items
        .iter()
        .map(|l| &l.item)
        .filter(|i| matches!(&i.body, Body::Experience(x) if &x.agent == agent))
        .filter(|i| !facts.excluded(i))
        .collect();
    mine.sort_by(|a, b| {
        (&a.source.file, a.source.pos.line).cmp(&(&b.source.file, b.source.pos.line))
    });
    for item in mine {
        out.push(entry(
            Section::Experience,
            item,
            1.0,
            BTreeMap::new(),
            Note::None,
        ));
    }
}
