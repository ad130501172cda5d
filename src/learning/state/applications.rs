//! Seed 003's record of an item's applications (`memctl track`) and the
//! effectiveness EMA they move.

use serde::{Deserialize, Serialize};

use crate::scoring::learning::update_effectiveness;

/// One application of an item (seed 003's `ApplicationResult`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Application {
    pub task_id: Option<String>,
    /// Unix seconds.
    pub applied_at: i64,
    pub applied: bool,
    pub helpful: Option<bool>,
    pub effectiveness_score: Option<f64>,
    pub feedback: Option<String>,
}

/// Application record of one item (seed 003).
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
pub struct Applications {
    /// Times applied through `track`.
    pub times_applied: u32,
    /// Effectiveness EMA, once any score was given.
    pub effectiveness: Option<f64>,
    /// The most recent applications, newest last.
    pub history: Vec<Application>,
}

/// Applications kept per item.
pub const HISTORY_KEPT: usize = 50;

impl Applications {
    /// Records one application: `times_applied` counts it when applied, and
    /// a score (given, or 1.0 / 0.0 from helpful / not helpful) moves the
    /// effectiveness EMA (seed 003, alpha 0.3). The first score starts it.
    pub fn record(&mut self, application: Application) {
        if application.applied {
            self.times_applied += 1;
        }
        let score = application
            .effectiveness_score
            .or(application.helpful.map(|h| if h { 1.0 } else { 0.0 }));
        if let Some(score) = score {
            self.effectiveness = Some(match self.effectiveness {
                Some(current) => update_effectiveness(current, score),
                None => score,
            });
        }
        self.history.push(application);
        if self.history.len() > HISTORY_KEPT {
            self.history.remove(0);
        }
    }
}
