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

/// A prompt's mark: a stable 64-bit FNV-1a hash of its words (whitespace
/// runs count as one space, ends trimmed). The audit keeps the mark of the
/// prompt each item was shown on, never the prompt itself, and the
/// evaluation finds that prompt in the transcript by it.
pub fn prompt_mark(prompt: &str) -> u64 {
    crate::text::fnv1a(
        prompt
            .split_whitespace()
            .enumerate()
            .flat_map(|(i, word)| (i > 0).then_some(b' ').into_iter().chain(word.bytes())),
    )
}

/// What the agent did after the user's prompt marked `mark` (see
/// [`prompt_mark`]): [`agent_work`] of the turns after the first user turn
/// with that mark. Without a mark (an item shown at session start), or
/// when the prompt is not in these turns, all of them.
pub fn agent_work_after(turns: &[transcript::Turn], mark: Option<u64>) -> String {
    let start = mark
        .and_then(|mark| {
            turns
                .iter()
                .position(|t| t.role == transcript::Role::User && prompt_mark(&t.text) == mark)
        })
        .map_or(0, |i| i + 1);
    agent_work(&turns[start..])
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

#[cfg(test)]
mod tests {
    use super::transcript::{Role, Turn};
    use super::*;

    fn turn(role: Role, text: &str) -> Turn {
        Turn {
            role,
            text: text.to_string(),
        }
    }

    #[test]
    fn marks_ignore_spacing_and_nothing_else() {
        assert_eq!(
            prompt_mark(" fix  the\ncache "),
            prompt_mark("fix the cache")
        );
        assert_ne!(prompt_mark("fix the cache"), prompt_mark("fix the Cache"));
        // FNV-1a's published value for "a": stable across builds.
        assert_eq!(prompt_mark("a"), 0xaf63_dc4c_8601_ec8c);
    }

    #[test]
    fn work_is_read_from_after_the_prompt_that_showed_the_item() {
        let turns = [
            turn(Role::User, "set up the cache"),
            turn(Role::Assistant, "I added a redis cache"),
            turn(Role::User, "now the timezone bug"),
            turn(Role::Assistant, "stored timestamps in utc"),
        ];
        let after = agent_work_after(&turns, Some(prompt_mark("now the  timezone bug")));
        assert_eq!(after, "stored timestamps in utc\n");
        // At session start, or when the prompt is not there: everything.
        let all = "I added a redis cache\nstored timestamps in utc\n";
        assert_eq!(agent_work_after(&turns, None), all);
        assert_eq!(agent_work_after(&turns, Some(prompt_mark("other"))), all);
    }
}
