//! The suite's own speed: `cargo xtask conformance` against the reference client, timed from
//! outside as a user would see it (the xtask executable run as a subprocess, binaries already
//! built), and each trial's time read back from its `results.json`.

use std::path::Path;
use std::process::Command;
use std::time::{Duration, Instant};

use serde::Serialize;

use super::clients::{output_within, reason};
use crate::report::RunResults;

/// The longest one suite run may take before it is killed.
const SUITE_LIMIT: Duration = Duration::from_secs(600);

/// One timed suite run.
#[derive(Debug, Clone, Serialize)]
pub struct SuiteRun {
    /// `--jobs`, or `None` for the runner's default.
    pub jobs: Option<usize>,
    /// Wall time of the whole process, in seconds.
    pub seconds: f64,
    /// Trials run.
    pub trials: usize,
    /// Trials per second of wall time.
    pub trials_per_s: f64,
    /// The median of the trials' `elapsed_ms`.
    pub median_trial_ms: f64,
    /// The slowest trial and its time, in ms.
    pub slowest: (String, u64),
    /// The suite's exit code (0: every trial met its grade).
    pub exit_code: i32,
    /// The trials that failed, if any (a timing-sensitive case can fail on a loaded machine).
    pub failed: Vec<String>,
}

/// Runs the suite once with `--jobs jobs` (or the default) and measures it.
pub fn run(xtask: &Path, work: &Path, jobs: Option<usize>) -> Result<SuiteRun, String> {
    let dir = work.join(match jobs {
        Some(n) => format!("suite-jobs-{n}"),
        None => "suite-default".to_owned(),
    });
    let mut cmd = Command::new(xtask);
    cmd.args(["conformance", "--no-build", "-q", "--report-dir"])
        .arg(&dir);
    if let Some(n) = jobs {
        cmd.args(["--jobs", &n.to_string()]);
    }
    let started = Instant::now();
    let (status, _, stderr) = output_within(&mut cmd, SUITE_LIMIT)?;
    let seconds = started.elapsed().as_secs_f64();
    let exit_code = status.code().unwrap_or(-1);
    if exit_code != 0 && exit_code != 101 {
        return Err(format!(
            "the suite could not run ({status}): {}",
            reason(&stderr)
        ));
    }
    let results = RunResults::load(&dir.join("results.json"))?;
    let mut times: Vec<u64> = results.trials.iter().map(|t| t.elapsed_ms).collect();
    times.sort_unstable();
    let slowest = results
        .trials
        .iter()
        .max_by_key(|t| t.elapsed_ms)
        .map(|t| (t.name.clone(), t.elapsed_ms))
        .unwrap_or_default();
    let failed = results
        .trials
        .iter()
        .filter(|t| t.verdict.fails_run())
        .map(|t| t.name.clone())
        .collect();
    Ok(SuiteRun {
        jobs,
        seconds,
        trials: times.len(),
        trials_per_s: times.len() as f64 / seconds.max(1e-9),
        median_trial_ms: median(&times),
        slowest,
        exit_code,
        failed,
    })
}

/// The median of sorted values (the mean of the middle two for an even count).
fn median(sorted: &[u64]) -> f64 {
    match sorted.len() {
        0 => 0.0,
        n if n % 2 == 1 => sorted[n / 2] as f64,
        n => (sorted[n / 2 - 1] + sorted[n / 2]) as f64 / 2.0,
    }
}

#[cfg(test)]
mod tests {
    use super::median;

    #[test]
    fn median_of_odd_and_even_counts() {
        assert_eq!(median(&[]), 0.0);
        assert_eq!(median(&[5]), 5.0);
        assert_eq!(median(&[1, 2, 9]), 2.0);
        assert_eq!(median(&[1, 2, 4, 9]), 3.0);
    }
}
