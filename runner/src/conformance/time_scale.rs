//! The time scale: the one factor every duration of a trial's case is multiplied by (see
//! `mcp_harness_scenarios::model::timing`). By default (or with `--time-scale auto`) it follows
//! the machine while the run goes on, and each trial takes the factor of the moment it starts:
//! the load per core, clamped to 1..=4. `--time-scale F` fixes it for every trial
//! (`--time-scale 1` for an unscaled run).
//!
//! Why from the machine by default: on a loaded runner a client's start (a Python interpreter
//! importing its SDK, Node compiling its modules) and a CPU-bound trial (a hundred-page
//! listing, a 16 MiB response) take several times longer; at a fixed factor they meet the
//! timeouts and deadlines sized for an idle machine, and the verdict follows the load (the
//! soak showed it: at 16 trials per core beside a CPU hog, the reference client's page-cap
//! trials ran into their deadline at 1 and pass at the machine's factor). An idle or lightly
//! loaded machine (load at most one per core) runs at 1, so the usual run is unscaled.
//!
//! Why per trial: the load a run meets is mostly made after it starts (its own trials, a
//! build or a hog started beside it), and the 1-minute load average lags a minute behind.
//! A sampler thread reads `/proc/loadavg` every 200 ms and keeps the larger of the 1-minute
//! average and a 5-second average of the tasks running right then, so a trial that starts
//! once the machine is busy gets room although the run started on an idle one.
//!
//! What it costs: a client whose own timers ignore the timeout it is handed (rmcp's fixed
//! 10 s discover probe, say) could meet a deadline at one factor and miss it at another. A
//! case that judges such a timer therefore sets a deadline of a few timeouts, which a fixed
//! timer of the usual size misses at every factor up to [`MAX_AUTO`] (`era/dual/legacy-*`:
//! three timeouts of 800 ms). A known-flaky mark does not fit: it expects a pass.
//!
//! Why the load: what slows a client is CPU contention, and the runnable tasks per core
//! measure exactly that, for free and without noise of its own. A calibration (timing N
//! spawns against a reference) would cost time on every trial, measure the spawn path rather
//! than a client's start, and be as noisy as the machine it measures. The cap of 4 keeps a
//! saturated machine's run from taking all day (pass `--time-scale` for more).

use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

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

/// The factor at the start of the run and where it came from (shown in the run header).
pub fn pick(given: Option<Choice>) -> (TimeScale, String) {
    if let Some(Choice::Fixed(scale)) = given {
        return (scale, "--time-scale".to_owned());
    }
    let cores = super::cores();
    match read_loadavg() {
        Some((load, _)) => (
            from_load(load, cores),
            format!("load average {load:.2} on {cores} core(s)"),
        ),
        None => (TimeScale::ONE, "no load average to read".to_owned()),
    }
}

/// The factor each trial starts with: fixed, or followed from the machine (see the module
/// docs). Cloning shares the one sampler.
#[derive(Clone)]
pub struct Live {
    fixed: Option<TimeScale>,
    /// The load the sampler last worked out, as `f64` bits.
    load: Arc<AtomicU64>,
}

/// How often the sampler reads `/proc/loadavg`.
const SAMPLE_EVERY: Duration = Duration::from_millis(200);
/// The time constant of the running-tasks average: long enough to ride out a burst (a
/// compiler's link step), short enough to notice a build or a hog within a few trials.
const RUNNING_WINDOW: Duration = Duration::from_secs(5);

impl Live {
    /// Fixed for `--time-scale F`; otherwise starts the sampler (a thread that lives as long
    /// as the process).
    pub fn start(given: Option<Choice>) -> Live {
        let load = Arc::new(AtomicU64::new(0f64.to_bits()));
        if let Some(Choice::Fixed(scale)) = given {
            return Live {
                fixed: Some(scale),
                load,
            };
        }
        let Some((first, _)) = read_loadavg() else {
            return Live {
                fixed: Some(TimeScale::ONE),
                load,
            };
        };
        load.store(first.to_bits(), Ordering::Relaxed);
        let shared = Arc::clone(&load);
        let spawned = std::thread::Builder::new()
            .name("time-scale".into())
            .spawn(move || sample(&shared));
        Live {
            fixed: spawned.is_err().then(|| from_load(first, super::cores())),
            load,
        }
    }

    /// The factor for a trial starting now.
    pub fn now(&self) -> TimeScale {
        self.fixed.unwrap_or_else(|| {
            from_load(
                f64::from_bits(self.load.load(Ordering::Relaxed)),
                super::cores(),
            )
        })
    }
}

/// Keeps `load` at the larger of the 1-minute load average and a moving average of the tasks
/// running at each reading (less this thread, which is running as it reads).
fn sample(load: &AtomicU64) {
    let weight = 1.0 - (-SAMPLE_EVERY.as_secs_f64() / RUNNING_WINDOW.as_secs_f64()).exp();
    let mut running_avg = 0.0;
    loop {
        std::thread::sleep(SAMPLE_EVERY);
        let Some((one_minute, running)) = read_loadavg() else {
            continue;
        };
        running_avg += weight * ((running - 1.0).max(0.0) - running_avg);
        load.store(one_minute.max(running_avg).to_bits(), Ordering::Relaxed);
    }
}

/// The 1-minute load average and the number of tasks running now, from `/proc/loadavg`.
fn read_loadavg() -> Option<(f64, f64)> {
    parse_loadavg(&std::fs::read_to_string("/proc/loadavg").ok()?)
}

/// `0.52 0.40 0.33 3/123 4567`: the first field, and the running count of the fourth.
fn parse_loadavg(text: &str) -> Option<(f64, f64)> {
    let mut fields = text.split_whitespace();
    let one_minute = fields.next()?.parse().ok()?;
    let running = fields.nth(2)?.split('/').next()?.parse().ok()?;
    Some((one_minute, running))
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
        assert_eq!(
            parse_loadavg("0.52 0.40 0.33 3/123 4567\n"),
            Some((0.52, 3.0))
        );
        assert_eq!(parse_loadavg(""), None);
        assert_eq!(parse_loadavg("0.52 0.40 0.33"), None);
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
        assert_eq!(Live::start(Some(Choice::Fixed(given))).now(), given);
        assert!(Live::start(None).now().factor() >= 1.0);
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
