//! The figures compared between the reference client and rmcp, and which way each is better,
//! shared by the table and `bench.json` so both read the ratios the same way.

use super::clients::Figures;

/// One compared figure of a client run.
pub struct Metric {
    /// Its name in bench.json.
    pub key: &'static str,
    /// Its name in the table.
    pub label: &'static str,
    /// Whether more is better (rates) or less (times, memory).
    pub higher_is_better: bool,
    /// Reads it from a run's figures.
    pub get: fn(&Figures) -> f64,
}

const fn metric(
    key: &'static str,
    label: &'static str,
    higher_is_better: bool,
    get: fn(&Figures) -> f64,
) -> Metric {
    Metric {
        key,
        label,
        higher_is_better,
        get,
    }
}

/// Rates are better higher; times and memory lower.
const HIGHER: bool = true;
const LOWER: bool = false;

/// The figures compared between clients, in table order.
pub const METRICS: [Metric; 9] = [
    metric("init_ms", "connect + initialize (ms)", LOWER, |f| f.init_ms),
    metric("list_ms", "tools/list (ms)", LOWER, |f| f.list_ms),
    metric(
        "sequential_calls_per_s",
        "sequential calls/s",
        HIGHER,
        |f| f.sequential.rate(),
    ),
    metric("sequential_p50_us", "sequential p50 (us)", LOWER, |f| {
        f.sequential.p50_us as f64
    }),
    metric("sequential_p99_us", "sequential p99 (us)", LOWER, |f| {
        f.sequential.p99_us as f64
    }),
    metric("concurrent_calls_per_s", "in-flight calls/s", HIGHER, |f| {
        f.concurrent.rate()
    }),
    metric("concurrent_p50_us", "in-flight p50 (us)", LOWER, |f| {
        f.concurrent.p50_us as f64
    }),
    metric("concurrent_p99_us", "in-flight p99 (us)", LOWER, |f| {
        f.concurrent.p99_us as f64
    }),
    metric("peak_rss_kb", "peak RSS (KiB)", LOWER, |f| {
        f.peak_rss_kb as f64
    }),
];

/// Whether the reference client is ahead on `m`: strictly better, except memory, where "no
/// larger" is the target.
pub fn ahead(m: &Metric, ours: f64, theirs: f64) -> bool {
    match (m.higher_is_better, m.key) {
        (true, _) => ours > theirs,
        (false, "peak_rss_kb") => ours <= theirs,
        (false, _) => ours < theirs,
    }
}
