//! Running the selected trials on a pool of threads and telling a person how it went: one
//! line per trial as it finishes, the failures in full, then one tally by grade.
//!
//! The command line keeps libtest's options (`--list`, `--exact`, `--skip`, `--test-threads`,
//! `-q`) but the runner is the harness's own, so the console counts trials the way every
//! report does (by grade) and says it once. Several name filters select the trials whose
//! name contains any of them (equals, with `--exact`).

use std::panic::{AssertUnwindSafe, catch_unwind};
use std::sync::{Mutex, mpsc};
use std::thread;

use libtest_mimic::{Arguments, FormatSetting};

use super::verdict::{Grade, Verdict};
use crate::report::{RunResults, TrialResult};

/// Which trials a run keeps, by name.
#[derive(Debug, Clone, Default)]
pub struct Selection {
    /// Keep a trial whose name contains (or, `exact`, equals) any of these; none keeps all.
    pub filters: Vec<String>,
    /// Compare names whole.
    pub exact: bool,
    /// Drop a trial whose name contains (or, `exact`, equals) any of these.
    pub skip: Vec<String>,
}

impl Selection {
    /// Whether the trial called `name` runs.
    pub fn keeps(&self, name: &str) -> bool {
        let hit = |f: &String| match self.exact {
            true => name == f,
            false => name.contains(f.as_str()),
        };
        (self.filters.is_empty() || self.filters.iter().any(hit)) && !self.skip.iter().any(hit)
    }

    /// Refuses a filter that selects no trial of `names` (a typo would otherwise give a green
    /// run of nothing), and a selection that keeps none.
    pub fn check_matches(&self, names: &[String]) -> Result<(), String> {
        let hits = |f: &String| {
            names.iter().any(|n| match self.exact {
                true => n == f,
                false => n.contains(f.as_str()),
            })
        };
        if let Some(f) = self.filters.iter().find(|f| !hits(f)) {
            let how = if self.exact {
                "is the name of"
            } else {
                "is part of the name of"
            };
            return Err(format!(
                "the filter `{f}` matches no trial; expected text that {how} a trial `--list` prints (e.g. `tools/` or `@stdio`)"
            ));
        }
        if !self.filters.is_empty() && !names.iter().any(|n| self.keeps(n)) {
            return Err(format!(
                "the filters {:?} with --skip {:?} keep no trial",
                self.filters, self.skip
            ));
        }
        Ok(())
    }
}

/// Refuses the libtest options this runner does not carry out, rather than ignoring them.
pub fn check_args(args: &Arguments) -> Result<(), String> {
    let refused = [
        (
            args.bench,
            "--bench (there are no benchmarks; see `cargo xtask bench`)",
        ),
        (args.logfile.is_some(), "--logfile (use --report-dir DIR)"),
        (
            matches!(args.format, Some(FormatSetting::Json)),
            "--format json (use --report-dir DIR for results.json)",
        ),
        (args.ignored, "--ignored (no trial is ignored)"),
        (args.unstable_flags.is_some(), "-Z"),
    ];
    match refused.iter().find(|(given, _)| *given) {
        Some((_, what)) => Err(format!("unsupported option {what}")),
        None => Ok(()),
    }
}

/// Whether the console shows one character per trial instead of one line.
pub fn terse(args: &Arguments) -> bool {
    args.quiet || matches!(args.format, Some(FormatSetting::Terse))
}

/// One finished trial: its report record and, when it fails the run, the message to show.
pub struct Finished {
    /// The record that goes into the reports.
    pub result: TrialResult,
    /// Why the trial fails the run (`None` unless its verdict fails the run).
    pub message: Option<String>,
    /// Where the harness's time in the trial went.
    pub phases: super::trial::Phases,
    /// The lines of the baseline entries that named some check of this trial.
    pub named: Vec<usize>,
    /// The trial as it ran, for its retries (`None` when the harness panicked).
    pub prepared: Option<super::Prepared>,
}

/// Runs `work` on every job with `threads` threads, printing each trial as it finishes;
/// returns the finished trials in the order they finished. A job that panics becomes a
/// failed trial made by `on_panic` from its name and the panic's message.
pub fn run_all<J: Send>(
    jobs: Vec<(String, J)>,
    threads: usize,
    terse: bool,
    work: impl Fn(&str, J) -> Finished + Sync,
    on_panic: impl Fn(&str, String) -> Finished,
) -> Vec<Finished> {
    let total = jobs.len();
    println!(
        "\nrunning {total} trial{}",
        if total == 1 { "" } else { "s" }
    );
    let queue = Mutex::new(jobs.into_iter());
    let mut done = Vec::with_capacity(total);
    thread::scope(|scope| {
        let (tx, rx) = mpsc::channel();
        for _ in 0..threads.clamp(1, total.max(1)) {
            let (tx, queue, work) = (tx.clone(), &queue, &work);
            scope.spawn(move || {
                loop {
                    let next = queue.lock().ok().and_then(|mut q| q.next());
                    let Some((name, job)) = next else { break };
                    let outcome = catch_unwind(AssertUnwindSafe(|| work(&name, job)));
                    if tx.send((name, outcome)).is_err() {
                        break;
                    }
                }
            });
        }
        drop(tx);
        for (name, outcome) in rx.iter() {
            let finished = outcome.unwrap_or_else(|panic| {
                let why = panic
                    .downcast_ref::<String>()
                    .cloned()
                    .or_else(|| panic.downcast_ref::<&str>().map(|s| (*s).to_owned()))
                    .unwrap_or_else(|| "a panic".to_owned());
                on_panic(&name, why)
            });
            print_one(&finished.result, terse, done.len() + 1);
            done.push(finished);
        }
    });
    if terse {
        println!();
    }
    done
}

/// The console's word for a trial: its grade, and what the baseline or snapshot made of it.
pub fn status(trial: &TrialResult) -> String {
    let grade = trial.grade.as_str();
    match trial.verdict {
        Verdict::Passed if trial.grade == Grade::NotRun => "not run here".to_owned(),
        Verdict::Failed if trial.grade == Grade::NotRun => {
            "FAILED (not run here; --require-ssrf)".to_owned()
        }
        Verdict::Passed => grade.to_owned(),
        Verdict::ExpectedFailure => format!("xfail ({grade}, baselined)"),
        Verdict::Stale => format!("FAILED ({grade}; stale baseline entry)"),
        Verdict::Failed if trial.grade.is_acceptable() => {
            format!("FAILED ({grade}; snapshot differs)")
        }
        Verdict::Failed if trial.attempts.len() > 1 => {
            format!("FAILED ({grade} on all {} attempts)", trial.attempts.len())
        }
        Verdict::Failed => format!("FAILED ({grade})"),
        Verdict::Flaky => format!("FAILED (flaky: {})", trial.attempts_shown()),
        Verdict::KnownFlaky => format!("flaky ({}; baselined known-flaky)", trial.attempts_shown()),
    }
}

/// Announces the retries that follow the parallel pass.
pub fn print_retrying(count: usize, retries: u32) {
    println!(
        "\nretrying {count} trial{} one at a time, up to {retries} more time{} each",
        if count == 1 { "" } else { "s" },
        if retries == 1 { "" } else { "s" }
    );
}

/// Prints a retried trial's line (or mark) with what its attempts made of it.
pub fn print_retried(trial: &TrialResult, terse: bool, index: usize) {
    print_one(trial, terse, index);
    if terse {
        println!();
    }
}

fn print_one(trial: &TrialResult, terse: bool, index: usize) {
    if !terse {
        println!("test {} ... {}", trial.name, status(trial));
        return;
    }
    let mark = match (trial.verdict, trial.grade) {
        (Verdict::Failed | Verdict::Stale | Verdict::Flaky, _) => 'F',
        (Verdict::ExpectedFailure, _) => 'x',
        (Verdict::KnownFlaky, _) => '~',
        (Verdict::Passed, Grade::NonStrict) => 'n',
        (Verdict::Passed, Grade::NotRun) => 's',
        (Verdict::Passed, _) => '.',
    };
    print!("{mark}");
    if index % 88 == 0 {
        println!();
    }
}

/// How many failing trials the result line names; the causes above it group them all.
const SHOWN: usize = 20;

/// Prints the failures in full, then what to fix first (the failing trials grouped by
/// cause, see [`crate::report::causes`]), then the run's one tally: trials by grade, how many
/// the baseline expected, and which trials fail the run.
pub fn print_end(results: &RunResults, finished: &[Finished]) {
    let failing: Vec<&Finished> = finished.iter().filter(|f| f.message.is_some()).collect();
    if !failing.is_empty() {
        println!("\nfailures:");
        for f in &failing {
            println!("\n---- {} ----", f.result.name);
            println!("{}", f.message.as_deref().unwrap_or_default().trim_end());
        }
        println!();
    }
    let causes = crate::report::causes::render_text(results);
    if !causes.is_empty() {
        println!("\n{}", causes.trim_end());
    }
    println!("\n{}", tally(results));
    if let Some(line) = netns_line(results) {
        println!("{line}");
    }
    let mut names: Vec<&str> = failing.iter().map(|f| f.result.name.as_str()).collect();
    names.sort_unstable();
    match names.len() {
        0 => println!("result: ok\n"),
        n => println!(
            "result: FAILED, {n} {} the run: {}{}\n",
            if n == 1 { "trial fails" } else { "trials fail" },
            names[..n.min(SHOWN)].join(", "),
            match n.saturating_sub(SHOWN) {
                0 => String::new(),
                more => format!(" and {more} more (grouped by cause above)"),
            }
        ),
    }
}

/// How the isolated trials fared: the way their namespaces were made, or why they were not
/// run here (and that this does not fail the run unless `--require-ssrf`).
pub fn netns_line(results: &RunResults) -> Option<String> {
    let not_run: Vec<&TrialResult> = results
        .trials
        .iter()
        .filter(|t| t.grade == Grade::NotRun)
        .collect();
    let why = not_run.iter().find_map(|t| t.not_run.as_deref());
    match (not_run.len(), why, results.netns.as_deref()) {
        (0, _, Some(way)) if !way.starts_with("none") => Some(format!(
            "isolated trials: network namespaces {}",
            super::netns::ways::describe(way)
        )),
        (0, ..) => None,
        (n, why, _) => {
            let fails = not_run.iter().any(|t| t.verdict == Verdict::Failed);
            Some(format!(
                "not run here: {n} isolated trial{} (ssrf/): {}; {}",
                if n == 1 { "" } else { "s" },
                why.unwrap_or("no network namespace"),
                match fails {
                    true => "--require-ssrf makes them fail the run",
                    false => "they do not fail the run (--require-ssrf would make them fail it)",
                }
            ))
        }
    }
}

/// `grades: 112 pass, 1 non-strict, 0 unimplemented, 0 fail (113 trials, 0 baselined) in 3.20s`,
/// with `, N flaky` after the baselined count when retries found flaky trials (a flaky trial
/// is counted under its first attempt's grade).
pub fn tally(results: &RunResults) -> String {
    let shown: Vec<String> = results
        .counts()
        .iter()
        .map(|(g, n)| format!("{n} {}", g.as_str()))
        .collect();
    let baselined = results
        .trials
        .iter()
        .filter(|t| t.baseline_reason.is_some())
        .count();
    let flaky = results.trials.iter().filter(|t| t.flaky).count();
    let flaky = match flaky {
        0 => String::new(),
        n => format!(", {n} flaky"),
    };
    format!(
        "grades: {} ({} trial{}, {baselined} baselined{flaky}) in {:.2}s",
        shown.join(", "),
        results.trials.len(),
        if results.trials.len() == 1 { "" } else { "s" },
        results.seconds
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn several_filters_select_any_and_skip_wins() {
        let s = Selection {
            filters: vec!["calls/".into(), "tools/pag".into()],
            exact: false,
            skip: vec!["@https".into()],
        };
        assert!(s.keeps("calls/text@stdio"));
        assert!(s.keeps("tools/pagination@stdio"));
        assert!(!s.keeps("calls/text@https"));
        assert!(!s.keeps("handshake/x@stdio"));
        let exact = Selection {
            filters: vec!["a@stdio".into(), "b@stdio".into()],
            exact: true,
            skip: Vec::new(),
        };
        assert!(exact.keeps("b@stdio") && !exact.keeps("b@stdio@x"));
        assert!(Selection::default().keeps("anything"));
    }

    #[test]
    fn unsupported_libtest_options_are_refused() {
        let args = Arguments::from_iter(["x", "--format", "json"]);
        assert!(check_args(&args).unwrap_err().contains("--format json"));
        let args = Arguments::from_iter(["x", "-q", "--exact", "a"]);
        assert!(check_args(&args).is_ok() && terse(&args));
    }
}
