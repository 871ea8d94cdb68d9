//! `mcp-harness serve`: host mode. Plays the fake servers of one or more cases for a client
//! that connects on its own (a host: an IDE, a desktop assistant, an agent runtime) instead
//! of one the harness drives through an adapter. It prints how to reach each server (the
//! stdio fake's command line, or the HTTPS fake's URL and the run's CA) with a host
//! configuration snippet, grades live what the host does, and ends with a summary and the
//! usual report.
//!
//! | module  | role                                                              |
//! |---------|-------------------------------------------------------------------|
//! | `setup` | each case prepared as a trial is: scaled, canary, play file or fake |
//! | `steps` | which plan steps the host performed, by their wire signatures    |
//! | `judge` | the runner's checks on what the host did; "not exercised" rules  |
//! | `live`  | the session: re-reading transcripts, when the host is done       |
//! | `print` | instructions, live check lines, the summary                      |

mod judge;
mod live;
mod print;
mod setup;
mod steps;

use std::path::PathBuf;
use std::sync::OnceLock;
use std::time::{Duration, Instant};

use mcp_harness_scenarios::Case;
use mcp_harness_scenarios::model::Transport;

use crate::conformance::time_scale;
use crate::conformance::trial::Bins;
use crate::conformance::verdict::{Grade, Verdict as RunVerdict};
use crate::report::{CheckRecord, NotJudged, RunResults, TrialResult};
pub use judge::Verdict;
pub use live::End;

/// What one `serve` session needs.
pub struct Options {
    /// The cases to serve, each with the transport to serve it on.
    pub cases: Vec<(Case, Transport)>,
    /// Where the stdio fake is (this binary's `fake-stdio`).
    pub bins: Bins,
    /// Where to write `results.json` and `report.html`.
    pub report_dir: Option<PathBuf>,
    /// When to give up on the host.
    pub timeout: Duration,
    /// Over HTTPS, how long without a request counts as the host being done.
    pub idle: Duration,
    /// How each case is named in reports (`mcp-harness case show ID`, or its file).
    pub case_place: Box<dyn Fn(&Case) -> String>,
}

/// The servable cases among `cases`, with their transports: what `serve --list` prints.
pub fn servable(cases: &[Case]) -> Vec<&Case> {
    cases
        .iter()
        .filter(|c| c.scenario.servable().is_ok())
        .collect()
}

/// Picks the transport a case is served on: `wanted` if the case runs there, else its first
/// (stdio before https, as listed).
pub fn transport_of(case: &Case, wanted: Option<Transport>) -> Result<Transport, String> {
    let transports = &case.scenario.transports;
    match wanted {
        Some(t) if transports.contains(&t) => Ok(t),
        Some(t) => Err(format!(
            "{} does not run over {} (its transports: {})",
            case.id,
            t.as_str(),
            transports
                .iter()
                .map(|t| t.as_str())
                .collect::<Vec<_>>()
                .join(", ")
        )),
        None => transports
            .first()
            .copied()
            .ok_or_else(|| format!("{} lists no transport", case.id)),
    }
}

/// Serves the cases until the host is done; prints to stdout as it goes. Returns whether a
/// check failed at must, should or profile (advisories do not count), or an error (a case
/// that cannot be prepared, a transcript that cannot be read, a report that cannot be written).
pub fn serve(opts: &Options) -> Result<bool, String> {
    use std::io::Write as _;
    let mut stdout = std::io::stdout();
    let interrupted = live::on_interrupt();
    let (scale, _) = time_scale::pick(None);
    let http = OnceLock::new();
    let mut served = Vec::new();
    for (case, transport) in &opts.cases {
        served.push(setup::Served::prepare(
            case, *transport, scale, &opts.bins, &http,
        )?);
    }
    // The same case on both transports: the configuration's names say which is which.
    let mut names = std::collections::HashMap::new();
    for server in served.iter().flat_map(|s| &s.servers) {
        *names.entry(server.entry.clone()).or_insert(0) += 1;
    }
    for s in &mut served {
        let transport = s.transport.as_str();
        for server in &mut s.servers {
            if names.get(&server.entry).is_some_and(|n| *n > 1) {
                server.entry = format!("{}-{transport}", server.entry);
            }
        }
    }
    let _ = write!(stdout, "{}", print::instructions(&served));
    let _ = writeln!(
        stdout,
        "waiting for the host (ends when it is done, on Ctrl-C, or after {} s)",
        opts.timeout.as_secs()
    );
    let _ = stdout.flush();
    let started = Instant::now();
    let end = live::watch(&served, opts.timeout, opts.idle, &interrupted, &mut stdout)?;
    let mut trials = Vec::new();
    let mut failed = false;
    let _ = writeln!(stdout, "\nserving ended: {}", end.as_str());
    for s in &mut served {
        let mut observed = live::last_look(s, started)?;
        observed.canary = s.stop();
        let graded = judge::judge(&s.case, s.transport, &observed);
        let name = s.case.trial_name(s.transport);
        let _ = write!(stdout, "{}", print::summary(&name, &graded));
        // A host that exercised nothing of the case proves nothing: that is no pass.
        let untouched = !graded
            .iter()
            .any(|g| matches!(g.verdict, Verdict::Pass | Verdict::Fail));
        if untouched {
            let _ = writeln!(
                stdout,
                " nothing was judged: the host never exercised {name} (that is no pass)"
            );
        }
        let case_failed = untouched
            || graded
                .iter()
                .any(|g| g.verdict == Verdict::Fail && judge::fails_the_session(g.check.level));
        failed |= case_failed;
        trials.push(trial_result(
            s,
            &name,
            &graded,
            &observed,
            opts,
            case_failed,
        ));
    }
    let _ = stdout.flush();
    if let Some(dir) = &opts.report_dir {
        let results = RunResults {
            client: "host (mcp-harness serve)".into(),
            profile: true,
            time_scale: scale.factor(),
            seconds: started.elapsed().as_secs_f64(),
            netns: None,
            trials,
        };
        crate::report::write_all(dir, &results)?;
        let _ = writeln!(stdout, "report: {}", dir.join("report.html").display());
    }
    Ok(failed)
}

/// One served case as a trial of the report: the checks judged, and those not exercised
/// with their reason (`not_judged`), neither passed nor failed.
fn trial_result(
    s: &setup::Served<'_>,
    name: &str,
    graded: &[judge::Graded],
    observed: &judge::Observed,
    opts: &Options,
    failed: bool,
) -> TrialResult {
    let checks: Vec<CheckRecord> = graded
        .iter()
        .filter(|g| !matches!(g.verdict, Verdict::NotExercised(_)))
        .map(|g| crate::conformance::check_record(&g.check))
        .collect();
    let not_judged: Vec<NotJudged> = graded
        .iter()
        .filter_map(|g| match &g.verdict {
            Verdict::NotExercised(why) => Some(NotJudged {
                verdict: "not exercised".to_owned(),
                name: g.check.name.clone(),
                level: g.check.level,
                requirement_id: g.check.requirement_id.clone(),
                why: why.clone(),
            }),
            _ => None,
        })
        .collect();
    let any_failed = graded.iter().any(|g| g.verdict == Verdict::Fail);
    let grade = match (failed, any_failed) {
        (true, _) => Grade::Fail,
        (false, true) => Grade::NonStrict,
        (false, false) => Grade::Pass,
    };
    let details = match (any_failed, failed) {
        (true, _) => print::summary(name, graded).trim().to_owned(),
        (false, true) => format!("nothing was judged: the host never exercised {name}"),
        (false, false) => String::new(),
    };
    // The transcript as a trial's report shows it (normalized as snapshots are).
    let transcript = crate::conformance::snapshot::render(&judge::trial_run(observed));
    TrialResult {
        description: s.case.scenario.description.clone(),
        level: s.case.scenario.requirement.level,
        case_path: (opts.case_place)(&s.case),
        elapsed_ms: observed.elapsed.as_millis().try_into().unwrap_or(u64::MAX),
        time_scale: s.case.scenario.time_scale.factor(),
        checks,
        not_judged,
        details,
        transcript,
        ..TrialResult::bare(
            name,
            grade,
            match failed {
                true => RunVerdict::Failed,
                false => RunVerdict::Passed,
            },
        )
    }
}
