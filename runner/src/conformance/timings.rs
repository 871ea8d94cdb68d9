//! Where a run's time went, for `cargo xtask bench`: with `MCP_HARNESS_TIMINGS=FILE` in its
//! environment, `cargo xtask conformance` writes each trial's phases (see
//! [`Phases`](super::trial::Phases)) and the run's one-off costs to FILE as JSON. The
//! variable is the bench's; the clients under test never see it.

use std::path::{Path, PathBuf};
use std::time::Duration;

use serde::{Deserialize, Serialize};

use super::runner::Finished;

/// The variable naming the file the timings go to.
pub const VAR: &str = "MCP_HARNESS_TIMINGS";

/// The file to write the timings to, if the bench asked for them.
pub fn requested() -> Option<PathBuf> {
    std::env::var_os(VAR)
        .filter(|v| !v.is_empty())
        .map(PathBuf::from)
}

/// One run's timings.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
pub struct RunTimings {
    /// Trials run at once.
    pub threads: usize,
    /// Loading the cases and the baseline, before the first trial, in ms.
    pub load_ms: f64,
    /// Making the HTTP environment (runtime, the run's certificates, the CA file), in ms;
    /// 0 when no HTTPS trial ran.
    pub http_setup_ms: f64,
    /// From the first trial's start to the last one's end, in ms.
    pub trials_ms: f64,
    /// The end of the run: strays, the reports, in ms.
    pub finish_ms: f64,
    /// Every trial: its name and its phases in microseconds, named as in `Phases::named`.
    pub trials: Vec<TrialTimings>,
}

/// One trial's phases.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
pub struct TrialTimings {
    /// The trial's name.
    pub name: String,
    /// `(phase, microseconds)`, in the order of `Phases::named`.
    pub phases_us: Vec<(String, u64)>,
}

impl TrialTimings {
    /// The trial's phases from what it finished with.
    pub fn of(finished: &Finished) -> TrialTimings {
        TrialTimings {
            name: finished.result.name.clone(),
            phases_us: finished
                .phases
                .named()
                .iter()
                .map(|(name, took)| ((*name).to_owned(), micros(*took)))
                .collect(),
        }
    }
}

/// Whole microseconds, saturating (as the file writes them).
pub fn micros(d: Duration) -> u64 {
    d.as_micros().try_into().unwrap_or(u64::MAX)
}

/// Milliseconds, as the file writes them.
pub fn ms(d: Duration) -> f64 {
    d.as_secs_f64() * 1e3
}

impl RunTimings {
    /// Writes the timings as JSON to `path`.
    pub fn write(&self, path: &Path) -> Result<(), String> {
        let text = serde_json::to_string_pretty(self)
            .map_err(|e| format!("cannot encode the timings: {e}"))?;
        std::fs::write(path, text)
            .map_err(|e| format!("cannot write the timings {}: {e}", path.display()))
    }

    /// Reads timings written by [`RunTimings::write`].
    pub fn load(path: &Path) -> Result<RunTimings, String> {
        let text = std::fs::read_to_string(path)
            .map_err(|e| format!("cannot read the timings {}: {e}", path.display()))?;
        serde_json::from_str(&text).map_err(|e| format!("invalid timings {}: {e}", path.display()))
    }
}
