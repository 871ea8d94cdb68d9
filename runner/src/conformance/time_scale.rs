//! The run's time scale: the one factor every duration of every case is multiplied by (see
//! `mcp_harness_scenarios::model::timing`). By default (or with `--time-scale auto`) it comes
//! from the machine at start: the 1-minute load average per core, clamped to 1..=4.
//! `--time-scale F` fixes it (`--time-scale 1` for an unscaled run).
//!
//! Why from the machine by default: on a loaded runner a client's start (a Python interpreter
//! importing its SDK, Node compiling its modules) and a CPU-bound trial (a hundred-page
//! listing, a 16 MiB response) take several times longer; at a fixed factor they meet the
//! timeouts and deadlines sized for an idle machine, and the verdict follows the load (the
//! soak showed it: at 16 trials per core beside a CPU hog, the reference client's page-cap
//! trials ran into their deadline at 1 and pass at the machine's factor). An idle or lightly
//! loaded machine (load at most one per core) runs at 1, so the usual run is unscaled.
//!
//! What it costs: a client whose own timers ignore the timeout it is handed (rmcp's fixed
//! 10 s discover probe, say) could meet a deadline at one factor and miss it at another. A
//! case that judges such a timer therefore sets a deadline of a few timeouts, which a fixed
//! timer of the usual size misses at every factor up to [`MAX_AUTO`] (`era/dual/legacy-*`:
//! three timeouts of 800 ms). A known-flaky mark does not fit: it expects a pass.
//!
//! Why the load average: what slows a client is CPU contention, and the load average per core
//! measures exactly that, for free and without noise of its own. A calibration (timing N
//! spawns against a reference) would cost time on every run, measure the spawn path rather
//! than a client's start, and be as noisy as the machine it measures. The cap of 4 keeps a
//! saturated machine's run from taking all day (pass `--time-scale` for more).

use std::path::Path;

use mcp_harness_scenarios::model::TimeScale;

/// The largest factor picked from the machine.
pub const MAX_AUTO: f64 = 4.0;

/// What `--time-scale` asked for.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Choice {
    /// This factor.
    Fixed(TimeScale),
    /// The machine's load average per core, clamped to `1..=MAX_AUTO`.
    Auto,
}

impl Choice {
    /// Parses `auto` or a factor (see [`TimeScale::parse`]).
    pub fn parse(text: &str) -> Result<Choice, String> {
        match text.trim() {
            "auto" => Ok(Choice::Auto),
            other => TimeScale::parse(other)
                .map(Choice::Fixed)
                .map_err(|e| format!("{e}, or `auto`")),
        }
    }
}

/// As the flag is written: `auto`, or the factor.
impl std::fmt::Display for Choice {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Choice::Fixed(scale) => write!(f, "{scale}"),
            Choice::Auto => f.write_str("auto"),
        }
    }
}

/// The factor for this run and where it came from (shown in the run header).
pub fn pick(given: Option<Choice>) -> (TimeScale, String) {
    if let Some(Choice::Fixed(scale)) = given {
        return (scale, "--time-scale".to_owned());
    }
    let cores = super::cores();
    match std::fs::read_to_string(Path::new("/proc/loadavg"))
        .ok()
        .as_deref()
        .and_then(load_1min)
    {
        Some(load) => (
            from_load(load, cores),
            format!("load average {load:.2} on {cores} core(s)"),
        ),
        None => (TimeScale::ONE, "no load average to read".to_owned()),
    }
}

/// The first field of `/proc/loadavg`.
fn load_1min(text: &str) -> Option<f64> {
    text.split_whitespace().next()?.parse().ok()
}

/// The load per core clamped to `1..=MAX_AUTO`, rounded to a tenth (so runs on a similarly
/// loaded machine get the same factor).
fn from_load(load: f64, cores: usize) -> TimeScale {
    let per_core = load / cores.max(1) as f64;
    let factor = (per_core.clamp(1.0, MAX_AUTO) * 10.0).round() / 10.0;
    TimeScale::new(factor).unwrap_or(TimeScale::ONE)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_load_per_core_sets_the_factor_within_bounds() {
        assert_eq!(load_1min("0.52 0.40 0.33 1/123 4567\n"), Some(0.52));
        assert_eq!(load_1min(""), None);
        assert_eq!(from_load(0.5, 2), TimeScale::ONE);
        assert_eq!(from_load(2.0, 2), TimeScale::ONE);
        assert_eq!(from_load(5.0, 2).factor(), 2.5);
        assert_eq!(from_load(3.33, 1).factor(), 3.3);
        assert_eq!(from_load(40.0, 2).factor(), MAX_AUTO);
        assert_eq!(from_load(f64::NAN, 2), TimeScale::ONE);
        let given = TimeScale::new(2.0).unwrap();
        assert_eq!(pick(Some(Choice::Fixed(given))).0, given);
        // No flag is `auto`: from the machine, never below 1.
        assert!(pick(None).0.factor() >= 1.0);
        assert!(pick(Some(Choice::Auto)).0.factor() >= 1.0);
    }

    #[test]
    fn the_flag_takes_a_factor_or_auto() {
        assert_eq!(Choice::parse("auto"), Ok(Choice::Auto));
        assert_eq!(
            Choice::parse("2"),
            Ok(Choice::Fixed(TimeScale::new(2.0).unwrap()))
        );
        for text in ["auto", "2", "1.5"] {
            let choice = Choice::parse(text).unwrap();
            assert_eq!(Choice::parse(&choice.to_string()), Ok(choice), "{text}");
        }
        let bad = Choice::parse("fast").unwrap_err();
        assert!(bad.contains("or `auto`"), "{bad}");
    }
}
