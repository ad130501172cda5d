//! Seed 004, "RAG Ranking: Scoring Rules & Retrieval Algorithm": engagement
//! normalisation, recency decay, retrieval, the cold-start fallback to seeds,
//! and the archetype and format classifiers.

/// Days for the weight to halve.
pub const RECENCY_HALF_LIFE_DAYS: f64 = 14.0;
/// The decay constant as the seed writes it (`exp(-0.693 * days / 14)`).
pub const LN_2_APPROX: f64 = 0.693;
/// Exemplars injected at most.
pub const MAX_ANCESTORS: usize = 5;
/// Engagement when no performance data exists, and a new seed's weight.
pub const COLD_START_WEIGHT: f64 = 0.5;
/// Exemplars below this engagement never influence a prompt.
pub const MIN_ENGAGEMENT_SCORE: f64 = 0.1;
/// Candidates fetched before ranking.
pub const MAX_CANDIDATES: usize = 50;
/// The block's character cap.
pub const RAG_MAX_CHARS: usize = 2000;
/// Seeds injected at most in the cold-start path.
pub const MAX_COLD_START_SEEDS: usize = 5;

/// `performance_score / max_performance_score`; the cold-start 0.5 when
/// the maximum is not positive; `None` for an unscored exemplar (it is
/// filtered out).
pub fn engagement_score(performance_score: Option<f64>, max_performance_score: f64) -> Option<f64> {
    let score = performance_score?;
    if max_performance_score <= 0.0 {
        Some(COLD_START_WEIGHT)
    } else {
        Some(score / max_performance_score)
    }
}

/// `exp(-0.693 * days / 14)`; a date in the future counts as today.
pub fn decay(days_since_posted: f64) -> f64 {
    (-LN_2_APPROX * days_since_posted.max(0.0) / RECENCY_HALF_LIFE_DAYS).exp()
}

/// `engagement * decay(days)`.
pub fn retrieval_weight(engagement: f64, days_since_posted: f64) -> f64 {
    engagement * decay(days_since_posted)
}

/// One exemplar as retrieval sees it.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Candidate<T> {
    /// The caller's handle.
    pub item: T,
    pub performance_score: Option<f64>,
    pub days_since_posted: f64,
}

/// A retrieved exemplar with its numbers.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Retrieved<T> {
    pub item: T,
    pub engagement: f64,
    pub decay: f64,
    pub weight: f64,
}

/// The seed's retrieval: engagement >= 0.1 (unscored ones dropped), the 50
/// most engaging, sorted by retrieval weight, top 5.
pub fn retrieve<T: Copy>(candidates: &[Candidate<T>]) -> Vec<Retrieved<T>> {
    retrieve_keeping(candidates, |_| true)
}

/// [`retrieve`] over the candidates `keep` accepts, engagement still
/// normalised by the best of all of them (a session that has seen the best
/// exemplar gets the next ones, scored as before).
pub fn retrieve_keeping<T: Copy>(
    candidates: &[Candidate<T>],
    keep: impl Fn(&T) -> bool,
) -> Vec<Retrieved<T>> {
    let max = candidates
        .iter()
        .filter_map(|c| c.performance_score)
        .fold(0.0_f64, f64::max);
    let mut scored: Vec<Retrieved<T>> = candidates
        .iter()
        .filter(|c| keep(&c.item))
        .filter_map(|c| {
            let engagement = engagement_score(c.performance_score, max)?;
            (engagement >= MIN_ENGAGEMENT_SCORE).then(|| Retrieved {
                item: c.item,
                engagement,
                decay: decay(c.days_since_posted),
                weight: retrieval_weight(engagement, c.days_since_posted),
            })
        })
        .collect();
    scored.sort_by(|a, b| b.engagement.total_cmp(&a.engagement));
    scored.truncate(MAX_CANDIDATES);
    scored.sort_by(|a, b| b.weight.total_cmp(&a.weight));
    scored.truncate(MAX_ANCESTORS);
    scored
}

/// Classifies a reply into one of five archetypes (first rule that fires).
pub fn classify_reply(text: &str) -> &'static str {
    let t = text.trim().to_lowercase();
    let starts = |words: &[&str]| words.iter().any(|w| t.starts_with(w));
    let has = |words: &[&str]| words.iter().any(|w| t.contains(w));
    if t.ends_with('?') || starts(&["what", "how", "why", "have you", "do you"]) {
        "ask_question"
    } else if has(&[
        "i've found",
        "i've noticed",
        "i've experienced",
        "in my experience",
    ]) {
        "share_experience"
    } else if has(&[
        "data show",
        "stats show",
        "study show",
        "research show",
        "according to",
        "% of",
    ]) {
        "add_data"
    } else if has(&["actually", "however", "but"]) && has(&["i think", "i'd argue", "not sure"]) {
        "respectful_disagree"
    } else {
        "agree_and_expand"
    }
}

/// Classifies a tweet into one of seven formats (first rule that fires).
pub fn classify_tweet(text: &str) -> &'static str {
    let t = text.trim().to_lowercase();
    if t.contains("1.") && t.contains("2.") {
        "list"
    } else if t.contains("most people think") || t.contains("everyone says") {
        "most_people_think_x"
    } else if t.contains("actually,") && t.contains("but") {
        "contrarian_take"
    } else if t.contains("before:") || t.contains("after:") || t.contains("before ->") {
        "before_after"
    } else if t.ends_with('?') {
        "question"
    } else if (t.starts_with("tip:") || t.starts_with("pro tip:"))
        && t.contains("->")
        && t.chars().count() < 200
    {
        "tip"
    } else {
        "storytelling"
    }
}

/// The archetype of an exemplar whose file does not give one: replies (and
/// answers and comments, which are replies too) by the reply table,
/// everything else by the tweet-format table.
pub fn classify_archetype(kind: Option<&str>, content: &str) -> &'static str {
    match kind.map(|k| k.trim().to_ascii_lowercase()).as_deref() {
        Some("reply" | "answer" | "comment") => classify_reply(content),
        _ => classify_tweet(content),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn close(a: f64, b: f64) {
        assert!((a - b).abs() < 1e-3, "{a} != {b}");
    }

    #[test]
    fn decay_table_of_the_seed() {
        for (days, factor) in [
            (0.0, 1.000),
            (7.0, 0.707),
            (14.0, 0.500),
            (28.0, 0.250),
            (56.0, 0.063),
        ] {
            close(decay(days), factor);
        }
    }

    #[test]
    fn engagement_normalises_and_cold_starts() {
        close(engagement_score(Some(40.0), 80.0).unwrap(), 0.5);
        close(engagement_score(Some(80.0), 80.0).unwrap(), 1.0);
        assert_eq!(engagement_score(Some(0.0), 0.0), Some(COLD_START_WEIGHT));
        assert_eq!(engagement_score(None, 80.0), None);
        assert_eq!(COLD_START_WEIGHT, 0.5);
        close(retrieval_weight(1.0, 14.0), 0.5);
    }

    #[test]
    fn retrieval_filters_sorts_and_caps() {
        let mut candidates: Vec<Candidate<usize>> = (0..10)
            .map(|i| Candidate {
                item: i,
                performance_score: Some(100.0 - i as f64),
                days_since_posted: i as f64,
            })
            .collect();
        candidates.push(Candidate {
            item: 10,
            performance_score: Some(5.0),
            days_since_posted: 0.0,
        });
        candidates.push(Candidate {
            item: 11,
            performance_score: None,
            days_since_posted: 0.0,
        });
        let got = retrieve(&candidates);
        assert_eq!(got.len(), MAX_ANCESTORS);
        let ids: Vec<_> = got.iter().map(|r| r.item).collect();
        assert_eq!(ids, [0, 1, 2, 3, 4]);
        assert!(got.windows(2).all(|w| w[0].weight >= w[1].weight));
        // 5/100 = 0.05 < 0.1 and the unscored one are never retrieved,
        // even with room to spare.
        let few = [candidates[0], candidates[10], candidates[11]];
        let ids: Vec<_> = retrieve(&few).iter().map(|r| r.item).collect();
        assert_eq!(ids, [0]);
        // Leaving one out keeps the others' engagement as it was.
        let kept = retrieve_keeping(&candidates, |&i| i != 0);
        assert_eq!(kept[0].item, 1);
        close(kept[0].engagement, 0.99);
    }

    #[test]
    fn a_strong_old_post_can_lose_to_a_fresh_good_one() {
        let c = [
            Candidate {
                item: "old",
                performance_score: Some(100.0),
                days_since_posted: 56.0,
            },
            Candidate {
                item: "new",
                performance_score: Some(50.0),
                days_since_posted: 0.0,
            },
        ];
        assert_eq!(retrieve(&c)[0].item, "new");
    }

    #[test]
    fn reply_archetypes() {
        assert_eq!(
            classify_reply("Have you tried redb for this?"),
            "ask_question"
        );
        assert_eq!(classify_reply("How does it handle crashes"), "ask_question");
        assert_eq!(
            classify_reply("In my experience the debouncer is enough."),
            "share_experience"
        );
        assert_eq!(
            classify_reply("I've found that sockets beat HTTP here."),
            "share_experience"
        );
        assert_eq!(
            classify_reply("Research shows 40% of outages are config."),
            "add_data"
        );
        assert_eq!(classify_reply("According to the docs, no."), "add_data");
        assert_eq!(
            classify_reply("Actually, I think polling is fine."),
            "respectful_disagree"
        );
        assert_eq!(
            classify_reply("Great point, and it also works for logs."),
            "agree_and_expand"
        );
    }

    #[test]
    fn tweet_formats() {
        assert_eq!(
            classify_tweet("Three rules: 1. measure 2. cut 3. ship"),
            "list"
        );
        assert_eq!(
            classify_tweet("Most people think caching is easy."),
            "most_people_think_x"
        );
        assert_eq!(
            classify_tweet("Actually, tests are cheap. But flaky ones are not."),
            "contrarian_take"
        );
        assert_eq!(
            classify_tweet("Before: 40s builds. After: 4s."),
            "before_after"
        );
        assert_eq!(
            classify_tweet("Why do we still write YAML by hand?"),
            "question"
        );
        assert_eq!(classify_tweet("Tip: slow CI -> cache the registry"), "tip");
        assert_eq!(
            classify_tweet("Pro tip: long text without an arrow"),
            "storytelling"
        );
        assert_eq!(
            classify_tweet("We shipped memd last week and it went well."),
            "storytelling"
        );
        let long_tip = format!("tip: {} -> x", "a".repeat(200));
        assert_eq!(classify_tweet(&long_tip), "storytelling");
    }

    #[test]
    fn archetype_by_kind() {
        assert_eq!(
            classify_archetype(Some("Reply"), "Why not?"),
            "ask_question"
        );
        assert_eq!(classify_archetype(Some("tweet"), "Why not?"), "question");
        assert_eq!(classify_archetype(None, "1. a 2. b"), "list");
    }
}
