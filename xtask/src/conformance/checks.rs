//! The checks of one trial. Three families:
//! - the contract's own (deadline, exit status, well-formed outcome lines), always on;
//! - the JSON-RPC base rules and the stdio ownership rule, always on, for every case;
//! - the case's expectations: outcomes, wire messages, lifecycle events.
//!
//! Each check carries its requirement sentence, its source and its level, so a failure can
//! say what was required, where it is written, and how much it matters.

use std::collections::HashSet;

use serde_json::Value;

use mcp_harness_scenarios::Case;
use mcp_harness_scenarios::matcher::{self, Captures};
use mcp_harness_scenarios::model::{
    Level, LifecycleEvent, LifecycleExpectation, OutcomeExpectation, Transport, WireExpectation,
    WireStream,
};
use mcp_harness_scenarios::transcript::Event;

use super::outcome::{self, Outcomes, Reported};
use super::trial::{ClientEnd, TrialRun};

/// The result of one check.
#[derive(Debug, Clone)]
pub struct CheckResult {
    /// What is checked, in a line.
    pub name: String,
    /// How binding it is.
    pub level: Level,
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
}

const CONTRACT: &str = "driver contract v1 (CLIENTS.md)";
const SPEC_BASE: &str = "docs/specification/2025-11-25/basic/index.mdx";
const SPEC_STDIO: &str = "docs/specification/2025-11-25/basic/transports.mdx § stdio";

struct Checker<'a> {
    case: &'a Case,
    results: Vec<CheckResult>,
    /// Set while the always-on checks are made, cleared for the case's own.
    always_on: bool,
}

impl Checker<'_> {
    fn own(&mut self, name: &str, level: Level, outcome: Result<(), (String, String)>) {
        let r = &self.case.scenario.requirement;
        self.push(name, level, &r.text.clone(), &r.source.clone(), outcome);
    }

    fn push(
        &mut self,
        name: &str,
        level: Level,
        requirement: &str,
        source: &str,
        outcome: Result<(), (String, String)>,
    ) {
        let (passed, (expected, actual)) = match outcome {
            Ok(()) => (true, Default::default()),
            Err(detail) => (false, detail),
        };
        self.results.push(CheckResult {
            name: name.to_owned(),
            level,
            requirement: requirement.to_owned(),
            source: source.to_owned(),
            passed,
            expected,
            actual,
            always_on: self.always_on,
        });
    }
}

/// Runs every check of `case` on what `run` observed; also returns the parsed outcomes.
pub fn evaluate(case: &Case, transport: Transport, run: &TrialRun) -> (Vec<CheckResult>, Outcomes) {
    let s = &case.scenario;
    let mut c = Checker {
        case,
        results: Vec::new(),
        always_on: true,
    };
    let outcomes = outcome::parse(&run.stdout_lines, &s.plan);

    c.own(
        "the client finished within the trial deadline",
        s.requirement.level,
        match &run.end {
            ClientEnd::Deadline => Err((
                format!("exit within {} ms", s.deadline_ms),
                "still running at the deadline; its process group was killed".into(),
            )),
            _ => Ok(()),
        },
    );
    c.push(
        "the client exited with status 0 after carrying out the plan",
        Level::Must,
        "Exit status 0 means the plan was carried out; anything else is a crash.",
        CONTRACT,
        match &run.end {
            ClientEnd::Exited(0) | ClientEnd::Deadline => Ok(()),
            ClientEnd::Exited(code) => Err(("exit status 0".into(), format!("exit status {code}"))),
            ClientEnd::Signaled(sig) => {
                Err(("exit status 0".into(), format!("killed by signal {sig}")))
            }
            ClientEnd::SpawnFailed(msg) => Err(("a client that starts".into(), msg.clone())),
        },
    );
    c.push(
        "the client printed one outcome line per step, in order",
        Level::Must,
        "The client writes one JSON line per step to stdout, in order; other output goes to stderr.",
        CONTRACT,
        match (&outcomes.problem, run.stdout_overflow) {
            (_, true) => Err(("bounded outcome output".into(), "more than 1 MiB on stdout".into())),
            (Some(problem), _) => Err(problem.clone()),
            (None, false) => Ok(()),
        },
    );
    base_rules(&mut c, run);
    if transport == Transport::Https {
        http_rules(&mut c, &http_requests(run));
    }
    if s.bearer_token {
        c.push(
            "the client never printed its bearer token",
            Level::Must,
            "Never log access tokens or secrets.",
            "seed 001 (security: redact secrets from traces); seed 000 § Security and Scope",
            match run.secret_leaked {
                true => Err((
                    "no trace of the token on stdout or stderr".into(),
                    "the token was printed (redacted here)".into(),
                )),
                false => Ok(()),
            },
        );
    }
    if transport == Transport::Stdio {
        c.push(
            "the server process was not left running after the client exited",
            Level::Must,
            "The client owns the child process lifecycle and must close it on success, error, and cancellation.",
            "seed 000 § Transports › stdio",
            match run.servers.iter().find(|p| p.outlived_client) {
                Some(p) if run.end != ClientEnd::Deadline => Err((
                    "no server process alive once the client has exited".into(),
                    format!("server pid {} still running (an orphan)", p.pid),
                )),
                _ => Ok(()),
            },
        );
    }
    c.always_on = false;
    for o in &s.expect.outcomes {
        outcome_check(&mut c, o, &outcomes);
    }
    let received = run.received();
    let http_requests = http_requests(run);
    for w in &s.expect.wire {
        let items: Vec<&Value> = match w.on {
            WireStream::Messages => received.clone(),
            WireStream::HttpRequests => http_requests.iter().collect(),
        };
        let result = wire_check(w, &items);
        c.own(&w.check, w.level.unwrap_or(s.requirement.level), result);
    }
    for l in &s.expect.lifecycle {
        let result = lifecycle_check(l, run);
        c.own(&l.check, l.level.unwrap_or(s.requirement.level), result);
    }
    (c.results, outcomes)
}

fn base_rules(c: &mut Checker<'_>, run: &TrialRun) {
    let events: Vec<&Event> = run.records.iter().flatten().map(|r| &r.event).collect();
    let invalid = events.iter().find_map(|e| match e {
        Event::ReceivedInvalid { line, error } => Some(format!("{line:?} ({error})")),
        _ => None,
    });
    let not_rpc = run.received().into_iter().find(|m| !is_jsonrpc(m));
    c.push(
        "every line the client wrote to the server is one JSON-RPC 2.0 message",
        Level::Must,
        "Messages are newline-delimited JSON-RPC and the client must not write anything to the server's stdin that is not a valid MCP message.",
        SPEC_STDIO,
        match (invalid, not_rpc) {
            (Some(line), _) => Err(("a JSON object per line".into(), format!("the line {line}"))),
            (None, Some(m)) => Err(("a JSON-RPC 2.0 message".into(), matcher::short(m))),
            (None, None) => Ok(()),
        },
    );
    let mut ids_problem = None;
    let mut seen: HashSet<(u32, String)> = HashSet::new();
    for r in run.records.iter().flatten() {
        let Event::Received { message } = &r.event else {
            continue;
        };
        let (Some(_), Some(id)) = (message.get("method"), message.get("id")) else {
            continue;
        };
        let problem = match id {
            Value::String(_) | Value::Number(_) if id.is_string() || id.is_i64() || id.is_u64() => {
                (!seen.insert((r.pid, id.to_string()))).then(|| format!("the id {id} used twice"))
            }
            other => Some(format!("the id {other}")),
        };
        if problem.is_some() {
            ids_problem = problem;
            break;
        }
    }
    c.push(
        "request ids are strings or integers, never reused in a session",
        Level::Must,
        "Requests must include a string or integer ID that is not null and that the requestor has not used before in the same session.",
        &format!("{SPEC_BASE} § Requests"),
        ids_problem.map_or(Ok(()), |p| Err(("unique string or integer ids".into(), p))),
    );
    let numbered = run.received().into_iter().find(|m| {
        m.get("id").is_some()
            && m.get("method")
                .and_then(Value::as_str)
                .is_some_and(|n| n.starts_with("notifications/"))
    });
    c.push(
        "notifications carry no id",
        Level::Must,
        "Notifications must not include an ID.",
        &format!("{SPEC_BASE} § Notifications"),
        numbered.map_or(Ok(()), |m| {
            Err(("no `id` member".into(), matcher::short(m)))
        }),
    );
}

/// The HTTP requests the fake saw, as the values `http_requests` wire checks match.
fn http_requests(run: &TrialRun) -> Vec<Value> {
    run.records
        .iter()
        .flatten()
        .filter_map(|r| match &r.event {
            Event::HttpRequest {
                method,
                path,
                headers,
                status,
            } => Some(serde_json::json!({
                "method": method, "path": path, "headers": headers, "status": status,
            })),
            _ => None,
        })
        .collect()
}

fn http_rules(c: &mut Checker<'_>, requests: &[Value]) {
    const SENDING: &str =
        "docs/specification/2025-11-25/basic/transports.mdx § Sending Messages to the Server";
    let posts: Vec<&Value> = requests.iter().filter(|r| r["method"] == "POST").collect();
    let bad_accept = posts.iter().find(|r| {
        let accept = r["headers"]["accept"]
            .as_str()
            .unwrap_or_default()
            .to_ascii_lowercase();
        !(accept.contains("application/json") && accept.contains("text/event-stream"))
    });
    c.push(
        "every POST accepts both application/json and text/event-stream",
        Level::Must,
        "The client must include an Accept header listing both application/json and text/event-stream.",
        SENDING,
        bad_accept.map_or(Ok(()), |r| {
            Err(("Accept: application/json, text/event-stream".into(), matcher::short(&r["headers"])))
        }),
    );
    let bad_type = posts.iter().find(|r| {
        !r["headers"]["content-type"]
            .as_str()
            .unwrap_or_default()
            .to_ascii_lowercase()
            .starts_with("application/json")
    });
    c.push(
        "every POST body is sent as application/json",
        Level::Must,
        "Every JSON-RPC message sent from the client is a new HTTP POST request to the MCP endpoint, with a JSON body.",
        SENDING,
        bad_type.map_or(Ok(()), |r| {
            Err(("Content-Type: application/json".into(), matcher::short(&r["headers"])))
        }),
    );
}

fn is_jsonrpc(m: &Value) -> bool {
    let has = |k: &str| m.get(k).is_some();
    m.get("jsonrpc") == Some(&Value::from("2.0"))
        && (m.get("method").is_some_and(Value::is_string)
            || (has("id") && (has("result") || has("error"))))
}

fn outcome_check(c: &mut Checker<'_>, o: &OutcomeExpectation, outcomes: &Outcomes) {
    let op = c.case.scenario.plan[o.step].op();
    let (name, expected) = match (&o.ok, &o.error) {
        (Some(m), _) if m.as_object().is_some_and(|m| m.is_empty()) => {
            (format!("step {} ({op}) succeeds", o.step), "ok".to_owned())
        }
        (Some(m), _) => (
            format!("step {} ({op}) succeeds with {}", o.step, matcher::short(m)),
            format!("ok {}", matcher::short(m)),
        ),
        (None, Some(e)) => {
            let shown = outcome::describe_error(e.kind, e.code, e.status);
            (format!("step {} ({op}) fails with {shown}", o.step), shown)
        }
        (None, None) => return,
    };
    let result = match (outcomes.by_step[o.step].as_ref(), &o.ok, &o.error) {
        (None, _, _) => Err((expected, "no outcome line for this step".into())),
        (Some(Reported::Ok(got)), Some(m), _) => matcher::matches(m, got, &mut Captures::new())
            .map_err(|miss| (expected, format!("ok {} ({miss})", matcher::short(got)))),
        (Some(Reported::Error { kind, code, status }), None, Some(e))
            if *kind == e.kind
                && (e.code.is_none() || e.code == *code)
                && (e.status.is_none() || e.status == *status) =>
        {
            Ok(())
        }
        (Some(other), _, _) => Err((expected, other.describe())),
    };
    let level = o.level.unwrap_or(c.case.scenario.requirement.level);
    c.own(&name, level, result);
}

fn wire_check(w: &WireExpectation, received: &[&Value]) -> Result<(), (String, String)> {
    let mut caps = Captures::new();
    if let Some(first) = &w.first {
        for (i, m) in first.iter().enumerate() {
            let Some(got) = received.get(i) else {
                return Err((
                    format!("message {} matching {}", i + 1, matcher::short(m)),
                    format!("only {} messages", received.len()),
                ));
            };
            matcher::matches(m, got, &mut caps).map_err(|miss| {
                (
                    format!("message {} matching {}", i + 1, matcher::short(m)),
                    format!("{} ({miss})", matcher::short(got)),
                )
            })?;
        }
        return Ok(());
    }
    if let Some(sequence) = &w.sequence {
        let mut from = 0;
        for (i, m) in sequence.iter().enumerate() {
            let found = received[from..]
                .iter()
                .position(|got| matcher::matches(m, got, &mut caps).is_ok());
            match found {
                Some(at) => from += at + 1,
                None => {
                    return Err((
                        format!(
                            "then (item {} of the sequence) a message matching {}",
                            i + 1,
                            matcher::short(m)
                        ),
                        summary(&received[from..]),
                    ));
                }
            }
        }
        return Ok(());
    }
    if let Some(m) = &w.sent {
        let n = received
            .iter()
            .filter(|got| matcher::matches(m, got, &mut Captures::new()).is_ok())
            .count();
        return match w.count {
            Some(want) if n != want => Err((
                format!("{want} messages matching {}", matcher::short(m)),
                format!("{n}: {}", summary(received)),
            )),
            None if n == 0 => Err((
                format!("a message matching {}", matcher::short(m)),
                summary(received),
            )),
            _ => Ok(()),
        };
    }
    if let Some(m) = &w.every {
        let considered: Vec<&Value> = received
            .iter()
            .copied()
            .filter(|got| {
                w.filter
                    .as_ref()
                    .is_none_or(|f| matcher::matches(f, got, &mut Captures::new()).is_ok())
            })
            .collect();
        if considered.is_empty() {
            return Err((
                format!(
                    "at least one item to which `every {}` applies",
                    matcher::short(m)
                ),
                summary(received),
            ));
        }
        for got in considered {
            if let Err(miss) = matcher::matches(m, got, &mut Captures::new()) {
                return Err((
                    format!("every item matching {}", matcher::short(m)),
                    format!("{} ({miss})", matcher::short(got)),
                ));
            }
        }
        return Ok(());
    }
    if let Some(m) = &w.not_sent {
        if let Some(got) = received
            .iter()
            .find(|got| matcher::matches(m, got, &mut Captures::new()).is_ok())
        {
            return Err((
                format!("no message matching {}", matcher::short(m)),
                matcher::short(got),
            ));
        }
    }
    Ok(())
}

/// A compact list of messages: method (or response) and id, for Actual lines.
fn summary(messages: &[&Value]) -> String {
    if messages.is_empty() {
        return "no messages".into();
    }
    let items: Vec<String> = messages
        .iter()
        .map(|m| {
            if let Some(path) = m.get("path").and_then(Value::as_str) {
                let method = m.get("method").and_then(Value::as_str).unwrap_or("?");
                return format!(
                    "{method} {path} → {}",
                    m.get("status").unwrap_or(&Value::Null)
                );
            }
            let what = m
                .get("method")
                .and_then(Value::as_str)
                .unwrap_or("response");
            match m.get("id") {
                Some(id) => format!("{what}#{id}"),
                None => what.to_owned(),
            }
        })
        .collect();
    format!("messages: {}", items.join(", "))
}

/// The first server process's lifecycle as events; "killed" is inferred when it is gone
/// without having exited by itself.
pub fn lifecycle_events(run: &TrialRun) -> Vec<LifecycleEvent> {
    let Some(first) = run.servers.first() else {
        return Vec::new();
    };
    let mut events: Vec<LifecycleEvent> = run
        .records
        .iter()
        .flatten()
        .filter(|r| r.pid == first.pid)
        .filter_map(|r| match &r.event {
            Event::StdinEof => Some(LifecycleEvent::StdinEof),
            Event::Signal { name } if name == "SIGTERM" => Some(LifecycleEvent::Sigterm),
            Event::Exited { .. } => Some(LifecycleEvent::Exited),
            _ => None,
        })
        .collect();
    if !first.outlived_client && !events.contains(&LifecycleEvent::Exited) {
        events.push(LifecycleEvent::Killed);
    }
    events
}

fn lifecycle_check(l: &LifecycleExpectation, run: &TrialRun) -> Result<(), (String, String)> {
    let names = |e: &[LifecycleEvent]| e.iter().map(|e| e.as_str()).collect::<Vec<_>>().join(" → ");
    if run.servers.is_empty() {
        return Err((names(&l.events), "the server was never started".into()));
    }
    let got = lifecycle_events(run);
    if got == l.events {
        Ok(())
    } else {
        let mut actual = names(&got);
        if run.servers[0].outlived_client {
            actual.push_str(" (and still running when the client exited)");
        }
        Err((
            names(&l.events),
            if actual.is_empty() {
                "nothing".into()
            } else {
                actual
            },
        ))
    }
}
