//! Grading what a host did with a served case, with the runner's own checks
//! (`conformance::checks::evaluate`) on a trial built from the transcripts: there is no
//! client process, no outcome line and no plan handed over. So:
//! - the always-on wire rules (JSON-RPC base, schema, trace, HTTP and session) are judged;
//! - the driver contract's checks (CONTRACT-*, always-on or the case's) and the checks of what
//!   a step reported are "not exercised": a host is not driven and reports nothing to the
//!   harness;
//! - the case's wire and lifecycle checks are judged once the host performed every step of
//!   the plan ([`super::steps`]), else "not exercised", naming the steps missing;
//! - the stdio ownership rule and the lifecycle checks need the host to have ended its
//!   servers: while one still runs they are "not exercised".

use std::collections::BTreeMap;
use std::time::Duration;

use mcp_harness_scenarios::Case;
use mcp_harness_scenarios::model::{CaseCheck, Level, Rule, Transport, WireStream};
use mcp_harness_scenarios::transcript::Record;

use super::steps::{self, Seen};
use crate::conformance::canary::CanaryRun;
use crate::conformance::checks::{self, CheckResult};
use crate::conformance::trial::{ClientEnd, ServerProcess, TrialRun};

/// What became of one check.
#[derive(Debug, Clone, PartialEq)]
pub enum Verdict {
    /// It held.
    Pass,
    /// It did not.
    Fail,
    /// The host never did what it judges; the reason says what was missing.
    NotExercised(String),
}

/// One check and its verdict.
#[derive(Debug, Clone)]
pub struct Graded {
    /// The check, as the runner reports it (`passed` is false when not exercised).
    pub check: CheckResult,
    /// Its verdict.
    pub verdict: Verdict,
}

impl Graded {
    /// A key that names the check within its case.
    pub fn key(&self) -> String {
        format!("{}|{}", self.check.requirement_id, self.check.name)
    }
}

/// What the host's servers recorded, and whether any of them was still running.
pub struct Observed {
    /// The main server's records.
    pub main: Vec<Record>,
    /// Each extra server's records.
    pub others: BTreeMap<String, Vec<Record>>,
    /// The stdio server processes the transcripts know of.
    pub servers: Vec<ServerProcess>,
    /// Whether a stdio server was still running (the host had not ended it).
    pub still_running: bool,
    /// The stdio servers (`main` or an extra's name) that were started and have all ended.
    pub ended: Vec<String>,
    /// What the canary saw, at the end (`None` while serving).
    pub canary: Option<CanaryRun>,
    /// How long the session has lasted.
    pub elapsed: Duration,
}

/// Every check of `case` served on `transport`, graded on what was observed.
pub fn judge(case: &Case, transport: Transport, seen: &Observed) -> Vec<Graded> {
    let missing = steps::missing(
        &case.scenario,
        transport,
        &Seen {
            main: &seen.main,
            others: &seen.others,
            ended: &seen.ended,
        },
    );
    let mut judged_case = case.clone();
    judged_case.scenario.checks.clear();
    let mut unjudged = Vec::new();
    for check in &case.scenario.checks {
        let why = match &check.rule {
            Rule::Step { .. } => {
                Some("it judges what a step reported; a host reports nothing to the harness".into())
            }
            _ if check.requirement.id.starts_with("CONTRACT-") => {
                Some("it cites the driver contract, which does not bind a host".into())
            }
            Rule::Wire(w) if w.on == WireStream::ClientOutput => {
                Some("it judges what the client printed, which a host keeps".into())
            }
            _ if !missing.is_empty() => {
                Some(format!("the host did not perform {}", missing.join("; ")))
            }
            Rule::Lifecycle(_) if seen.still_running => {
                Some("the host had not ended its server when serving ended".into())
            }
            _ => None,
        };
        match why {
            Some(why) => unjudged.push(Graded {
                check: case_check(check),
                verdict: Verdict::NotExercised(why),
            }),
            None => judged_case.scenario.checks.push(check.clone()),
        }
    }
    let run = trial_run(seen);
    let (results, _) = checks::evaluate(&judged_case, transport, &run);
    let mut graded: Vec<Graded> = results
        .into_iter()
        .map(|check| {
            let verdict = if check.always_on && check.requirement_id.starts_with("CONTRACT-") {
                Verdict::NotExercised(
                    "a check of the driver contract; a host is not driven by it".into(),
                )
            } else if check.requirement_id == "PROF-STDIO-1" && seen.servers.is_empty() {
                Verdict::NotExercised("the host never launched this server".into())
            } else if check.requirement_id == "PROF-STDIO-1" && seen.still_running {
                Verdict::NotExercised("the host had not ended its server when serving ended".into())
            } else if check.always_on && !check.observed {
                // An always-on rule holds vacuously where nothing exercised it: no pass.
                Verdict::NotExercised(
                    "nothing the host sent gave this rule anything to judge".into(),
                )
            } else if check.passed {
                Verdict::Pass
            } else {
                Verdict::Fail
            };
            Graded { check, verdict }
        })
        .collect();
    graded.extend(unjudged);
    graded
}

/// What the host's servers recorded as the trial the runner's checks read: no client
/// process, no output, the host counted as having exited.
pub fn trial_run(seen: &Observed) -> TrialRun {
    TrialRun {
        stdout_lines: Vec::new(),
        stdout_overflow: false,
        stderr_tail: String::new(),
        end: ClientEnd::Exited(0),
        elapsed: seen.elapsed,
        records: Ok(seen.main.clone()),
        servers: seen.servers.clone(),
        token_given: false,
        secret_leaked: false,
        auth_redirect: None,
        escaped: Vec::new(),
        phases: Default::default(),
        canary: seen.canary.clone(),
        unavailable: None,
        dns: Vec::new(),
        others: seen
            .others
            .iter()
            .map(|(name, records)| (name.clone(), Ok(records.clone())))
            .collect(),
        traces: None,
    }
}

/// A case's check as a result not yet judged.
fn case_check(check: &CaseCheck) -> CheckResult {
    let r = &check.requirement;
    CheckResult {
        name: check.name.clone(),
        level: r.level,
        requirement_id: r.id.clone(),
        requirement: r.text.clone(),
        source: r.source.clone(),
        passed: false,
        expected: String::new(),
        actual: String::new(),
        always_on: false,
        observed: false,
    }
}

/// Whether a failed check at `level` fails the session: must, should and profile do,
/// advisories do not.
pub fn fails_the_session(level: Level) -> bool {
    level != Level::Advisory
}
