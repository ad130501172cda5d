use super::*;
use crate::learning::noise::MIN_OWN_SHARE;
use crate::learning::tag_relevance::{verdict, Evidence, Scope, TagVerdict};

#[test]
fn every_item_learned_about_may_be_known_by_its_spread() {
    use crate::scoring::lesson::spread_of;
    let mut learned = Learned::default();
    let tags = vec!["python".to_string()];
    assert!(!learned.may_know(spread_of("L-1")));
    learned.judge("L-1", &[], &tags, Match::Strong, 1.0, 2.0);
    learned.pins_entry("L-2").push(Pin {
        manual: true,
        tags: tags.clone(),
    });
    let mut restored = Learned::default();
    restored.set_scores("L-3", Some(learned.tag_relevance()["L-1"].clone()));
    restored.set_pins("L-4", Some(learned.pins()["L-2"].clone()));
    restored.set_pins("L-5", Some(Vec::new()));
    for (state, id, about) in [
        (&learned, "L-1", true),
        (&learned, "L-2", true),
        (&learned, "L-3", false),
        (&restored, "L-3", true),
        (&restored, "L-4", true),
        (&restored, "L-5", false),
    ] {
        assert_eq!(state.learned_about(id), about, "{id}");
        assert_eq!(state.may_know(spread_of(id)), about, "{id}");
    }
    assert!(!restored.pins().contains_key("L-5"));
    // Once its records are gone it may still be known by its spread,
    // never learned about.
    restored.set_scores("L-3", None);
    assert!(!restored.learned_about("L-3"));
    assert!(restored.may_know(spread_of("L-3")));
}

#[test]
fn seen_tags_answer_as_seen_tag_does_in_any_case() {
    let mut learned = Learned::default();
    // "Java" kept with its capital (an old store) and a titlecase
    // letter (ǅ, not upper case, lower case ǆ).
    for tag in ["python", "go", "straße", "c++", "Java", "ǆango"] {
        learned.tag_stats.insert(tag.to_string(), (1, 1));
    }
    let seen = learned.seen_tags();
    for word in [
        "python", "Python", "PYTHON", "go", "Go", "STRASSE", "Straße", "c++", "C++", "rust",
        "pythons", "g", "", "İ", "Java", "java", "JAVA", "ǅango", "ǆango",
    ] {
        assert_eq!(seen.contains(word), learned.seen_tag(word), "{word}");
        if word.is_ascii() {
            assert_eq!(
                seen.contains_hash(crate::scoring::lesson::tag_hash(word)),
                learned.seen_tag(word),
                "{word} by its hash"
            );
        }
    }
    assert!(seen.contains("GO") && seen.contains("Straße") && !seen.contains("java"));
}

fn tags(t: &[&str]) -> Vec<String> {
    t.iter().map(|s| s.to_string()).collect()
}

#[test]
fn negative_evaluations_follow_the_seed() {
    let mut l = Learned::default();
    let (updated, _) = l.judge("L-1", &[], &tags(&["python"]), Match::Strong, -1.0, 1.0);
    assert!((updated[0].1.score + 0.3).abs() < 1e-9);
    let (updated, _) = l.judge("L-1", &[], &tags(&["python"]), Match::Strong, -1.0, 1.0);
    assert!((updated[0].1.score + 0.51).abs() < 1e-9);
    assert_eq!(updated[0].1.negative, 2);
}

#[test]
fn relevance_pins_at_five_sessions_for_the_context_and_unpins() {
    let mut l = Learned::default();
    let t = tags(&["acme", "linux", "rust"]);
    let mut pinned_at = None;
    for i in 1..=8 {
        let (_, changes) = l.judge("L-2", &[], &t, Match::Strong, 1.0, 1.0);
        if changes.iter().any(|c| matches!(c, PinChange::Pinned(_))) {
            pinned_at = Some(i);
        }
    }
    // 0.3, 0.51, 0.657, 0.76 (4 sessions), 0.832 with 5: pinned at 5,
    // one judged session counting once whatever its three tags.
    assert_eq!(pinned_at, Some(5));
    assert!(l.is_pinned("L-2", &t));
    assert!(!l.is_pinned("L-2", &tags(&["linux"])), "scoped, not global");
    let mut unpinned = false;
    for _ in 0..10 {
        let (_, changes) = l.judge("L-2", &[], &t, Match::Strong, -1.0, 1.0);
        if changes.iter().any(|c| matches!(c, PinChange::Unpinned(_))) {
            unpinned = true;
            break;
        }
    }
    assert!(unpinned && !l.is_pinned("L-2", &t));
}

#[test]
fn a_pin_is_scoped_to_the_tags_that_tell_its_context_apart() {
    let mut l = Learned::default();
    let a = tags(&["acme", "linux", "python"]);
    let b = tags(&["linux", "other", "python"]);
    let c = tags(&["go", "linux", "third"]);
    for t in [&a, &b, &c] {
        l.observe_session(t);
    }
    for _ in 0..6 {
        l.judge("L-5", &[], &a, Match::Strong, 1.0, 1.0);
    }
    assert_eq!(l.pins_of("L-5")[0].tags, tags(&["acme", "python"]));
    assert!(l.is_pinned("L-5", &a));
    assert!(!l.is_pinned("L-5", &b));
    assert!(!l.is_pinned("L-5", &c));
    // A verdict elsewhere does not touch the pin.
    for _ in 0..6 {
        l.judge("L-5", &[], &c, Match::Strong, -1.0, 1.0);
    }
    assert!(l.is_pinned("L-5", &a));
}

#[test]
fn matches_pin_only_with_positive_evidence_and_an_unpin_holds() {
    let mut l = Learned::default();
    let t = tags(&["cli", "rust"]);
    for i in 1..=40 {
        assert_eq!(l.shown("L-4", &t), ("cli,rust".to_string(), i, None));
    }
    assert!(!l.is_pinned("L-4", &t), "showings alone never pin");
    for _ in 0..3 {
        l.judge("L-4", &[], &t, Match::Strong, 1.0, 1.0);
    }
    assert!(
        !l.is_pinned("L-4", &t),
        "three sessions: not the relevance rule"
    );
    assert_eq!(
        l.shown("L-4", &t),
        ("cli,rust".to_string(), 41, Some(t.clone()))
    );
    assert!(l.is_pinned("L-4", &tags(&["cli", "rust", "linux"])));
    assert!(!l.is_pinned("L-4", &tags(&["rust"])));
    // Feedback unpins; the next showings do not pin it again.
    for _ in 0..3 {
        l.judge("L-4", &[], &t, Match::Strong, -1.0, 2.0);
    }
    assert!(!l.is_pinned("L-4", &t));
    for _ in 0..20 {
        assert_eq!(l.shown("L-4", &t).2, None);
    }
}

/// L-11 in a billing python context: relevant three times where its
/// topic came up (strong matches), then irrelevant `passing` times on
/// prompts about other topics that share a word.
fn judged_in_passing(passing: usize) -> (Learned, Vec<String>) {
    let mut l = Learned::default();
    let here = tags(&["billing", "python"]);
    for _ in 0..3 {
        l.judge("L-11", &[], &here, Match::Strong, 1.0, 1.0);
    }
    for _ in 0..passing {
        l.judge("L-11", &[], &here, Match::Weak, -1.0, 1.0);
    }
    (l, here)
}

#[test]
fn a_verdict_on_a_weak_match_counts_only_for_weak_matches() {
    let (mut l, here) = judged_in_passing(6);
    let strong = l.assess("L-11", &[], &here, Match::Strong);
    assert_eq!(strong.here.evals, 3.0, "the weak verdicts are not here");
    let weak = l.assess("L-11", &[], &here, Match::Weak);
    assert_eq!(weak.read, Match::Weak);
    assert_eq!(weak.verdict, TagVerdict::Filtered);
    assert_eq!(
        weak.here.evals, 9.0,
        "strong verdicts count for weak matches too"
    );
    // Its record here over every showing filters it: on strong matches
    // a re-check (with its boost), until a strong match's verdict.
    assert!(matches!(strong.verdict, TagVerdict::Probation(b) if b > 0.0));
    assert_eq!(strong.every_showing.map(|e| e.evals), Some(9.0));
    // One relevant verdict there: -0.805 -> -0.264 over every showing,
    // still a re-check; two: 0.115, over the line but on trial, still
    // a re-check; three: 0.380, as many for it since the run against it
    // as that run counts (three), still on trial; four: kept.
    l.judge("L-11", &[], &here, Match::Strong, 1.0, 1.0);
    let strong = l.assess("L-11", &[], &here, Match::Strong);
    assert!(matches!(strong.verdict, TagVerdict::Probation(_)));
    assert!(!strong.every_showing.unwrap().trial);
    for _ in 0..2 {
        l.judge("L-11", &[], &here, Match::Strong, 1.0, 1.0);
        let strong = l.assess("L-11", &[], &here, Match::Strong);
        assert!(matches!(strong.verdict, TagVerdict::Probation(_)));
        let all = strong.every_showing.unwrap();
        assert!(all.trial && all.level > l.filter_line(), "{all:?}");
    }
    l.judge("L-11", &[], &here, Match::Strong, 1.0, 1.0);
    let strong = l.assess("L-11", &[], &here, Match::Strong);
    assert!(matches!(strong.verdict, TagVerdict::Boost(b) if b > 0.0));
    assert_eq!(strong.every_showing, None);
    // The seed's arithmetic in each: three relevant, then six
    // irrelevant (0.657 x 0.7^6 - (1 - 0.7^6)) on weak matches only,
    // then four relevant on strong matches.
    let relevant = |s: f64| s * 0.7 + 0.3;
    let w = l.tag_score("L-11", "~python").unwrap();
    let weak_score = 0.657 * 0.7f64.powi(6) - (1.0 - 0.7f64.powi(6));
    assert!((w.score - relevant(relevant(relevant(relevant(weak_score))))).abs() < 1e-9);
    let strong_score = relevant(relevant(relevant(relevant(0.657))));
    assert!((l.tag_score("L-11", "python").unwrap().score - strong_score).abs() < 1e-9);
    // Irrelevant on strong matches: filtered for both.
    for _ in 0..4 {
        l.judge("L-11", &[], &here, Match::Strong, -1.0, 1.0);
    }
    assert_eq!(
        l.assess("L-11", &[], &here, Match::Strong).verdict,
        TagVerdict::Filtered
    );
    // Held-back prompts (strong matches) age only its evidence for them.
    let aged = l.hold_back("L-11", &[], &here);
    assert!(
        aged.iter().all(|(t, _)| !t.starts_with(WEAK_MATCH)),
        "{aged:?}"
    );
}

#[test]
fn a_noisy_judges_passing_verdicts_do_not_make_a_re_check() {
    let (mut l, here) = judged_in_passing(10);
    assert!(matches!(
        l.assess("L-11", &[], &here, Match::Strong).verdict,
        TagVerdict::Probation(_)
    ));
    // A judge that contradicts itself on half the pairs of its verdicts
    // elsewhere (a coin): its noise is all of a score's spread.
    let elsewhere = tags(&["search", "go"]);
    for verdict in [1.0, -1.0].repeat(15) {
        l.judge("L-12", &[], &elsewhere, Match::Strong, verdict, 1.0);
    }
    l.recount_agreement();
    assert!(l.boost_share() < MIN_OWN_SHARE, "{}", l.boost_share());
    // Its record over every showing is still below the (lowered) line.
    let all = l.assess("L-11", &[], &here, Match::Weak);
    assert!(all.here.level < l.filter_line(), "{all:?}");
    let strong = l.assess("L-11", &[], &here, Match::Strong);
    assert!(matches!(strong.verdict, TagVerdict::Boost(_)), "{strong:?}");
    assert_eq!(strong.every_showing, None);
}

#[test]
fn an_item_judged_before_weak_matches_were_kept_apart_reads_as_before() {
    let mut l = Learned::default();
    let here = tags(&["python"]);
    for _ in 0..3 {
        l.judge("L-12", &[], &here, Match::Strong, -1.0, 1.0);
    }
    // As an upgraded store has it: no weak-match evidence, no records
    // per context.
    l.tag_relevance
        .get_mut("L-12")
        .unwrap()
        .retain(|t, _| !t.starts_with(WEAK_MATCH) && !t.starts_with(CONTEXT_RECORD));
    let weak = l.assess("L-12", &[], &here, Match::Weak);
    assert_eq!(weak.read, Match::Strong);
    assert_eq!(weak.verdict, TagVerdict::Filtered);
    // Its next verdict, in another context, gives it weak-match evidence
    // equal to what it had: still filtered on weak matches here.
    let (updated, _) = l.judge("L-12", &[], &tags(&["go"]), Match::Strong, 1.0, 1.0);
    assert!(updated.iter().any(|(t, _)| t == "~python"), "{updated:?}");
    let weak = l.assess("L-12", &[], &here, Match::Weak);
    assert_eq!(weak.read, Match::Weak);
    assert_eq!(weak.verdict, TagVerdict::Filtered);
    assert_eq!(
        l.tag_score("L-12", "~python"),
        l.tag_score("L-12", "python")
    );
    // A journal of that era replays to the same: its judgements count
    // for every showing.
    let old = |raw: f64, t: &[&str]| Judgement {
        session: None,
        tags: tags(t),
        raw,
        weight: 1.0,
    };
    let mut journal = vec![old(-1.0, &["python", "*"]); 3];
    journal.push(Judgement {
        tags: l.judged_tags(&[], &tags(&["go"]), Match::Strong),
        ..old(1.0, &[])
    });
    assert!(l.replays_to_current("L-12", &journal));
    assert_eq!(Match::Weak.key(EVERYWHERE), WEAK_EVERYWHERE);
    assert_eq!(workspace_tag(" Python "), Some("python".to_string()));
    for reserved in ["", " ", "*", "!go", "~python", "@python,search"] {
        assert_eq!(workspace_tag(reserved), None, "{reserved:?}");
    }
    assert_eq!(Match::of_band(0), Match::Strong, "session start");
    assert_eq!(Match::of_band(1), Match::Weak);
    assert_eq!(Match::of_band(2), Match::Strong);
    assert_eq!(Match::of_band(3), Match::Strong);
}

#[test]
fn held_back_prompts_age_only_the_evidence_that_held_it_back() {
    let mut l = Learned::default();
    let here = tags(&["billing", "python"]);
    assert!(l.hold_back("L-6", &[], &here).is_empty(), "nothing to age");
    for _ in 0..6 {
        l.judge("L-6", &[], &here, Match::Strong, -1.0, 1.0);
    }
    l.judge("L-6", &[], &tags(&["go"]), Match::Strong, 1.0, 1.0);
    assert_eq!(verdict(l.evidence("L-6", &here)), TagVerdict::Filtered);
    // Six judged sessions, all against it, wait 3 x 6 = 18 prompts.
    let mut aged = Vec::new();
    for _ in 0..17 {
        aged = l.hold_back("L-6", &[], &tags(&["billing", "linux", "python"]));
    }
    assert_eq!(aged.len(), 3, "only the tags with evidence: {aged:?}");
    assert!(aged.iter().any(|(t, _)| t == EVERYWHERE));
    assert_eq!(verdict(l.evidence("L-6", &here)), TagVerdict::Filtered);
    l.hold_back("L-6", &[], &here);
    assert!(matches!(
        verdict(l.evidence("L-6", &here)),
        TagVerdict::Probation(_)
    ));
    assert_eq!(l.tag_score("L-6", "go").unwrap().held, 0);
    // Judged again where it was held back: filtered again.
    l.judge("L-6", &[], &here, Match::Strong, -1.0, 1.0);
    assert_eq!(verdict(l.evidence("L-6", &here)), TagVerdict::Filtered);
}

#[test]
fn a_context_counts_against_a_lesson_on_its_own_record() {
    let mut l = Learned::default();
    let search = tags(&["python", "django", "search"]);
    let billing = tags(&["python", "django", "billing"]);
    let fresh = tags(&["go", "gin", "cli"]);
    for t in [&search, &billing, &fresh, &tags(&["rust", "axum", "web"])] {
        l.observe_session(t);
    }
    // Irrelevant in one repository, often; then relevant once in
    // another on the same stack.
    for _ in 0..15 {
        l.shown("L-11", &search);
        l.judge("L-11", &[], &search, Match::Strong, -1.0, 1.0);
    }
    l.shown("L-11", &billing);
    l.judge("L-11", &[], &billing, Match::Strong, 1.0, 1.0);
    // Over the second's tags the first's verdicts outweigh it, but its
    // own record there says relevant: only the first is against it.
    assert!(l.evidence("L-11", &billing).level < 0.0);
    assert_eq!(l.contexts_judged("L-11", Match::Strong), 2);
    assert_eq!(l.contexts_against("L-11", Match::Strong), 1);
    // So its record everywhere, well below the seed's line, does not
    // decide in a third repository.
    assert!(l.evidence("L-11", &[EVERYWHERE.to_string()]).level < -0.1);
    let there = l.assess("L-11", &[], &fresh, Match::Strong);
    assert_eq!(there.everywhere, None);
    assert_eq!(there.verdict, TagVerdict::Boost(0.0));
}

/// `item` shown in the context of `t` and judged `raws` there, one
/// session each, on strong matches; the judge's agreement recounted.
fn verdicts(l: &mut Learned, item: &str, t: &[String], raws: &[f64]) {
    for &raw in raws {
        l.shown(item, t);
        l.judge(item, &[], t, Match::Strong, raw, 1.0);
    }
    l.recount_agreement();
}

#[test]
fn two_irrelevant_verdicts_filter_on_the_own_record_once_the_judge_is_read() {
    let mut l = Learned::default();
    let here = tags(&["python", "django", "search"]);
    let other = tags(&["go", "gin", "cli"]);
    for t in [&here, &other] {
        l.observe_session(t);
    }
    verdicts(&mut l, "L-1", &here, &[-1.0, -1.0]);
    // Before the judge's error is read, the seed's three sessions.
    assert_eq!(l.agreement().judge_error(), None);
    let before = l.assess("L-1", &[], &here, Match::Strong);
    assert_eq!(before.verdict, TagVerdict::Boost(before.here.level / 300.0));
    assert_eq!(before.record, None);
    // Thirty other items judged four times each: ten relevant, ten
    // irrelevant, ten one time in four the other way (360 pairs, 60
    // of them disagreeing: a judge wrong about one time in eleven,
    // 0.6 of items relevant).
    for i in 0..30 {
        let raws: &[f64] = match i % 3 {
            0 => &[1.0; 4],
            1 => &[-1.0; 4],
            _ => &[1.0, 1.0, 1.0, -1.0],
        };
        verdicts(&mut l, &format!("F-{i}"), &other, raws);
    }
    let e = l.agreement().judge_error().unwrap();
    assert!((e - 0.0917).abs() < 0.001, "{e}");
    assert_eq!(l.filter_line(), -0.1);
    // Two irrelevant verdicts here: filtered on its own record.
    let now = l.assess("L-1", &[], &here, Match::Strong);
    assert_eq!(now.verdict, TagVerdict::Filtered);
    assert_eq!(now.decided, Scope::Context);
    let odds = now.record.unwrap().early.unwrap();
    assert!(
        (odds.prior - 0.6).abs() < 0.01 && odds.now < 0.02,
        "{odds:?}"
    );
    // One verdict, or one of each: kept.
    verdicts(&mut l, "L-2", &here, &[-1.0]);
    verdicts(&mut l, "L-3", &here, &[-1.0, 1.0]);
    for item in ["L-2", "L-3"] {
        let kept = l.assess(item, &[], &here, Match::Strong);
        assert!(matches!(kept.verdict, TagVerdict::Boost(_)), "{item}");
        assert_eq!(kept.record, None, "{item}");
    }
    // Held back from six prompts (three for each verdict against it), it
    // is on probation, to be judged anew.
    for _ in 0..5 {
        l.hold_back("L-1", &[], &here);
    }
    let held = l.assess("L-1", &[], &here, Match::Strong);
    assert_eq!(held.verdict, TagVerdict::Filtered);
    l.hold_back("L-1", &[], &here);
    let later = l.assess("L-1", &[], &here, Match::Strong);
    assert!(matches!(later.verdict, TagVerdict::Probation(_)));
    // Judged relevant on that re-check: over the line, but on trial, as a
    // record the seed's rule filtered is; kept once the verdicts since
    // are on balance for it (three relevant after two against).
    for owed in [2.0, 1.0] {
        verdicts(&mut l, "L-1", &here, &[1.0]);
        let trial = l.assess("L-1", &[], &here, Match::Strong);
        let record = trial.record.unwrap();
        assert!(record.level > l.filter_line(), "{record:?}");
        assert!(matches!(trial.verdict, TagVerdict::Probation(_)));
        assert_eq!((record.trial, record.to_confirm), (true, owed));
    }
    verdicts(&mut l, "L-1", &here, &[1.0]);
    let kept = l.assess("L-1", &[], &here, Match::Strong);
    assert!(matches!(kept.verdict, TagVerdict::Boost(_)));
    // Before the judge is read the early rule filters nothing, and a
    // relevant verdict after two against leaves nothing to confirm.
    let mut unread = Learned::default();
    unread.observe_session(&here);
    verdicts(&mut unread, "L-1", &here, &[-1.0, -1.0, 1.0]);
    let first = unread.assess("L-1", &[], &here, Match::Strong);
    assert!(matches!(first.verdict, TagVerdict::Boost(_)));
    assert!(!first.record.unwrap().trial);
}

#[test]
fn a_lesson_judged_irrelevant_in_two_contexts_is_filtered_in_a_third() {
    let mut l = Learned::default();
    let repos: Vec<Vec<String>> = ["billing", "shop", "proxy", "search", "cli"]
        .iter()
        .map(|r| tags(&[r, "linux"]))
        .collect();
    for t in &repos {
        l.observe_session(t);
    }
    let fresh = &repos[4];
    // Judged irrelevant in one repository: however often, that never
    // filters it where it was never judged.
    for _ in 0..5 {
        l.shown("L-9", &repos[0]);
        l.judge("L-9", &[], &repos[0], Match::Strong, -1.0, 1.0);
    }
    assert_eq!(l.contexts_judged("L-9", Match::Strong), 1);
    let there = l.assess("L-9", &[], fresh, Match::Strong);
    assert_eq!(there.verdict, TagVerdict::Boost(0.0));
    assert_eq!(there.everywhere, None);
    // A second that agrees: its record everywhere decides where nothing
    // else does.
    l.shown("L-9", &repos[1]);
    l.judge("L-9", &[], &repos[1], Match::Strong, -1.0, 1.0);
    assert_eq!(l.contexts_judged("L-9", Match::Strong), 2);
    let there = l.assess("L-9", &[], fresh, Match::Strong);
    assert_eq!(there.here, Evidence::default());
    assert_eq!(there.verdict, TagVerdict::Filtered);
    assert_eq!(there.decided, Scope::Everywhere);
    assert_eq!(there.everywhere.unwrap().evals, 6.0);
    // A record that is not below the seed's line filters nowhere else:
    // judged relevant in a third context, the record climbs back (once
    // its verdicts since the run against it are on balance for it: four).
    l.shown("L-9", &repos[2]);
    for _ in 0..4 {
        l.judge("L-9", &[], &repos[2], Match::Strong, 1.0, 1.0);
    }
    assert_eq!(
        l.assess("L-9", &[], fresh, Match::Strong).verdict,
        TagVerdict::Boost(0.0)
    );
    assert_eq!(
        l.contexts_against("L-9", Match::Strong),
        2,
        "relevant in the third"
    );
    // Where it was judged relevant, that context's evidence decides.
    let search = l.assess("L-9", &[], &repos[2], Match::Strong);
    assert!(matches!(search.verdict, TagVerdict::Boost(b) if b > 0.0));
    assert_eq!(search.decided, Scope::Context);
    // Judged without being shown there (direct feedback on a search
    // hit): not a context it was shown in, so it does not count.
    let other = tags(&["other", "linux"]);
    l.judge("L-10", &[], &other, Match::Strong, -1.0, 2.0);
    assert_eq!(l.contexts_judged("L-10", Match::Strong), 0);
}

/// Asserts `a` was filtered on its pooled verdicts, with `counts`
/// (here, elsewhere, other contexts); returns them.
fn filtered_pooled(a: &Assessment, counts: ((f64, f64), (f64, f64), usize)) -> Pooled {
    assert_eq!(a.verdict, TagVerdict::Filtered);
    assert_eq!(a.decided, Scope::Pooled);
    let p = a.pooled.unwrap();
    assert_eq!((p.here, p.elsewhere, p.contexts), counts);
    p
}

#[test]
fn verdicts_in_contexts_that_predict_each_other_filter_with_one_here() {
    let mut l = Learned::default();
    let [x, y, here] = [
        ["billing", "python"],
        ["shop", "python"],
        ["search", "python"],
    ]
    .map(|t| tags(&t));
    for t in [&x, &y, &here] {
        l.observe_session(t);
    }
    // Thirty items judged twice in each of two contexts: ten relevant,
    // ten irrelevant, ten with one wrong verdict in the second (120
    // pairs within a context, 20 disagreeing: a judge wrong about one
    // time in eleven; 240 pairs across the two, 40 disagreeing, as
    // often as within one: an item is relevant in both or in neither).
    for i in 0..30 {
        let (first, second): (&[f64], &[f64]) = match i % 3 {
            0 => (&[1.0, 1.0], &[1.0, 1.0]),
            1 => (&[-1.0, -1.0], &[-1.0, -1.0]),
            _ => (&[1.0, 1.0], &[1.0, -1.0]),
        };
        verdicts(&mut l, &format!("F-{i}"), &x, first);
        verdicts(&mut l, &format!("F-{i}"), &y, second);
    }
    let a = l.agreement();
    assert_eq!((a.pairs, a.disagreeing), (120, 20));
    assert_eq!((a.pairs_across, a.disagreeing_across), (240, 40));
    assert!(a.relevance_differs().unwrap() < 1e-9);
    // Judged irrelevant once here and once in another context: both
    // speak for this one, and it is filtered here.
    verdicts(&mut l, "L-1", &x, &[-1.0]);
    verdicts(&mut l, "L-1", &here, &[-1.0]);
    let pooled = l.assess("L-1", &[], &here, Match::Strong);
    let p = filtered_pooled(&pooled, ((0.0, 1.0), (0.0, 1.0), 1));
    assert!(p.odds.now < p.odds.prior / 2.0, "{p:?}");
    // One verdict in all: kept, as on its own record.
    verdicts(&mut l, "L-2", &here, &[-1.0]);
    let one = l.assess("L-2", &[], &here, Match::Strong);
    assert!(matches!(one.verdict, TagVerdict::Boost(_)));
    assert_eq!(one.pooled, None);
    // Never judged here: another context's verdicts, however many,
    // order it but do not filter it.
    verdicts(&mut l, "L-3", &x, &[-1.0, -1.0]);
    let unjudged = l.assess("L-3", &[], &here, Match::Strong);
    assert!(matches!(unjudged.verdict, TagVerdict::Boost(_)));
    // Judged relevant in the other context: kept here.
    verdicts(&mut l, "L-4", &x, &[1.0, 1.0]);
    verdicts(&mut l, "L-4", &here, &[-1.0]);
    let trusted = l.assess("L-4", &[], &here, Match::Strong);
    assert!(matches!(trusted.verdict, TagVerdict::Boost(_)));
}

#[test]
fn verdicts_here_filter_where_the_tags_hold_another_contexts_relevant_ones() {
    let mut l = Learned::default();
    let [x, y, here] = [
        ["billing", "django", "pytest", "python"],
        ["shop", "django", "pytest", "python"],
        ["search", "django", "pytest", "python"],
    ]
    .map(|t| tags(&t));
    for t in [&x, &y, &here] {
        l.observe_session(t);
    }
    // Four repositories of another stack: the stack's tags tell
    // contexts apart, and their verdicts weigh in the average.
    for name in ["cli", "proxy", "queue", "gateway"] {
        l.observe_session(&tags(&[name, "gin", "go"]));
    }
    // Thirty items judged twice in each of two contexts, two thirds of
    // them relevant in one and irrelevant in the other (a judge wrong
    // about one time in eleven within a context; across the two,
    // pairs disagree more often than a coin's: contexts that share
    // nothing, read as one half).
    for i in 0..30 {
        let (first, second): (&[f64], &[f64]) = match i % 3 {
            0 => (&[1.0, 1.0], &[-1.0, -1.0]),
            1 => (&[-1.0, -1.0], &[1.0, 1.0]),
            _ => (&[1.0, 1.0], &[-1.0, 1.0]),
        };
        verdicts(&mut l, &format!("F-{i}"), &x, first);
        verdicts(&mut l, &format!("F-{i}"), &y, second);
    }
    assert_eq!(l.agreement().relevance_differs(), Some(0.5));
    // Relevant five times in billing, which shares its stack with
    // search: the average over search's tags is positive after one
    // irrelevant verdict here, and billing's verdicts say nothing of
    // search. That verdict alone decides here, against the share of
    // relevant items, on six judged sessions in all.
    verdicts(&mut l, "L-5", &x, &[1.0; 5]);
    verdicts(&mut l, "L-5", &here, &[-1.0]);
    let a = l.assess("L-5", &[], &here, Match::Strong);
    assert!(a.here.level > 0.0, "{:?}", a.here);
    filtered_pooled(&a, ((0.0, 1.0), (5.0, 0.0), 1));
    // Still relevant in billing, where its own verdicts decide.
    let billing = l.assess("L-5", &[], &x, Match::Strong);
    assert!(matches!(billing.verdict, TagVerdict::Boost(b) if b > 0.0));
    // One relevant verdict here as well: the tags' average keeps it.
    verdicts(&mut l, "L-6", &x, &[1.0; 5]);
    verdicts(&mut l, "L-6", &here, &[1.0, -1.0]);
    let kept = l.assess("L-6", &[], &here, Match::Strong);
    assert!(matches!(kept.verdict, TagVerdict::Boost(_)), "{kept:?}");
    assert_eq!(kept.pooled, None);
}

#[test]
fn own_tags_are_read_only_for_a_lesson_with_evidence_where_they_were_absent() {
    let mut l = Learned::default();
    let proxy = tags(&["go", "proxy"]);
    let billing = tags(&["billing", "python"]);
    for t in [&proxy, &billing] {
        l.observe_session(t);
    }
    let own = tags(&["go"]);
    for _ in 0..3 {
        l.judge("L-7", &own, &proxy, Match::Strong, -1.0, 1.0);
    }
    // Judged only where its own tag was: nothing elsewhere to read.
    let context = l.context(&billing, None);
    let read_own = std::cell::Cell::new(false);
    let there = l.assess_in(
        "L-7",
        || {
            read_own.set(true);
            own.clone()
        },
        &context,
        Match::Strong,
    );
    assert!(!read_own.get());
    assert_eq!(there.elsewhere, Evidence::default());
    assert!(there.elsewhere_tags.is_empty());
    // Once judged where it was absent, they are read.
    l.judge("L-7", &own, &billing, Match::Strong, -1.0, 1.0);
    let there = l.assess("L-7", &own, &proxy, Match::Strong);
    assert!(there.elsewhere_tags.is_empty(), "go is here");
    let elsewhere = l.assess("L-7", &own, &tags(&["billing"]), Match::Strong);
    assert_eq!(elsewhere.elsewhere_tags, tags(&["!go"]));
    assert!(elsewhere.elsewhere.evals > 0.0);
}

#[test]
fn a_lesson_for_another_stack_learned_in_one_repo_is_filtered_in_the_next() {
    let mut l = Learned::default();
    let billing = tags(&["billing", "django", "python"]);
    let shop = tags(&["rails", "ruby", "shop"]);
    let proxy = tags(&["go", "proxy"]);
    for t in [&billing, &shop, &proxy] {
        l.observe_session(t);
    }
    let own = tags(&["go", "security"]);
    assert_eq!(
        l.elsewhere(&own, &billing),
        tags(&["!go"]),
        "security: no context had it"
    );
    for _ in 0..3 {
        l.judge("L-7", &own, &billing, Match::Strong, -1.0, 1.0);
    }
    // Never judged in the shop, yet filtered there: it lacks `go` too.
    let there = l.assess("L-7", &own, &shop, Match::Strong);
    assert_eq!(there.here, Evidence::default());
    assert_eq!(there.elsewhere_tags, tags(&["!go"]));
    assert_eq!(there.verdict, TagVerdict::Filtered);
    // Where its own tag is, nothing learned elsewhere applies.
    assert_eq!(
        l.assess("L-7", &own, &proxy, Match::Strong).verdict,
        TagVerdict::Boost(0.0)
    );
    // Judged relevant in the shop: the shop's evidence decides there.
    l.judge("L-7", &own, &shop, Match::Strong, 1.0, 1.0);
    assert!(
        matches!(l.assess("L-7", &own, &shop, Match::Strong).verdict, TagVerdict::Boost(b) if b > 0.0)
    );
    // No pin is ever scoped to a `!tag`.
    for _ in 0..10 {
        l.judge("L-7", &own, &shop, Match::Strong, 1.0, 1.0);
    }
    assert!(l
        .pins_of("L-7")
        .iter()
        .all(|p| p.tags.iter().all(|t| !t.starts_with('!'))));
}

#[test]
fn sessions_tick_the_clocks_and_weigh_the_tags() {
    let mut l = Learned::default();
    for _ in 0..3 {
        l.observe_session(&tags(&["a", "linux"]));
    }
    l.observe_session(&tags(&["b", "linux"]));
    assert_eq!(l.clock("linux"), 4);
    assert_eq!(l.clock("a"), 3);
    assert_eq!(l.weight("linux"), 0.0);
    assert_eq!(l.weight("a"), 1.0);
    assert_eq!(l.informative(&tags(&["a", "linux"])), tags(&["a"]));
    assert_eq!(l.informative(&tags(&["linux"])), tags(&["linux"]));
}

#[test]
fn applications_feed_the_effectiveness_ema() {
    let mut a = Applications::default();
    let app = |helpful: Option<bool>, score: Option<f64>| Application {
        task_id: None,
        applied_at: 0,
        applied: true,
        helpful,
        effectiveness_score: score,
        feedback: None,
    };
    a.record(app(None, Some(0.5)));
    assert_eq!(a.effectiveness, Some(0.5));
    a.record(app(Some(true), None));
    assert!((a.effectiveness.unwrap() - 0.65).abs() < 1e-9);
    a.record(app(None, None));
    assert_eq!(a.times_applied, 3);
    assert!((a.effectiveness.unwrap() - 0.65).abs() < 1e-9);
}

#[test]
fn a_replayed_journal_puts_a_new_verdict_in_the_old_ones_place() {
    let mut l = Learned::default();
    let python = tags(&["python"]);
    let judged = l.judged_tags(&[], &python, Match::Strong);
    let judgement = |raw: f64| Judgement {
        session: Some("s".into()),
        tags: judged.clone(),
        raw,
        weight: 1.0,
    };
    l.judge("L-1", &[], &python, Match::Strong, -1.0, 1.0);
    l.judge("L-1", &[], &python, Match::Strong, -1.0, 1.0);
    let journal = vec![judgement(-1.0), judgement(-1.0)];
    assert!(l.replays_to_current("L-1", &journal));
    // A journal that misses a judgement does not account for the scores.
    assert!(!l.replays_to_current("L-1", &journal[..1]));
    let held = l.hold_back("L-1", &[], &python);
    assert_eq!(held[0].1.held, 1);
    // The first verdict turns: +1 then -1 is 0.21 * 0.7 ... = -0.09.
    let (updated, _) = l.rejudge("L-1", &[judgement(1.0), judgement(-1.0)], &python);
    let score = updated
        .iter()
        .find(|(t, _)| t == "python")
        .unwrap()
        .1
        .unwrap();
    assert!((score.score + 0.09).abs() < 1e-9);
    assert_eq!((score.positive, score.negative, score.held), (1, 1, 1));
    // A tag no judgement touches any more is removed.
    let go = Judgement {
        tags: tags(&["go"]),
        ..judgement(1.0)
    };
    let (updated, _) = l.rejudge("L-1", &[go], &python);
    assert!(updated.contains(&("python".to_string(), None)));
    assert_eq!(l.tag_score("L-1", "python"), None);
}
