//! Evaluation of finished sessions (seed 001's pipeline): read what the
//! transcript added since the last evaluation, ask a judge whether each
//! shown item was relevant, and feed the answers to the per-tag relevance.

pub mod judge;
pub mod transcript;

pub use judge::{Judge, JudgeInput, ShownItem};

/// Most transcript text handed to a judge: the end of the new part.
pub const MAX_EXCERPT_CHARS: usize = 100_000;

/// The new turns as `role: text` lines, keeping the last
/// [`MAX_EXCERPT_CHARS`] characters.
pub fn excerpt(turns: &[transcript::Turn]) -> String {
    let text: String = turns
        .iter()
        .map(|t| {
            let who = match t.role {
                transcript::Role::User => "user",
                transcript::Role::Assistant => "assistant",
            };
            format!("{who}: {}\n", t.text)
        })
        .collect();
    let count = text.chars().count();
    if count <= MAX_EXCERPT_CHARS {
        return text;
    }
    text.chars().skip(count - MAX_EXCERPT_CHARS).collect()
}

/// What the agent did in the new turns (its replies, tool calls and their
/// inputs, edits), without the user's prompts, tool outputs or anything the
/// harness injected: the built-in judge's only evidence. Keeps the last
/// [`MAX_EXCERPT_CHARS`] characters.
pub fn agent_work(turns: &[transcript::Turn]) -> String {
    let text: String = turns
        .iter()
        .filter(|t| t.role == transcript::Role::Assistant)
        .map(|t| format!("{}\n", t.text))
        .collect();
    let count = text.chars().count();
    if count <= MAX_EXCERPT_CHARS {
        return text;
    }
    text.chars().skip(count - MAX_EXCERPT_CHARS).collect()
}
