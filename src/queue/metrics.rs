//! Job durations, recorded by the pool when a job it ran ends: by kind (only kinds with a
//! registered handler, a fixed set) and outcome (`succeeded` or `failed`).

use prometheus_client::encoding::EncodeLabelSet;

use crate::metrics::{Histograms, Registry, job_histograms};
use crate::store::JobState;

#[derive(Debug, Clone, Hash, PartialEq, Eq, EncodeLabelSet)]
struct DurationLabels {
    kind: String,
    state: &'static str,
}

/// How long jobs ran, from claim to outcome.
#[derive(Debug)]
pub struct JobMetrics {
    durations: Histograms<DurationLabels>,
}

impl Default for JobMetrics {
    fn default() -> Self {
        Self {
            durations: job_histograms(),
        }
    }
}

impl JobMetrics {
    pub(super) fn record(&self, kind: &str, state: JobState, seconds: f64) {
        let labels = DurationLabels {
            kind: kind.to_owned(),
            state: state.as_str(),
        };
        self.durations.get_or_create(&labels).observe(seconds);
    }

    /// Adds the duration histograms to a scrape's registry.
    pub fn register(&self, registry: &mut Registry) {
        registry.register(
            "job_duration_seconds",
            "Time from claim to outcome of the jobs this server ran, by kind and outcome",
            self.durations.clone(),
        );
    }
}
