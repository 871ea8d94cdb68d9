//! `mcp-harness check`: a recorded session graded offline, by the always-on rules that judge
//! the client's side of the wire, through the very code a live trial runs
//! ([`checks::evaluate_wire_only`]) at the catalogue's levels: the JSON-RPC base and id
//! rules, the published schemas, the trace context, and over HTTPS the HTTP and session
//! rules. What only a driven trial knows is not judged: the driver contract (`CONTRACT-*`),
//! the stdio server's lifetime (`PROF-STDIO-1`), the bearer token handed over (`AUTH-08`),
//! and a case's own checks.
//!
//! **Not observed.** A rule with nothing to judge passes a live trial by default; here it is
//! "not observed", never a pass. What exercises each rule (the checks decide it where they
//! judge, `CheckResult::observed`):
//! - STDIO-02 / HTTP-01: any line or POST body from the client;
//! - JSON-10: a batch (the check is made only then); JSON-01: a request; JSON-02/03: two
//!   requests (one cannot reuse an id); JSON-05: a notification;
//! - SCHEMA-01: a request or notification whose method the schema of its revision defines;
//!   SCHEMA-02: an answer to a server request (before 2026-07-28);
//! - TRACE-01 / TRACE-02: a `traceparent`/`tracestate` or `baggage` in a 2026-07-28 `_meta`;
//! - ADV-OTEL-1..4: made only when the recording holds `span` records (a traces trial's
//!   transcript): a request with its span, and for ADV-OTEL-4 a failed one;
//! - HTTP-02 / PROF-ERA-2: a POST to the MCP endpoint; HTTP-06: a request after a session
//!   began (seen as a request carrying `Mcp-Session-Id`: a transcript keeps no response
//!   header); HTTP-09a/b: a request after an `initialize` settled on 2025-06-18..2025-11-25.
//!
//! The recording fills a synthetic case ([`infer`]): the transport, the revision in force
//! where the recording names none, the era (2026-07-28 picks JSON-03 over JSON-02, unless the
//! client sent `initialize`) and
//! whether the server issued sessions; the MCP endpoint's path, whatever the server's, is
//! read as the fakes' `/mcp`. [`recheck`] proves the equivalence with live runs.

pub mod infer;
pub mod output;
pub mod read;
pub mod recheck;

use std::path::PathBuf;

use mcp_harness_scenarios::Case;
use mcp_harness_scenarios::model::{ClientEra, Level, Scenario, ServerScript, Transport, era};
use mcp_harness_scenarios::transcript::{Event, Record};

use crate::conformance::checks::{self, CheckResult};
use crate::conformance::trial::{ClientEnd, TrialRun};
use crate::report::{NotJudged, TrialResult};

pub use infer::RevisionSource;

/// What a check made of a recording.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Verdict {
    /// The rule held on what the recording shows.
    Pass,
    /// The rule was broken.
    Fail,
    /// Nothing in the recording exercised the rule: neither a pass nor a failure.
    NotObserved,
}

impl Verdict {
    /// The verdict as the output writes it.
    pub fn as_str(self) -> &'static str {
        match self {
            Verdict::Pass => "pass",
            Verdict::Fail => "fail",
            Verdict::NotObserved => "not observed",
        }
    }
}

/// One requirement's verdict on a recording.
#[derive(Debug, Clone)]
pub struct Graded {
    /// The check as the live code made it (for a rule not made at all, a stand-in with its
    /// name, id, level and sentence).
    pub check: CheckResult,
    /// Pass, fail or not observed.
    pub verdict: Verdict,
    /// Not observed: what the recording lacked.
    pub why: String,
}

/// A recording, graded.
#[derive(Debug, Clone)]
pub struct Grading {
    /// Over what the session ran.
    pub transport: Transport,
    /// The revision where the recording names none itself, and where it came from.
    pub revision: (String, RevisionSource),
    /// How many messages the client sent (a batch's one by one).
    pub client_messages: usize,
    /// Every wire requirement, in the live order, then those not made.
    pub checks: Vec<Graded>,
}

impl Grading {
    /// Whether a judged check failed at `must`, `should` or `profile`: `check` then exits 1.
    pub fn fails(&self) -> bool {
        self.checks
            .iter()
            .any(|g| g.verdict == Verdict::Fail && g.check.level != Level::Advisory)
    }

    /// Whether nothing in the recording was judged (every rule "not observed"): `check`
    /// then exits 1 too, since a recording of nothing proves nothing.
    pub fn judged_nothing(&self) -> bool {
        self.checks
            .iter()
            .all(|g| g.verdict == Verdict::NotObserved)
    }

    /// The checks with `verdict`.
    pub fn with(&self, verdict: Verdict) -> impl Iterator<Item = &Graded> {
        self.checks.iter().filter(move |g| g.verdict == verdict)
    }
}

/// Every always-on wire rule `check` grades (and `--recheck` compares): its id, the
/// transport it is made on (`None`: both), and what a recording lacks when nothing in it
/// exercised the rule. JSON-02 and JSON-03 are one rule, always made: the era picks which
/// one the check cites.
pub(crate) const WIRE_RULES: &[(&str, Option<Transport>, &str)] = &[
    (
        "STDIO-02",
        Some(Transport::Stdio),
        "the client sent nothing",
    ),
    ("HTTP-01", Some(Transport::Https), "the client sent nothing"),
    ("JSON-10", None, "the client sent no batch"),
    ("JSON-01", None, "the client sent no request"),
    ("JSON-02", None, "the client sent fewer than two requests"),
    ("JSON-03", None, "the client sent fewer than two requests"),
    ("JSON-05", None, "the client sent no notification"),
    (
        "SCHEMA-01",
        None,
        "no request or notification of a method the published schema of its revision defines",
    ),
    (
        "SCHEMA-02",
        None,
        "the client answered no server request (before 2026-07-28)",
    ),
    (
        "TRACE-01",
        None,
        "no traceparent or tracestate in the _meta of a 2026-07-28 message",
    ),
    (
        "TRACE-02",
        None,
        "no baggage in the _meta of a 2026-07-28 message",
    ),
    (
        "HTTP-02",
        Some(Transport::Https),
        "no POST to the MCP endpoint",
    ),
    (
        "PROF-ERA-2",
        Some(Transport::Https),
        "no POST to the MCP endpoint",
    ),
    (
        "HTTP-06",
        Some(Transport::Https),
        "no request after a session began (a session shows as a request carrying Mcp-Session-Id)",
    ),
    (
        "HTTP-09a",
        Some(Transport::Https),
        "no request after an initialize that settled on 2025-06-18 to 2025-11-25",
    ),
    (
        "HTTP-09b",
        Some(Transport::Https),
        "no request after an initialize that settled on 2025-06-18 to 2025-11-25",
    ),
];

/// The wire rules `check` reports on `transport`, whether made or not (JSON-02 and JSON-03
/// are always made, under the one id the era picks).
fn reported(transport: Transport) -> impl Iterator<Item = &'static str> {
    WIRE_RULES
        .iter()
        .filter(move |(id, on, _)| {
            on.is_none_or(|t| t == transport) && !matches!(*id, "JSON-02" | "JSON-03")
        })
        .map(|(id, ..)| *id)
}

/// What a recording lacks for requirement `id` to be exercised.
fn unexercised(id: &str) -> &'static str {
    WIRE_RULES
        .iter()
        .find(|(rule, ..)| *rule == id)
        .map_or("nothing in the recording exercised it", |(.., why)| why)
}

/// Grades `records` (one recording); `revision` is `--revision`.
pub fn grade(records: &[Record], revision: Option<&str>) -> Grading {
    let records = &infer::at_mcp_path(records)[..];
    let transport = infer::transport(records);
    let revision = infer::revision(records, revision);
    let case = synthetic_case(records, &revision.0);
    let run = trial_run(records.to_vec());
    let made = checks::evaluate_wire_only(&case, transport, &run);
    let mut graded: Vec<Graded> = made
        .into_iter()
        .map(|check| {
            let (verdict, why) = match (check.passed, check.observed) {
                (false, _) => (Verdict::Fail, String::new()),
                (true, true) => (Verdict::Pass, String::new()),
                (true, false) => (
                    Verdict::NotObserved,
                    unexercised(&check.requirement_id).to_owned(),
                ),
            };
            Graded {
                check,
                verdict,
                why,
            }
        })
        .collect();
    for id in reported(transport) {
        if graded.iter().any(|g| g.check.requirement_id == id) {
            continue;
        }
        graded.push(Graded {
            check: stand_in(id),
            verdict: Verdict::NotObserved,
            why: unexercised(id).to_owned(),
        });
    }
    let client_messages = records
        .iter()
        .filter(|r| {
            matches!(
                r.event,
                Event::Received { .. } | Event::ReceivedInvalid { .. }
            )
        })
        .count();
    Grading {
        transport,
        revision,
        client_messages,
        checks: graded,
    }
}

/// A rule the checks did not make, named as the live check would be.
fn stand_in(id: &str) -> CheckResult {
    let name = checks::ALWAYS_ON
        .iter()
        .find(|(_, cited, _)| *cited == id)
        .map_or(id, |(name, _, _)| name);
    let requirement = checks::requirement(id);
    CheckResult {
        name: name.to_owned(),
        level: requirement.map_or(Level::Must, |r| r.level),
        requirement_id: id.to_owned(),
        requirement: requirement.map(|r| r.text.clone()).unwrap_or_default(),
        source: requirement.map(|r| r.source.clone()).unwrap_or_default(),
        passed: true,
        expected: String::new(),
        actual: String::new(),
        always_on: true,
        observed: false,
    }
}

/// The case the wire rules read: only its revision, era and HTTP sessions matter.
fn synthetic_case(records: &[Record], revision: &str) -> Case {
    let mut server = ServerScript::default();
    server.http.sessions = infer::sessions(records);
    let mut scenario = Scenario::serving(server);
    scenario.description = "a recorded session".into();
    scenario.protocol_version = revision.to_owned();
    scenario.client_era = era::is_modern(revision).then_some(ClientEra::Modern);
    Case {
        id: "recording".into(),
        path: PathBuf::from("recording"),
        scenario,
        revision: None,
        variant: None,
    }
}

/// A trial run holding only `records`: what the wire rules read of one.
pub(crate) fn trial_run(records: Vec<Record>) -> TrialRun {
    TrialRun {
        stdout_lines: Vec::new(),
        stdout_overflow: false,
        stderr_tail: String::new(),
        end: ClientEnd::Exited(0),
        elapsed: Default::default(),
        records: Ok(records),
        servers: Vec::new(),
        token_given: false,
        secret_leaked: false,
        auth_redirect: None,
        escaped: Vec::new(),
        phases: Default::default(),
        canary: None,
        unavailable: None,
        dns: Vec::new(),
        others: Default::default(),
        traces: None,
    }
}

/// A graded recording as one trial of a report: its judged checks, the requirements not
/// observed, and the recording as the report shows a transcript. `name` names the trial.
pub fn trial_result(name: &str, records: &[Record], grading: &Grading) -> TrialResult {
    use crate::conformance::verdict::{Grade, Strictness};
    let judged: Vec<CheckResult> = grading
        .checks
        .iter()
        .filter(|g| g.verdict != Verdict::NotObserved)
        .map(|g| g.check.clone())
        .collect();
    let strictness = Strictness {
        profile: true,
        advisory: false,
    };
    // A recording of nothing proves nothing: it is no pass.
    let grade = match grading.judged_nothing() {
        true => Grade::Fail,
        false => crate::conformance::verdict::grade(&judged, &Default::default(), &[], strictness),
    };
    let details = match grade {
        Grade::Pass => String::new(),
        _ => output::text(name, grading),
    };
    let (revision, source) = &grading.revision;
    TrialResult {
        description: format!(
            "a recorded session over {}, revision {revision} ({}), {} message(s) from the client: {} failed, {} passed, {} not observed",
            grading.transport.as_str(),
            source.as_str(),
            grading.client_messages,
            grading.with(Verdict::Fail).count(),
            grading.with(Verdict::Pass).count(),
            grading.with(Verdict::NotObserved).count(),
        ),
        checks: judged
            .iter()
            .map(crate::conformance::check_record)
            .collect(),
        details,
        transcript: output::transcript(records),
        spans: crate::conformance::traces::recorded(records)
            .into_iter()
            .cloned()
            .collect(),
        not_judged: grading
            .with(Verdict::NotObserved)
            .map(|g| NotJudged {
                verdict: Verdict::NotObserved.as_str().to_owned(),
                name: g.check.name.clone(),
                level: g.check.level,
                requirement_id: g.check.requirement_id.clone(),
                why: g.why.clone(),
            })
            .collect(),
        ..TrialResult::bare(
            name,
            grade,
            match grading.fails() || grading.judged_nothing() {
                true => crate::conformance::verdict::Verdict::Failed,
                false => crate::conformance::verdict::Verdict::Passed,
            },
        )
    }
}
