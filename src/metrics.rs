//! In-memory Prometheus histograms shared by the parts that record them (the queue's job
//! durations, the Proxmox client's request latencies) and the one that exposes them (`web`, at
//! `/metrics`). Counts run since the process started. Series keys are the recorder's own label
//! types, built from fixed sets, so cardinality is bounded by construction; this module only
//! counts and writes the text format.

use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::sync::{Mutex, PoisonError};

/// Upper bounds (seconds) for job durations: a plan takes seconds, an apply minutes.
pub const JOB_BUCKETS: &[f64] = &[
    0.5, 1.0, 2.5, 5.0, 10.0, 30.0, 60.0, 120.0, 300.0, 600.0, 1800.0, 3600.0,
];

/// Upper bounds (seconds) for one HTTP exchange with Proxmox VE.
pub const REQUEST_BUCKETS: &[f64] = &[
    0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0, 30.0,
];

/// One histogram: per-bucket counts (not cumulative), the sum and the count.
#[derive(Debug, Clone, PartialEq)]
pub struct Histogram {
    bounds: &'static [f64],
    counts: Vec<u64>,
    sum: f64,
    count: u64,
}

impl Histogram {
    fn new(bounds: &'static [f64]) -> Self {
        Self {
            bounds,
            counts: vec![0; bounds.len()],
            sum: 0.0,
            count: 0,
        }
    }

    fn observe(&mut self, value: f64) {
        let value = if value.is_finite() {
            value.max(0.0)
        } else {
            0.0
        };
        if let Some(i) = self.bounds.iter().position(|b| value <= *b) {
            self.counts[i] += 1;
        }
        self.sum += value;
        self.count += 1;
    }

    /// Observations so far.
    pub fn count(&self) -> u64 {
        self.count
    }

    /// Writes `NAME_bucket`, `NAME_sum` and `NAME_count` lines; `labels` is the rendered label
    /// list without braces (`kind="plan"`), possibly empty.
    pub fn write(&self, out: &mut String, name: &str, labels: &str) {
        let sep = if labels.is_empty() { "" } else { "," };
        let mut cumulative = 0;
        for (bound, n) in self.bounds.iter().zip(&self.counts) {
            cumulative += n;
            let _ = writeln!(
                out,
                "{name}_bucket{{{labels}{sep}le=\"{bound}\"}} {cumulative}"
            );
        }
        let _ = writeln!(
            out,
            "{name}_bucket{{{labels}{sep}le=\"+Inf\"}} {}",
            self.count
        );
        let braces = |s: &str| {
            if s.is_empty() {
                String::new()
            } else {
                format!("{{{s}}}")
            }
        };
        let _ = writeln!(out, "{name}_sum{} {}", braces(labels), self.sum);
        let _ = writeln!(out, "{name}_count{} {}", braces(labels), self.count);
    }
}

/// Histograms keyed by a label set `K`.
#[derive(Debug)]
pub struct HistogramVec<K> {
    bounds: &'static [f64],
    series: Mutex<BTreeMap<K, Histogram>>,
}

impl<K: Ord + Clone> HistogramVec<K> {
    pub fn new(bounds: &'static [f64]) -> Self {
        Self {
            bounds,
            series: Mutex::new(BTreeMap::new()),
        }
    }

    /// Adds one observation (seconds) to the series `key`.
    pub fn observe(&self, key: K, seconds: f64) {
        let mut series = self.series.lock().unwrap_or_else(PoisonError::into_inner);
        series
            .entry(key)
            .or_insert_with(|| Histogram::new(self.bounds))
            .observe(seconds);
    }

    /// Every series, in key order.
    pub fn snapshot(&self) -> Vec<(K, Histogram)> {
        let series = self.series.lock().unwrap_or_else(PoisonError::into_inner);
        series.iter().map(|(k, h)| (k.clone(), h.clone())).collect()
    }
}

/// Counters keyed by a label set `K`.
#[derive(Debug)]
pub struct CounterVec<K> {
    series: Mutex<BTreeMap<K, u64>>,
}

impl<K> Default for CounterVec<K> {
    fn default() -> Self {
        Self {
            series: Mutex::new(BTreeMap::new()),
        }
    }
}

impl<K: Ord + Clone> CounterVec<K> {
    pub fn inc(&self, key: K) {
        let mut series = self.series.lock().unwrap_or_else(PoisonError::into_inner);
        *series.entry(key).or_default() += 1;
    }

    /// Every series, in key order.
    pub fn snapshot(&self) -> Vec<(K, u64)> {
        let series = self.series.lock().unwrap_or_else(PoisonError::into_inner);
        series.iter().map(|(k, n)| (k.clone(), *n)).collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn histogram_buckets_are_cumulative_and_end_with_inf() {
        let h = HistogramVec::new(&[1.0, 5.0]);
        for v in [0.2, 3.0, 4.0, 60.0] {
            h.observe("plan", v);
        }
        let (_, plan) = h.snapshot().remove(0);
        let mut out = String::new();
        plan.write(&mut out, "x", "kind=\"plan\"");
        assert_eq!(
            out,
            "x_bucket{kind=\"plan\",le=\"1\"} 1\n\
             x_bucket{kind=\"plan\",le=\"5\"} 3\n\
             x_bucket{kind=\"plan\",le=\"+Inf\"} 4\n\
             x_sum{kind=\"plan\"} 67.2\n\
             x_count{kind=\"plan\"} 4\n"
        );
    }
}
