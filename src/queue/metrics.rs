//! Job durations, recorded by the pool when a job it ran ends: by kind (only kinds with a
//! registered handler, a fixed set) and outcome (`succeeded` or `failed`).

use crate::metrics::{Histogram, HistogramVec, JOB_BUCKETS};
use crate::store::JobState;

/// How long jobs ran, from claim to outcome.
#[derive(Debug)]
pub struct JobMetrics {
    durations: HistogramVec<(String, &'static str)>,
}

impl Default for JobMetrics {
    fn default() -> Self {
        Self {
            durations: HistogramVec::new(JOB_BUCKETS),
        }
    }
}

impl JobMetrics {
    pub(super) fn record(&self, kind: &str, state: JobState, seconds: f64) {
        self.durations
            .observe((kind.to_owned(), state.as_str()), seconds);
    }

    /// Duration histograms by (kind, final state).
    pub fn durations(&self) -> Vec<((String, &'static str), Histogram)> {
        self.durations.snapshot()
    }
}
