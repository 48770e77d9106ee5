//! The metrics the parts of the server record (the queue's job durations, the Proxmox client's
//! requests and latencies, the web side's webhook deliveries) and `/metrics` exposes, kept in
//! [`prometheus_client`] types: the Prometheus project's own Rust client, with no global
//! registry. Each recorder owns its families and registers clones of them (shared handles) into
//! the [`Registry`] that `/metrics` builds per scrape, next to the values it reads from the store
//! then. Label sets are the recorders' own types built from fixed sets, so cardinality is bounded
//! by construction. Counts run since the process started.

use prometheus_client::metrics::family::Family;
use prometheus_client::metrics::histogram::Histogram;

pub use prometheus_client::encoding::prometheus_text::{CONTENT_TYPE, encode};
pub use prometheus_client::registry::Registry;

/// Upper bounds (seconds) for job durations: a plan takes seconds, an apply minutes.
pub const JOB_BUCKETS: &[f64] = &[
    0.5, 1.0, 2.5, 5.0, 10.0, 30.0, 60.0, 120.0, 300.0, 600.0, 1800.0, 3600.0,
];

/// Upper bounds (seconds) for one HTTP exchange with Proxmox VE.
pub const REQUEST_BUCKETS: &[f64] = &[
    0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0, 30.0,
];

/// Histograms by a label set `L`, each made with the same buckets.
pub type Histograms<L> = Family<L, Histogram, fn() -> Histogram>;

/// Histograms over [`JOB_BUCKETS`].
pub fn job_histograms<L: Clone + std::hash::Hash + Eq>() -> Histograms<L> {
    Family::new_with_constructor(|| Histogram::new(JOB_BUCKETS.iter().copied()))
}

/// Histograms over [`REQUEST_BUCKETS`].
pub fn request_histograms<L: Clone + std::hash::Hash + Eq>() -> Histograms<L> {
    Family::new_with_constructor(|| Histogram::new(REQUEST_BUCKETS.iter().copied()))
}

#[cfg(test)]
mod tests {
    use prometheus_client::encoding::EncodeLabelSet;

    use super::*;

    #[derive(Debug, Clone, Hash, PartialEq, Eq, EncodeLabelSet)]
    struct Kind {
        kind: &'static str,
    }

    #[test]
    fn histogram_buckets_are_cumulative_and_end_with_inf() {
        let h = job_histograms::<Kind>();
        for v in [0.2, 3.0, 4.0, 60.0] {
            h.get_or_create(&Kind { kind: "plan" }).observe(v);
        }
        let mut registry = Registry::with_prefix("x");
        registry.register("d", "Durations", h);
        let mut out = String::new();
        encode(&mut out, &registry).expect("encode");
        for line in [
            "x_d_bucket{kind=\"plan\",le=\"0.5\"} 1",
            "x_d_bucket{kind=\"plan\",le=\"5\"} 3",
            "x_d_bucket{kind=\"plan\",le=\"+Inf\"} 4",
            "x_d_sum{kind=\"plan\"} 67.2",
            "x_d_count{kind=\"plan\"} 4",
        ] {
            assert!(
                out.lines().any(|l| l == line),
                "{line} missing from:\n{out}"
            );
        }
    }
}
