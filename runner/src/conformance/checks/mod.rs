//! The checks of one trial. Three families:
//! - the contract's own (deadline, exit status, well-formed outcome lines, no printed token, a
//!   successful connect that reached the server) and the stdio ownership rule, here, always on;
//! - the JSON-RPC base rules and the HTTP rules on every request ([`rules`]), and the trace
//!   context keys of `_meta` ([`trace`]), always on; a traces case's spans ([`otel`]);
//! - every message the client sent against its revision's published schema ([`schema`]);
//! - the case's expectations: outcomes, wire messages, lifecycle events ([`expect`]).
//!
//! Each check cites a requirement of the catalogue (the always-on ones through [`builtin`])
//! and carries its id, sentence, source and level, so a failure can say what was required,
//! where it is written, and how much it matters.

use serde_json::Value;

use mcp_harness_scenarios::Case;
use mcp_harness_scenarios::model::{CaseCheck, Level, Rule, Transport, WireStream};
use mcp_harness_scenarios::transcript::{Event, Record};

mod builtin;
mod expect;
mod otel;
mod rules;
mod schema;
mod servers;
mod spec_schema;
mod trace;

pub use builtin::{ALWAYS_ON, Scope, requirement};
pub use expect::lifecycle_events;

use super::outcome::{self, Outcomes};
use super::output;
use super::trial::{ClientEnd, TrialRun};

/// The result of one check.
#[derive(Debug, Clone)]
pub struct CheckResult {
    /// What is checked, in a line.
    pub name: String,
    /// How binding it is.
    pub level: Level,
    /// The id of the catalogue requirement it cites.
    pub requirement_id: String,
    /// The requirement sentence.
    pub requirement: String,
    /// Where the requirement is written.
    pub source: String,
    /// Whether it held.
    pub passed: bool,
    /// What was required (on failure).
    pub expected: String,
    /// What was seen (on failure).
    pub actual: String,
    /// Whether every trial makes this check (contract and base rules), rather than the case.
    pub always_on: bool,
    /// Whether the trial gave the rule anything to judge (false: it passed by default, for
    /// want of what it judges; `mcp-harness check` reports it "not observed").
    pub observed: bool,
}

pub(super) struct Checker<'a> {
    case: &'a Case,
    transport: Transport,
    results: Vec<CheckResult>,
    /// Set while the always-on checks are made, cleared for the case's own.
    always_on: bool,
}

impl Checker<'_> {
    /// A check the harness makes in every trial, citing requirement `id` of the harness's own
    /// catalogue (the one compiled in: always-on checks are code, so their requirements are
    /// the harness's, whatever `--scenarios` directory the cases come from).
    pub(super) fn cite(&mut self, name: &str, id: &str, outcome: Result<(), (String, String)>) {
        self.cite_on(name, id, true, outcome);
    }

    /// [`cite`](Self::cite) for a rule that had something to judge only when `seen`.
    pub(super) fn cite_on(
        &mut self,
        name: &str,
        id: &str,
        seen: bool,
        outcome: Result<(), (String, String)>,
    ) {
        match builtin::requirement(id) {
            Some(r) => self.push(name, (id, r.level), &r.text, &r.source, outcome),
            None => self.push(
                name,
                (id, Level::Must),
                &format!("(requirement {id} is missing from the catalogue)"),
                "scenarios/requirements.json",
                outcome,
            ),
        }
        if let Some(last) = self.results.last_mut() {
            last.observed = seen || !last.passed;
        }
    }

    /// A check the case file wrote, graded by the requirement it cites.
    pub(super) fn case_check(&mut self, check: &CaseCheck, outcome: Result<(), (String, String)>) {
        let r = &check.requirement;
        self.push(&check.name, (&r.id, r.level), &r.text, &r.source, outcome);
    }

    pub(super) fn push(
        &mut self,
        name: &str,
        cited: (&str, Level),
        requirement: &str,
        source: &str,
        outcome: Result<(), (String, String)>,
    ) {
        let (requirement_id, level) = cited;
        let (passed, (expected, actual)) = match outcome {
            Ok(()) => (true, Default::default()),
            Err(detail) => (false, detail),
        };
        self.results.push(CheckResult {
            name: name.to_owned(),
            level,
            requirement_id: requirement_id.to_owned(),
            requirement: requirement.to_owned(),
            source: source.to_owned(),
            passed,
            expected,
            actual,
            always_on: self.always_on,
            observed: true,
        });
    }
}

/// Runs every check of `case` on what `run` observed; also returns the parsed outcomes.
pub fn evaluate(case: &Case, transport: Transport, run: &TrialRun) -> (Vec<CheckResult>, Outcomes) {
    let s = &case.scenario;
    let mut c = Checker {
        case,
        transport,
        results: Vec::new(),
        always_on: true,
    };
    let outcomes = outcome::parse(&run.stdout_lines, &s.plan);
    // An official-suite client speaks no driver contract: judge it on the wire alone.
    let wire_only = super::official::wire_only(case, &run.stdout_lines);

    c.cite(
        "the client finished within the trial deadline",
        "CONTRACT-3",
        match &run.end {
            ClientEnd::Deadline => Err((
                format!("exit within {} ms", s.deadline_ms),
                "still running at the deadline; its process group was killed".into(),
            )),
            _ => Ok(()),
        },
    );
    c.cite(
        "the client exited with status 0 after carrying out the plan",
        "CONTRACT-1",
        match &run.end {
            ClientEnd::Exited(0) | ClientEnd::Deadline => Ok(()),
            ClientEnd::OutputCapped => Err((
                "exit status 0".into(),
                format!(
                    "stopped by the runner after more than {} MiB on stdout",
                    output::STDOUT_CAP >> 20
                ),
            )),
            ClientEnd::Exited(code) => Err(("exit status 0".into(), format!("exit status {code}"))),
            ClientEnd::Signaled(sig) => {
                Err(("exit status 0".into(), format!("killed by signal {sig}")))
            }
            ClientEnd::SpawnFailed(msg) => Err(("a client that starts".into(), msg.clone())),
        },
    );
    if !wire_only {
        c.cite(
            "the client printed one outcome line per step, in order",
            "CONTRACT-2",
            match (&outcomes.problem, run.stdout_overflow) {
                (_, true) => Err((
                    "bounded outcome output".into(),
                    format!(
                        "more than {} MiB on stdout (a flood; the client was stopped)",
                        output::STDOUT_CAP >> 20
                    ),
                )),
                (Some(problem), _) => Err(problem.clone()),
                (None, false) => Ok(()),
            },
        );
    }
    wire_families(&mut c, transport, run);
    if s.traces.is_some() {
        otel::otel_rules(&mut c, run);
    }
    if run.token_given {
        c.cite(
            "the client never printed its bearer token",
            "CONTRACT-6",
            match run.secret_leaked {
                true => Err((
                    "no trace of the token on stdout or stderr".into(),
                    "the token was printed (redacted here)".into(),
                )),
                false => Ok(()),
            },
        );
    } else if run.auth_redirect.is_some() {
        // An authorization trial: every token, code, refresh token, verifier and client
        // secret of the trial is a secret the client must keep.
        c.cite(
            "the client never printed a secret of its authorization (token, code, refresh token, verifier, client secret)",
            "CONTRACT-6",
            match run.secret_leaked {
                true => Err((
                    "no trace of any authorization secret on stdout or stderr".into(),
                    "a secret was printed (redacted here)".into(),
                )),
                false => Ok(()),
            },
        );
    }
    if transport == Transport::Stdio {
        c.cite(
            "the server process was not left running after the client exited",
            "PROF-STDIO-1",
            match run.servers.iter().find(|p| p.outlived_client) {
                Some(p) if !matches!(run.end, ClientEnd::Deadline | ClientEnd::OutputCapped) => {
                    Err((
                        "no server process alive once the client has exited".into(),
                        format!("server pid {} still running (an orphan)", p.pid),
                    ))
                }
                _ => Ok(()),
            },
        );
    }
    hostile_checks(&mut c, transport, run);
    reached_the_server(&mut c, transport, &outcomes, run);
    c.always_on = false;
    let seed = expect::seed(case);
    let received = run.received();
    // When each received message arrived, by the fake's clock (the `spaced` rule).
    let arrived = arrivals(run);
    let http_requests = rules::http_requests(run);
    let printed = client_output(run);
    let negotiated = run
        .records
        .as_ref()
        .ok()
        .and_then(|records| negotiated_revision(records));
    let both_ways = transcript(run);
    for check in &s.checks {
        // One revision's text judges one revision's trial: a requirement written for some
        // revisions only is not checked where the handshake settled on another.
        if let Some(version) = &negotiated
            && !check.requirement.applies_to(version)
        {
            continue;
        }
        let result = match &check.rule {
            Rule::Step { .. } if wire_only => continue,
            Rule::Step {
                index,
                outcome,
                when,
            } => {
                let taken_up = |when: &Value| {
                    received.iter().any(|got| {
                        mcp_harness_scenarios::matcher::matches(when, got, &mut seed.clone())
                            .is_ok()
                    })
                };
                if when.as_ref().is_some_and(|w| !taken_up(w)) {
                    Ok(())
                } else {
                    expect::outcome_check(*index, outcome, &outcomes, &seed)
                }
            }
            Rule::Wire(w) => {
                let at_this_revision = w.revisions.is_empty()
                    || case
                        .revision
                        .as_ref()
                        .is_some_and(|r| w.revisions.contains(r));
                if !at_this_revision {
                    continue;
                }
                if let Some(name) = &w.server {
                    let result = servers::wire_check(w, name, run, &seed, s.time_scale);
                    c.case_check(check, result);
                    continue;
                }
                let times: &[Option<u64>] = match w.on {
                    WireStream::Messages => &arrived,
                    _ => &[],
                };
                let items: Vec<&Value> = match w.on {
                    WireStream::Messages => received.clone(),
                    WireStream::HttpRequests => http_requests.iter().collect(),
                    WireStream::Canary => run.canary.iter().flat_map(|c| &c.seen).collect(),
                    WireStream::ClientOutput => printed.iter().collect(),
                    WireStream::Transcript => both_ways.iter().collect(),
                    WireStream::Spans => run.traces.iter().flat_map(|t| &t.spans).collect(),
                };
                expect::wire_check(w, &items, times, &seed, s.time_scale)
            }
            Rule::Lifecycle(events) => expect::lifecycle_check(events, run),
        };
        c.case_check(check, result);
    }
    (c.results, outcomes)
}

/// The always-on rules that judge the client's side of the wire alone: the JSON-RPC base and
/// session rules, the published schemas, the trace context, and over HTTPS the HTTP rules.
fn wire_families(c: &mut Checker<'_>, transport: Transport, run: &TrialRun) {
    rules::base_rules(c, run);
    schema::schema_rules(c, run);
    trace::trace_rules(c, run);
    if transport == Transport::Https {
        rules::http_rules(c, &rules::http_requests(run));
    }
}

/// Only the always-on wire rules of a live trial (see [`evaluate`]), through the same code:
/// what `mcp-harness check` grades a recording with. Of `case` they read the revision handed
/// over (before any `initialize`), the era (JSON-02 or JSON-03 when no id is reused) and
/// whether the server issues HTTP sessions; of `run`, its records and `token_given`.
pub fn evaluate_wire_only(case: &Case, transport: Transport, run: &TrialRun) -> Vec<CheckResult> {
    let mut c = Checker {
        case,
        transport,
        results: Vec::new(),
        always_on: true,
    };
    wire_families(&mut c, transport, run);
    // A recording that holds the client's spans (a traces trial's transcript) is judged on
    // them too.
    let mut records = run.records.iter().flatten();
    if records.any(|r| matches!(r.event, Event::Span { .. })) {
        otel::otel_rules(&mut c, run);
    }
    c.results
}

/// The protocol revision the trial's first `initialize` settled on, as the fake answered
/// it; `None` without one (a modern trial, or no handshake), where the revision asked for
/// stands.
fn negotiated_revision(records: &[Record]) -> Option<String> {
    let mut awaited: Option<(u32, Value)> = None;
    for r in records {
        match &r.event {
            Event::Received { message }
                if awaited.is_none()
                    && message.get("method").and_then(Value::as_str) == Some("initialize") =>
            {
                awaited = message.get("id").map(|id| (r.pid, id.clone()));
            }
            Event::Sent { message } => {
                let Some((pid, id)) = &awaited else { continue };
                if r.pid == *pid && message.get("id") == Some(id) && message.get("method").is_none()
                {
                    return message
                        .pointer("/result/protocolVersion")
                        .and_then(Value::as_str)
                        .map(str::to_owned);
                }
            }
            _ => {}
        }
    }
    None
}

/// The messages both ways, as `transcript` wire checks see them: `{"from", "message"}` in the
/// order the fake recorded them (the fake's writes happen on its own clock).
fn transcript(run: &TrialRun) -> Vec<Value> {
    let item = |from: &str, message: &Value| serde_json::json!({"from": from, "message": message});
    run.records
        .iter()
        .flatten()
        .filter_map(|r| match &r.event {
            Event::Received { message } => Some(item("client", message)),
            Event::Sent { message } => Some(item("fake", message)),
            _ => None,
        })
        .collect()
}

/// What the client printed, as `client_output` wire checks see it: each stdout line, then
/// each line of the stderr tail, as `{"stream", "line"}`.
fn client_output(run: &TrialRun) -> Vec<Value> {
    let line = |stream: &str, line: &str| serde_json::json!({"stream": stream, "line": line});
    run.stdout_lines
        .iter()
        .map(|l| line("stdout", l))
        .chain(run.stderr_tail.lines().map(|l| line("stderr", l)))
        .collect()
}

/// Checks made only when they fail, to name the cause of a failure that the case's own
/// checks would show only as its consequences: a process left running outside the client's
/// process group, and (stdio) a server never launched.
fn hostile_checks(c: &mut Checker<'_>, transport: Transport, run: &TrialRun) {
    if !run.escaped.is_empty() {
        let shown: Vec<String> = run
            .escaped
            .iter()
            .map(|p| format!("pid {} ({})", p.pid, p.name))
            .collect();
        c.cite(
            "the client left no process running outside its process group", "CONTRACT-5",
            Err((
                "no process of the trial running outside the client's process group once the client had ended".into(),
                format!(
                    "{} still running outside the group (killed by the runner)",
                    shown.join(", ")
                ),
            )));
    }
    if let Some(redirect) = run.auth_redirect.as_ref().filter(|r| !r.seen.is_empty()) {
        c.cite(
            "the client never connected to its redirect URI (the headless authorization step)",
            "CONTRACT-21",
            Err((
                "no connection to MCP_HARNESS_AUTH_REDIRECT_URI: the adapter takes the authorization endpoint's Location and hands it to the client's callback handling".into(),
                format!("{} connection(s) to the redirect URI", redirect.seen.len()),
            )),
        );
    }
    let connects = run_plan_connects(c.case);
    let launched = run
        .records
        .as_ref()
        .map(|records| records.iter().any(|r| r.event == Event::Started));
    let started = !matches!(run.end, ClientEnd::SpawnFailed(_));
    if transport == Transport::Stdio && connects && started && launched == Ok(false) {
        c.cite(
            "the client launched the stdio server it was given",
            "CONTRACT-4",
            Err((
                "the server of MCP_HARNESS_SERVER_COMMAND started (the plan has a connect step)"
                    .into(),
                "the server was never launched".into(),
            )),
        );
    }
}

/// A plan that connects must reach the server it was given, unless the case's server is one
/// the client must refuse before sending anything (an untrusted or wrong-name certificate, an
/// insecure remote URL): a client that prints plausible outcome lines, successes or errors,
/// without doing anything fails here, by the contract, even in a case whose own checks are
/// all `should` or `advisory`. Made only when it fails.
fn reached_the_server(
    c: &mut Checker<'_>,
    transport: Transport,
    outcomes: &Outcomes,
    run: &TrialRun,
) {
    use mcp_harness_scenarios::model::Endpoint;
    let must_refuse = transport == Transport::Https
        && matches!(
            c.case.scenario.server.http.endpoint,
            Endpoint::UntrustedCa | Endpoint::WrongName | Endpoint::InsecureRemote
        );
    let started = !matches!(run.end, ClientEnd::SpawnFailed(_));
    // In an authorization trial the first POST is challenged (401) before its message is
    // read: the request reaching the MCP endpoint is the client reaching the server.
    let challenged = run.auth_redirect.is_some()
        && run.records.iter().flatten().any(|r| {
            matches!(
                &r.event,
                Event::HttpRequest { origin: Some(o), endpoint: None, path, .. }
                    if o == "mcp" && path == "/mcp"
            )
        });
    if !run_plan_connects(c.case)
        || must_refuse
        || !started
        || challenged
        || !run.received().is_empty()
    {
        return;
    }
    // A client may authorize before its first request: the discovery fallbacks (Protected
    // Resource Metadata at its well-known URLs, then the authorization server's metadata) let
    // it start there without a 401. One that did, and whose flow ended before any MCP request,
    // never met this rule's point: not exercised (the check is not made), rather than failed.
    let authorized_first = run.auth_redirect.is_some()
        && run.records.iter().flatten().any(|r| {
            matches!(
                &r.event,
                Event::HttpRequest {
                    endpoint: Some(_),
                    ..
                }
            )
        });
    if authorized_first {
        return;
    }
    let connect = c
        .case
        .scenario
        .plan
        .iter()
        .position(|step| matches!(step, mcp_harness_scenarios::model::Step::Connect { .. }));
    let reported = match connect.and_then(|i| outcomes.by_step.get(i)) {
        Some(Some(outcome::Reported::Ok(_))) => "connect reported ok",
        Some(Some(_)) => "connect reported an error",
        _ => "connect reported nothing",
    };
    c.cite(
        "the client reached the server it was given",
        "CONTRACT-12",
        Err((
            "the server received the client's first message (the plan has a connect step)".into(),
            format!("{reported}, but the server received nothing"),
        )),
    );
}

fn run_plan_connects(case: &Case) -> bool {
    case.scenario
        .plan
        .iter()
        .any(|step| matches!(step, mcp_harness_scenarios::model::Step::Connect { .. }))
}

/// When each message the fake received arrived, by its clock (`at_ms`), in order.
fn arrivals(run: &TrialRun) -> Vec<Option<u64>> {
    run.records
        .iter()
        .flatten()
        .filter(|r| matches!(r.event, Event::Received { .. }))
        .map(|r| r.at_ms)
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn record(pid: u32, event: Event) -> Record {
        Record {
            pid,
            at_ms: None,
            event,
        }
    }

    #[test]
    fn the_negotiated_revision_is_the_first_initialize_result() {
        let offer = |id: u32| {
            json!({"jsonrpc":"2.0","id":id,"method":"initialize",
            "params":{"protocolVersion":"2025-11-25"}})
        };
        let answer = |id: u32, v: &str| {
            json!({"jsonrpc":"2.0","id":id,
            "result":{"protocolVersion":v}})
        };
        let records = vec![
            record(1, Event::Received { message: offer(1) }),
            record(
                2,
                Event::Sent {
                    message: answer(1, "2024-11-05"),
                },
            ),
            record(
                1,
                Event::Sent {
                    message: json!({"jsonrpc":"2.0","method":"ping","id":1}),
                },
            ),
            record(
                1,
                Event::Sent {
                    message: answer(1, "2025-03-26"),
                },
            ),
            record(1, Event::Received { message: offer(2) }),
            record(
                1,
                Event::Sent {
                    message: answer(2, "2025-11-25"),
                },
            ),
        ];
        assert_eq!(negotiated_revision(&records).as_deref(), Some("2025-03-26"));
        assert_eq!(negotiated_revision(&records[..3]), None);
        assert_eq!(negotiated_revision(&[]), None);
    }
}
