//! Seed 000, "Relevance Scoring Rubric for Memory Injection": the five
//! dimensions A-E for patterns, A + C for anti-patterns, category matching
//! for gotchas, and the selection thresholds and caps.

use crate::knowledge::item::{AntiPattern, Confidence, Pattern};

/// Dimension A cut-offs: a task similarity at or above each value earns
/// 3, 2 and 1 points ("directly addresses", "clearly relevant",
/// "tangentially related"). The similarity is the idf-weighted share of
/// the task's terms an item covers (see [`crate::text::bm25`]).
pub const TASK_CUTOFFS: [(f64, u8); 3] = [(0.55, 3), (0.3, 2), (0.12, 1)];

/// Dimension E: patterns learned within this many days get the bonus.
pub const RECENCY_WINDOW_DAYS: i64 = 30;
/// Dimension D: a high-confidence pattern applied this often is proven.
pub const PROVEN_APPLICATIONS: u32 = 3;

/// Score at or above which a pattern is shown with its code.
pub const FULL_THRESHOLD: u8 = 7;
/// Score at or above which a pattern is shown (description and solution).
pub const SHOW_THRESHOLD: u8 = 4;
/// Fallback score, shown only while fewer than [`FALLBACK_WHEN_FEWER_THAN`]
/// patterns reached [`SHOW_THRESHOLD`].
pub const FALLBACK_THRESHOLD: u8 = 3;
/// See [`FALLBACK_THRESHOLD`].
pub const FALLBACK_WHEN_FEWER_THAN: usize = 3;
/// Maximum patterns injected.
pub const MAX_PATTERNS: usize = 5;

/// Anti-patterns are shown at A + C >= this.
pub const ANTI_PATTERN_THRESHOLD: u8 = 3;
/// Maximum anti-patterns injected.
pub const MAX_ANTI_PATTERNS: usize = 3;
/// Maximum gotchas injected.
pub const MAX_GOTCHAS: usize = 3;

/// What the rubric knows of the query, normalised once per query the way
/// items are normalised when loaded (keywords in lower case, roles by
/// [`crate::knowledge::item::normalize_role`]), so comparisons are plain
/// equality.
#[derive(Debug, Clone, Default)]
pub struct RubricContext {
    /// The product, lower case.
    pub product: Option<String>,
    /// Environment tags, lower case.
    pub tags: Vec<String>,
    /// The agent role, normalised.
    pub agent: Option<String>,
    /// Categories core to the agent's role (config), lower case.
    pub domains: Vec<String>,
    /// Categories adjacent to the agent's role (config), lower case.
    pub adjacent_domains: Vec<String>,
    /// The task's words, lower case (unstemmed), for gotcha categories.
    pub task_words: Vec<String>,
    /// Unix seconds.
    pub now: i64,
}

/// Dimension A: similarity in `[0, 1]` to 0..=3 points.
pub fn task_points(similarity: f64) -> u8 {
    TASK_CUTOFFS
        .iter()
        .find(|(cutoff, _)| similarity >= *cutoff)
        .map_or(0, |&(_, points)| points)
}

fn any_in(list: &[String], wanted: &[String]) -> bool {
    list.iter().any(|x| wanted.contains(x))
}

/// Dimension B (0-2): 2 when the pattern was learned from or applies to the
/// query's product; 1 when its stack or tags overlap the query's tags.
pub fn product_points(p: &Pattern, item_tags: &[String], ctx: &RubricContext) -> u8 {
    if let Some(product) = &ctx.product {
        if p.learned_from.product.as_ref() == Some(product) || p.applies_to.contains(product) {
            return 2;
        }
    }
    if any_in(&p.stack, &ctx.tags) || any_in(item_tags, &ctx.tags) {
        return 1;
    }
    0
}

/// Dimension C (0-2): 2 when the item's roles name the agent or its
/// category is one of the agent's domains; 1 when adjacent. Roles are
/// normalised when loaded, the agent when the context is built.
pub fn role_points(
    roles: &[String],
    adjacent_roles: &[String],
    category: Option<&str>,
    ctx: &RubricContext,
) -> u8 {
    let Some(agent) = &ctx.agent else { return 0 };
    let names = |list: &[String]| list.iter().any(|r| r == agent);
    let in_domains = |domains: &[String]| category.is_some_and(|c| domains.iter().any(|d| d == c));
    if names(roles) || in_domains(&ctx.domains) {
        2
    } else if names(adjacent_roles) || in_domains(&ctx.adjacent_domains) {
        1
    } else {
        0
    }
}

/// Dimension D (0-2): high confidence and applied at least 3 times: 2;
/// high with fewer applications, or medium: 1; low or untested: 0.
/// `times_applied` includes applications recorded through feedback.
pub fn history_points(confidence: Option<Confidence>, times_applied: u32) -> u8 {
    match confidence {
        Some(Confidence::High) if times_applied >= PROVEN_APPLICATIONS => 2,
        Some(Confidence::High) | Some(Confidence::Medium) => 1,
        Some(Confidence::Low) | None => 0,
    }
}

/// Dimension E (0-1): learned within the last 30 days.
pub fn recency_points(learned_on: Option<i64>, now: i64) -> u8 {
    match learned_on {
        Some(date) if now - date <= RECENCY_WINDOW_DAYS * 86_400 => 1,
        _ => 0,
    }
}

/// A pattern's five dimensions.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct PatternScore {
    pub task: u8,
    pub product: u8,
    pub role: u8,
    pub history: u8,
    pub recency: u8,
}

impl PatternScore {
    /// The 0-10 total.
    pub fn total(&self) -> u8 {
        self.task + self.product + self.role + self.history + self.recency
    }
}

/// Scores a pattern on A-E, its task dimension A given (`task`:
/// [`task_points`] of the task similarity, or read from the decision to
/// show's estimate).
pub fn score_pattern(
    p: &Pattern,
    item_tags: &[String],
    task: u8,
    extra_applications: u32,
    ctx: &RubricContext,
) -> PatternScore {
    PatternScore {
        task,
        product: product_points(p, item_tags, ctx),
        role: role_points(&p.roles, &p.adjacent_roles, p.category.as_deref(), ctx),
        history: history_points(
            p.confidence,
            p.times_applied.saturating_add(extra_applications),
        ),
        recency: recency_points(p.learned_from.date, ctx.now),
    }
}

/// How a selected pattern is shown.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PatternTier {
    /// Score >= 7: with its code.
    Full,
    /// Score >= 4: description and solution.
    Summary,
    /// Score 3, because fewer than 3 reached 4.
    Fallback,
}

/// Applies seed 000's thresholds and cap to `(candidate, score)` pairs
/// already sorted best first. Returns the chosen candidates with their tier.
pub fn select_patterns<T: Copy>(ranked: &[(T, u8)]) -> Vec<(T, PatternTier)> {
    let qualified = ranked.iter().filter(|(_, s)| *s >= SHOW_THRESHOLD).count();
    ranked
        .iter()
        .filter_map(|&(c, score)| {
            let tier = if score >= FULL_THRESHOLD {
                PatternTier::Full
            } else if score >= SHOW_THRESHOLD {
                PatternTier::Summary
            } else if score >= FALLBACK_THRESHOLD && qualified < FALLBACK_WHEN_FEWER_THAN {
                PatternTier::Fallback
            } else {
                return None;
            };
            Some((c, tier))
        })
        .take(MAX_PATTERNS)
        .collect()
}

/// An anti-pattern's two dimensions.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct AntiPatternScore {
    pub task: u8,
    pub role: u8,
}

impl AntiPatternScore {
    /// The 0-5 total.
    pub fn total(&self) -> u8 {
        self.task + self.role
    }

    /// Whether it clears the threshold.
    pub fn shown(&self) -> bool {
        self.total() >= ANTI_PATTERN_THRESHOLD
    }
}

/// Scores an anti-pattern on A + C only, its task dimension A given.
pub fn score_anti_pattern(a: &AntiPattern, task: u8, ctx: &RubricContext) -> AntiPatternScore {
    AntiPatternScore {
        task,
        role: role_points(&a.roles, &a.adjacent_roles, a.category.as_deref(), ctx),
    }
}

/// Why a gotcha matches: its category is the agent's domain, or a keyword
/// of the task.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct GotchaMatch {
    pub domain: bool,
    pub task_keyword: bool,
}

impl GotchaMatch {
    /// Whether the gotcha is shown at all.
    pub fn shown(&self) -> bool {
        self.domain || self.task_keyword
    }

    /// 0-2, for ranking.
    pub fn total(&self) -> u8 {
        u8::from(self.domain) + u8::from(self.task_keyword)
    }
}

/// Matches a gotcha's (lower-case) category against the agent's domain (its configured
/// domains, or a word of its role name such as `backend` in
/// `backend-engineer`) and the task's words.
pub fn match_gotcha(category: Option<&str>, ctx: &RubricContext) -> GotchaMatch {
    let Some(category) = category.filter(|c| !c.is_empty()) else {
        return GotchaMatch {
            domain: false,
            task_keyword: false,
        };
    };
    let mut role_words = ctx.agent.iter().flat_map(|a| a.split('-'));
    let domain = ctx.domains.iter().any(|d| d == category) || role_words.any(|w| w == category);
    let mut cat_words = category
        .split(|c: char| !c.is_alphanumeric())
        .filter(|w| !w.is_empty())
        .peekable();
    let task_keyword = cat_words.peek().is_some()
        && cat_words.all(|w| {
            ctx.task_words
                .iter()
                .any(|t| t == w || t.strip_suffix('s') == Some(w) || w.strip_suffix('s') == Some(t))
        });
    GotchaMatch {
        domain,
        task_keyword,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::knowledge::item::{normalize_role, LearnedFrom};

    const DAY: i64 = 86_400;
    const NOW: i64 = 1_770_000_000;

    fn pattern() -> Pattern {
        Pattern {
            name: "Webhook Queue with Idempotency".into(),
            problem: "Duplicate webhook deliveries".into(),
            solution: "Use idempotency keys".into(),
            when_to_use: None,
            code: Some("queue.add(key)".into()),
            category: Some("webhooks".into()),
            roles: vec!["backend-engineer".into()],
            adjacent_roles: vec!["qa-engineer".into()],
            learned_from: LearnedFrom {
                product: Some("payflow".into()),
                date: Some(NOW - 10 * DAY),
                task: None,
            },
            applies_to: vec![],
            stack: vec!["fastify".into()],
            confidence: Some(Confidence::High),
            times_applied: 4,
        }
    }

    fn ctx(agent: &str, product: &str) -> RubricContext {
        RubricContext {
            product: Some(product.into()),
            tags: vec!["fastify".into()],
            agent: Some(normalize_role(agent)),
            now: NOW,
            ..RubricContext::default()
        }
    }

    #[test]
    fn the_seed_example_pattern_scores_full_marks_for_its_own_task() {
        // Task "implement webhook idempotency", pattern solves "duplicate
        // webhook deliveries": 3 + same product 2 + core role 2 + proven 2
        // + learned 10 days ago 1 = 10.
        let s = score_pattern(
            &pattern(),
            &[],
            task_points(0.9),
            0,
            &ctx("backend-engineer", "payflow"),
        );
        assert_eq!(
            s,
            PatternScore {
                task: 3,
                product: 2,
                role: 2,
                history: 2,
                recency: 1
            }
        );
        assert_eq!(s.total(), 10);
    }

    #[test]
    fn each_dimension_follows_its_table() {
        let p = pattern();
        // B: similar stack only -> 1; nothing -> 0.
        assert_eq!(product_points(&p, &[], &ctx("x", "other")), 1);
        let mut c = ctx("x", "other");
        c.tags.clear();
        assert_eq!(product_points(&p, &[], &c), 0);
        let mut applies = pattern();
        applies.learned_from.product = None;
        applies.applies_to = vec!["acme".into()];
        assert_eq!(product_points(&applies, &[], &ctx("x", "acme")), 2);
        // C: core 2, adjacent 1, unrelated 0; a configured domain is core.
        assert_eq!(
            role_points(&p.roles, &p.adjacent_roles, None, &ctx("qa engineer", "x")),
            1
        );
        assert_eq!(
            role_points(
                &p.roles,
                &p.adjacent_roles,
                None,
                &ctx("devops-engineer", "x")
            ),
            0
        );
        let mut devops = ctx("devops-engineer", "x");
        devops.domains = vec!["webhooks".into()];
        assert_eq!(role_points(&[], &[], Some("webhooks"), &devops), 2);
        // D.
        assert_eq!(history_points(Some(Confidence::High), 3), 2);
        assert_eq!(history_points(Some(Confidence::High), 2), 1);
        assert_eq!(history_points(Some(Confidence::Medium), 10), 1);
        assert_eq!(history_points(Some(Confidence::Low), 10), 0);
        assert_eq!(history_points(None, 10), 0);
        // Feedback applications count toward D.
        let mut fresh = pattern();
        fresh.times_applied = 1;
        let c = ctx("backend-engineer", "payflow");
        assert_eq!(
            score_pattern(&fresh, &[], task_points(0.9), 0, &c).history,
            1
        );
        assert_eq!(
            score_pattern(&fresh, &[], task_points(0.9), 2, &c).history,
            2
        );
        // E.
        assert_eq!(recency_points(Some(NOW - 30 * DAY), NOW), 1);
        assert_eq!(recency_points(Some(NOW - 31 * DAY), NOW), 0);
        assert_eq!(recency_points(None, NOW), 0);
        // A.
        assert_eq!(task_points(0.0), 0);
        assert_eq!(task_points(0.12), 1);
        assert_eq!(task_points(0.3), 2);
        assert_eq!(task_points(1.0), 3);
    }

    #[test]
    fn thresholds_seven_four_and_fallback() {
        let ranked = [("a", 9), ("b", 7), ("c", 6), ("d", 4), ("e", 3), ("f", 2)];
        let chosen = select_patterns(&ranked);
        assert_eq!(
            chosen,
            [
                ("a", PatternTier::Full),
                ("b", PatternTier::Full),
                ("c", PatternTier::Summary),
                ("d", PatternTier::Summary)
            ]
        );
        // Fewer than 3 at >= 4: score-3 patterns come in as fallback.
        let chosen = select_patterns(&[("a", 5), ("b", 3), ("c", 3), ("d", 2)]);
        assert_eq!(
            chosen,
            [
                ("a", PatternTier::Summary),
                ("b", PatternTier::Fallback),
                ("c", PatternTier::Fallback)
            ]
        );
        // Below 3 never.
        assert!(select_patterns(&[("a", 2), ("b", 1)]).is_empty());
    }

    #[test]
    fn at_most_five_patterns() {
        let ranked: Vec<_> = (0..9).map(|i| (i, 8)).collect();
        assert_eq!(select_patterns(&ranked).len(), MAX_PATTERNS);
        let ranked: Vec<_> = (0..9).map(|i| (i, if i == 0 { 4 } else { 3 })).collect();
        assert_eq!(select_patterns(&ranked).len(), MAX_PATTERNS);
    }

    #[test]
    fn anti_patterns_use_task_and_role_only() {
        let a = AntiPattern {
            name: "Using Mocks in E2E Tests".into(),
            problem: "mocks hide integration bugs".into(),
            instead: "Use real services with buildApp()".into(),
            category: None,
            roles: vec!["qa-engineer".into()],
            adjacent_roles: vec![],
        };
        let qa = ctx("qa-engineer", "x");
        let s = score_anti_pattern(&a, task_points(0.35), &qa);
        assert_eq!(s, AntiPatternScore { task: 2, role: 2 });
        assert!(s.shown());
        // Task match alone at 2 points is below the threshold of 3.
        let s = score_anti_pattern(&a, task_points(0.35), &ctx("designer", "x"));
        assert_eq!(s.total(), 2);
        assert!(!s.shown());
    }

    #[test]
    fn gotchas_match_domain_or_task_keyword() {
        let mut c = ctx("frontend-engineer", "x");
        c.task_words = vec!["fix".into(), "ports".into(), "dev".into(), "server".into()];
        assert_eq!(
            match_gotcha(Some("frontend"), &c),
            GotchaMatch {
                domain: true,
                task_keyword: false
            }
        );
        assert_eq!(
            match_gotcha(Some("port"), &c),
            GotchaMatch {
                domain: false,
                task_keyword: true
            }
        );
        assert!(!match_gotcha(Some("database"), &c).shown());
        assert!(!match_gotcha(None, &c).shown());
    }
}
