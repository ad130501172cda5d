//! Seed 002, "Smart context selection with relevance scoring": recency,
//! importance by type, agent match and keyword match.

use crate::knowledge::item::ObservationType;

/// Weight of recency.
pub const RECENCY_WEIGHT: f64 = 0.4;
/// Weight of importance.
pub const IMPORTANCE_WEIGHT: f64 = 0.3;
/// Weight of agent match.
pub const AGENT_WEIGHT: f64 = 0.2;
/// Weight of keyword match.
pub const KEYWORD_WEIGHT: f64 = 0.1;
/// Recency decays as `exp(-hours / RECENCY_HOURS)`.
pub const RECENCY_HOURS: f64 = 24.0;
/// Conservative mode keeps scores at or above this.
pub const CONSERVATIVE_MIN: f64 = 0.6;
/// Aggressive mode keeps scores at or above this.
pub const AGGRESSIVE_MIN: f64 = 0.3;
/// Observations shown per query.
pub const MAX_OBSERVATIONS: usize = 5;

/// Importance by type: decision 1.0, problem 0.9, warning 0.8, refactor 0.7,
/// success 0.6, discovery 0.5, feature and bugfix 0.4, pattern and solution
/// 0.3.
pub fn importance(kind: ObservationType) -> f64 {
    match kind {
        ObservationType::Decision => 1.0,
        ObservationType::Problem => 0.9,
        ObservationType::Warning => 0.8,
        ObservationType::Refactor => 0.7,
        ObservationType::Success => 0.6,
        ObservationType::Discovery => 0.5,
        ObservationType::Feature | ObservationType::Bugfix => 0.4,
        ObservationType::Pattern | ObservationType::Solution => 0.3,
    }
}

/// `exp(-hours_ago / 24)`; an instant in the future counts as now.
pub fn recency(hours_ago: f64) -> f64 {
    (-hours_ago.max(0.0) / RECENCY_HOURS).exp()
}

/// The share of `keywords` found in `content`, case-insensitively; 0 when
/// there are none.
pub fn keyword_overlap(content: &str, keywords: &[String]) -> f64 {
    Keywords::new(keywords).overlap(content)
}

/// Seed 002's keywords prepared once for many contents: lower-cased, each
/// with a SIMD substring searcher. An ASCII content (the common case) is
/// lower-cased into a reused buffer, not a new string per content.
#[derive(Debug, Clone)]
pub struct Keywords {
    lower: Vec<String>,
    /// A searcher per ASCII keyword; a non-ASCII keyword cannot occur in
    /// an ASCII content.
    ascii: Vec<memchr::memmem::Finder<'static>>,
}

impl Keywords {
    /// `keywords`, trimmed and lower-cased; empty ones dropped.
    pub fn new(keywords: &[String]) -> Self {
        let lower: Vec<String> = keywords
            .iter()
            .map(|k| k.trim().to_lowercase())
            .filter(|k| !k.is_empty())
            .collect();
        let ascii = lower
            .iter()
            .filter(|k| k.is_ascii())
            .map(|k| memchr::memmem::Finder::new(k.as_bytes()).into_owned())
            .collect();
        Keywords { lower, ascii }
    }

    /// The share of the keywords found in `content`, case-insensitively.
    pub fn overlap(&self, content: &str) -> f64 {
        if self.lower.is_empty() {
            return 0.0;
        }
        let found = if content.is_ascii() {
            thread_local! {
                static LOWER: std::cell::RefCell<Vec<u8>> = const { std::cell::RefCell::new(Vec::new()) };
            }
            LOWER.with_borrow_mut(|lower| {
                lower.clear();
                lower.extend(content.bytes().map(|b| b.to_ascii_lowercase()));
                self.ascii
                    .iter()
                    .filter(|k| k.find(lower).is_some())
                    .count()
            })
        } else {
            let content = content.to_lowercase();
            self.lower
                .iter()
                .filter(|k| content.contains(k.as_str()))
                .count()
        };
        found as f64 / self.lower.len() as f64
    }
}

/// An observation's four factors, each in `[0, 1]`.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct ObservationScore {
    pub recency: f64,
    pub importance: f64,
    pub agent: f64,
    pub keyword: f64,
}

impl ObservationScore {
    /// `0.4 recency + 0.3 importance + 0.2 agent + 0.1 keyword`, in `[0, 1]`.
    pub fn total(&self) -> f64 {
        self.recency * RECENCY_WEIGHT
            + self.importance * IMPORTANCE_WEIGHT
            + self.agent * AGENT_WEIGHT
            + self.keyword * KEYWORD_WEIGHT
    }
}

/// Scores one observation; `keyword_match` comes from [`keyword_overlap`].
pub fn score(
    kind: ObservationType,
    hours_ago: f64,
    same_agent: bool,
    keyword_match: f64,
) -> ObservationScore {
    ObservationScore {
        recency: recency(hours_ago),
        importance: importance(kind),
        agent: if same_agent { 1.0 } else { 0.0 },
        keyword: keyword_match,
    }
}

/// The minimum score kept in a mode.
pub fn min_score(mode: crate::protocol::Mode) -> f64 {
    match mode {
        crate::protocol::Mode::Conservative => CONSERVATIVE_MIN,
        crate::protocol::Mode::Aggressive => AGGRESSIVE_MIN,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::protocol::Mode;
    use ObservationType::*;

    /// Scores with seed 002's keyword match, lower-casing as the engine does.
    fn score_text(
        kind: ObservationType,
        content: &str,
        hours: f64,
        same_agent: bool,
        keywords: &[String],
    ) -> ObservationScore {
        let keywords: Vec<String> = keywords.iter().map(|k| k.to_lowercase()).collect();
        score(
            kind,
            hours,
            same_agent,
            keyword_overlap(&content.to_lowercase(), &keywords),
        )
    }

    const NONE: &[String] = &[];

    #[test]
    fn case_1_recent_beats_old() {
        let recent = score_text(Feature, "x", 1.0 / 60.0, false, NONE).total();
        let old = score_text(Feature, "x", 24.0, false, NONE).total();
        assert!(recent > old);
        assert!((recency(24.0) - (-1f64).exp()).abs() < 1e-12);
    }

    #[test]
    fn case_2_decision_beats_pattern() {
        let decision = score_text(Decision, "x", 5.0, false, NONE).total();
        let pattern = score_text(Pattern, "x", 5.0, false, NONE).total();
        assert!(decision > pattern);
        assert!((decision - pattern - 0.3 * (1.0 - 0.3)).abs() < 1e-12);
        let table = [
            (Decision, 1.0),
            (Problem, 0.9),
            (Warning, 0.8),
            (Refactor, 0.7),
            (Success, 0.6),
            (Discovery, 0.5),
            (Feature, 0.4),
            (Bugfix, 0.4),
            (Pattern, 0.3),
            (Solution, 0.3),
        ];
        for (kind, weight) in table {
            assert_eq!(importance(kind), weight);
        }
    }

    #[test]
    fn case_3_same_agent_gets_twenty_percent() {
        let same = score_text(Problem, "x", 3.0, true, NONE).total();
        let other = score_text(Problem, "x", 3.0, false, NONE).total();
        assert!((same - other - 0.2).abs() < 1e-12);
    }

    #[test]
    fn case_4_keywords_add_a_bonus() {
        let kw = vec!["redb".to_string(), "Socket".to_string()];
        let both = score_text(Refactor, "Moved the socket code onto redb", 3.0, false, &kw);
        let half = score_text(Refactor, "Moved the socket code", 3.0, false, &kw);
        let none = score_text(Refactor, "Renamed a module", 3.0, false, &kw);
        assert_eq!(both.keyword, 1.0);
        assert_eq!(
            keyword_overlap("Übergröße ÄRGER", &["ärger".to_string(), "x".to_string()]),
            0.5
        );
        assert_eq!(half.keyword, 0.5);
        assert!((both.total() - none.total() - 0.1).abs() < 1e-12);
    }

    #[test]
    fn the_prepared_keywords_match_as_lower_cased_substrings() {
        let cases: &[(&str, &[&str])] = &[
            (
                "Moved the SOCKET code onto redb",
                &["socket", "ReDB", "code"],
            ),
            ("testing the tests", &["test", "testing", "tests", "sting"]),
            ("no match here", &["absent", "  ", "x-y"]),
            ("Übergröße ÄRGER", &["ärger", "gröSSe", "x"]),
            ("plain ascii", &["ärger", "ascii"]),
            ("", &["a"]),
        ];
        for (content, keywords) in cases {
            let keywords: Vec<String> = keywords.iter().map(|k| k.to_string()).collect();
            let lower = content.to_lowercase();
            let kept: Vec<String> = keywords
                .iter()
                .map(|k| k.trim().to_lowercase())
                .filter(|k| !k.is_empty())
                .collect();
            let expected = kept.iter().filter(|k| lower.contains(k.as_str())).count() as f64
                / kept.len() as f64;
            assert_eq!(
                Keywords::new(&keywords).overlap(content),
                expected,
                "{content:?} {keywords:?}"
            );
        }
        assert_eq!(Keywords::new(&[]).overlap("anything"), 0.0);
    }

    #[test]
    fn case_5_conservative_keeps_only_point_six_and_up() {
        // 1 minute old decision by the same agent: ~1.0 -> kept.
        let strong = score_text(Decision, "x", 1.0 / 60.0, true, NONE).total();
        assert!(strong >= min_score(Mode::Conservative));
        // Day-old warning from another agent: 0.4/e + 0.24 = 0.387 -> dropped.
        let weak = score_text(Warning, "x", 24.0, false, NONE).total();
        assert!((weak - (0.4 * (-1f64).exp() + 0.24)).abs() < 1e-12);
        assert!(weak < min_score(Mode::Conservative));
    }

    #[test]
    fn case_6_aggressive_lowers_the_threshold_to_point_three() {
        let weak = score_text(Warning, "x", 24.0, false, NONE).total();
        assert!(weak >= min_score(Mode::Aggressive));
        let weaker = score_text(Solution, "x", 240.0, false, NONE).total();
        assert!(weaker < min_score(Mode::Aggressive));
        assert_eq!(min_score(Mode::Aggressive), 0.3);
        assert_eq!(min_score(Mode::Conservative), 0.6);
    }

    #[test]
    fn scores_stay_in_unit_range() {
        let max = score_text(Decision, "a b", 0.0, true, &["a".to_string()]).total();
        assert!((max - 1.0).abs() < 1e-12);
        let min = score_text(Solution, "", 1e9, false, NONE).total();
        assert!((0.0..=1.0).contains(&min));
    }
}
