//! An item's score over its verdicts, drawn on the server as SVG: seed
//! 001's EMA (and its clamp) replayed from the verdicts in order, with the
//! filter line (seed 001's -0.1, lower for a noisy judge:
//! [`crate::learning::noise`]) and the pin line (0.6) for reference.

use maud::{html, Markup};

use crate::learning::tag_relevance::{ema, AUTO_PIN_MIN_AVG};

const WIDTH: f64 = 560.0;
const HEIGHT: f64 = 160.0;
const PAD: f64 = 28.0;

/// The scores after each of `verdicts` (raw, weight), as a line, with the
/// filter `line` in use.
pub fn scores(verdicts: &[(f64, f64)], filter_line: f64) -> Markup {
    if verdicts.is_empty() {
        return html! { p.muted { "No verdict yet." } };
    }
    let mut score = 0.0;
    let points: Vec<f64> = verdicts
        .iter()
        .map(|&(raw, weight)| {
            score = ema(score, raw, weight);
            score
        })
        .collect();
    let (lo, hi) = points
        .iter()
        .fold((-1.0f64, 1.0f64), |(lo, hi), &s| (lo.min(s), hi.max(s)));
    let y = |s: f64| PAD + (hi - s) / (hi - lo) * (HEIGHT - 2.0 * PAD);
    let step = if points.len() > 1 {
        (WIDTH - 2.0 * PAD) / (points.len() - 1) as f64
    } else {
        0.0
    };
    let x = |i: usize| PAD + i as f64 * step;
    let line: String = points
        .iter()
        .enumerate()
        .map(|(i, &s)| format!("{:.1},{:.1}", x(i), y(s)))
        .collect::<Vec<_>>()
        .join(" ");
    let label = format!(
        "score after each of {} verdict(s): last {:+.3}",
        points.len(),
        points[points.len() - 1]
    );
    html! {
        svg xmlns="http://www.w3.org/2000/svg" width=(WIDTH) height=(HEIGHT) viewBox={ "0 0 " (WIDTH) " " (HEIGHT) } role="img" aria-label=(label) {
            title { (label) }
            line x1=(PAD) x2=(WIDTH - PAD) y1=(y(0.0)) y2=(y(0.0)) stroke="#bbb" {}
            line x1=(PAD) x2=(WIDTH - PAD) y1=(y(filter_line)) y2=(y(filter_line)) stroke="#d9534f" stroke-dasharray="4 3" {}
            line x1=(PAD) x2=(WIDTH - PAD) y1=(y(AUTO_PIN_MIN_AVG)) y2=(y(AUTO_PIN_MIN_AVG)) stroke="#5cb85c" stroke-dasharray="4 3" {}
            text x="2" y=(y(filter_line) + 4.0) font-size="9" fill="#d9534f" { (format!("{filter_line:.2}")) }
            text x="2" y=(y(AUTO_PIN_MIN_AVG) + 4.0) font-size="9" fill="#5cb85c" { "0.6" }
            polyline points=(line) fill="none" stroke="#243447" stroke-width="2" {}
            @for (i, &s) in points.iter().enumerate() {
                circle cx=(format!("{:.1}", x(i))) cy=(format!("{:.1}", y(s))) r="3" fill="#243447" {}
            }
        }
    }
}
