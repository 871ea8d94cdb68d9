//! The case's own expectations: what each step reports, what the fake received (messages or
//! HTTP requests), and how the stdio server process ended.

use serde_json::Value;

use mcp_harness_scenarios::Case;
use mcp_harness_scenarios::matcher::{self, Captures};
use mcp_harness_scenarios::model::{
    ErrorExpectation, ErrorKind, LifecycleEvent, StepOutcome, WireExpectation, WireRule,
};
use mcp_harness_scenarios::transcript::Event;

use crate::conformance::outcome::{Outcomes, Reported};
use crate::conformance::trial::TrialRun;

/// The captures every matcher of a trial starts with: `revision`, the protocol version the
/// client was asked to offer, and for a dual-era client `legacy_revision`, its fallback version.
pub(super) fn seed(case: &Case) -> Captures {
    let mut seed = Captures::new();
    seed.insert("revision".into(), case.versions().protocol.into());
    if let Some(legacy) = case.versions().legacy {
        seed.insert("legacy_revision".into(), legacy.into());
    }
    seed
}

/// What plan step `index` reported, against what it must report.
pub(super) fn outcome_check(
    index: usize,
    want: &StepOutcome,
    outcomes: &Outcomes,
    seed: &Captures,
) -> Result<(), (String, String)> {
    let expected = match want {
        StepOutcome::Ok(m) if m.as_object().is_some_and(|m| m.is_empty()) => "ok".to_owned(),
        StepOutcome::Ok(m) => format!("ok {}", matcher::full(m)),
        StepOutcome::Error(e) => e.describe(),
        StepOutcome::Either { ok, error } => {
            let ok = if ok.as_object().is_some_and(|m| m.is_empty()) {
                "ok".to_owned()
            } else {
                format!("ok {}", matcher::full(ok))
            };
            format!("{ok}, or {}", error.describe())
        }
    };
    match (outcomes.by_step.get(index).and_then(Option::as_ref), want) {
        (None, _) => Err((expected, "no outcome line for this step".into())),
        (Some(Reported::Ok(got)), StepOutcome::Ok(m)) => {
            matcher::matches(m, got, &mut seed.clone())
                .map_err(|miss| (expected, format!("ok {} ({miss})", matcher::short(got))))
        }
        (Some(Reported::Ok(got)), StepOutcome::Either { ok, .. }) => {
            matcher::matches(ok, got, &mut seed.clone())
                .map_err(|miss| (expected, format!("ok {} ({miss})", matcher::short(got))))
        }
        (
            Some(Reported::Error { kind, code, status }),
            StepOutcome::Error(e) | StepOutcome::Either { error: e, .. },
        ) if error_accepted(e, *kind, *code, *status) => Ok(()),
        (Some(other), _) => Err((expected, other.describe())),
    }
}

/// Whether a reported error is one the step accepts: any listed kind, and the `code` and
/// `status` only when the kind reported is the first one listed (the main kind, the one they
/// belong to: `{"kind": ["http_status", "transport_closed"], "status": 500}` accepts a 500,
/// or a closed transport whatever it carries).
fn error_accepted(
    want: &ErrorExpectation,
    kind: ErrorKind,
    code: Option<i64>,
    status: Option<u16>,
) -> bool {
    if !want.kinds.contains(&kind) {
        return false;
    }
    if want.kinds.first() != Some(&kind) {
        return true;
    }
    (want.code.is_none() || want.code == code) && (want.status.is_none() || want.status == status)
}

pub(super) fn wire_check(
    w: &WireExpectation,
    received: &[&Value],
    seed: &Captures,
) -> Result<(), (String, String)> {
    // `filter` narrows what every rule looks at.
    let considered: Vec<&Value> = received
        .iter()
        .copied()
        .filter(|got| {
            w.filter
                .as_ref()
                .is_none_or(|f| matcher::matches(f, got, &mut seed.clone()).is_ok())
        })
        .collect();
    let received = considered.as_slice();
    // `when`: the rule binds only once the client took up what it is about.
    if let Some(when) = &w.when
        && !received
            .iter()
            .any(|got| matcher::matches(when, got, &mut seed.clone()).is_ok())
    {
        return Ok(());
    }
    let mut caps = seed.clone();
    match &w.rule {
        WireRule::First(first) => {
            for (i, m) in first.iter().enumerate() {
                let Some(got) = received.get(i) else {
                    return Err((
                        format!("message {} matching {}", i + 1, matcher::full(m)),
                        format!("only {} messages", received.len()),
                    ));
                };
                matcher::matches(m, got, &mut caps).map_err(|miss| {
                    (
                        format!("message {} matching {}", i + 1, matcher::full(m)),
                        format!("{} ({miss})", matcher::short(got)),
                    )
                })?;
            }
            Ok(())
        }
        WireRule::Sequence(sequence) => {
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
                                matcher::full(m)
                            ),
                            with_closest(m, received, from, &caps),
                        ));
                    }
                }
            }
            Ok(())
        }
        WireRule::Sent { matcher: m, count } => {
            let n = received
                .iter()
                .filter(|got| matcher::matches(m, got, &mut seed.clone()).is_ok())
                .count();
            match count {
                Some(want) if n != *want => Err((
                    format!("{want} messages matching {}", matcher::full(m)),
                    format!("{n}: {}", with_closest(m, received, 0, seed)),
                )),
                None if n == 0 => Err((
                    format!("a message matching {}", matcher::full(m)),
                    with_closest(m, received, 0, seed),
                )),
                _ => Ok(()),
            }
        }
        WireRule::Every(m) => {
            let considered = received;
            if considered.is_empty() {
                return Err((
                    format!(
                        "at least one item to which `every {}` applies",
                        matcher::full(m)
                    ),
                    summary(received),
                ));
            }
            for got in considered {
                if let Err(miss) = matcher::matches(m, got, &mut seed.clone()) {
                    return Err((
                        format!("every item matching {}", matcher::full(m)),
                        format!("{} ({miss})", matcher::short(got)),
                    ));
                }
            }
            Ok(())
        }
        WireRule::NotSent(m) => match received
            .iter()
            .find(|got| matcher::matches(m, got, &mut seed.clone()).is_ok())
        {
            Some(got) => Err((
                format!("no message matching {}", matcher::full(m)),
                matcher::short(got),
            )),
            None => Ok(()),
        },
    }
}

/// The messages seen, and the one closest to `m` with where it departs from it.
fn with_closest(m: &Value, received: &[&Value], from: usize, caps: &Captures) -> String {
    let rest = &received[from.min(received.len())..];
    let listed = summary(rest);
    match matcher::closest(m, rest, caps) {
        Some((i, miss)) => format!(
            "{listed}; closest (message {}): {} ({miss})",
            from + i + 1,
            matcher::short(rest[i])
        ),
        None => listed,
    }
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

pub(super) fn lifecycle_check(
    want: &[LifecycleEvent],
    run: &TrialRun,
) -> Result<(), (String, String)> {
    let names = |e: &[LifecycleEvent]| e.iter().map(|e| e.as_str()).collect::<Vec<_>>().join(" → ");
    if run.servers.is_empty() {
        return Err((names(want), "the server was never started".into()));
    }
    let got = lifecycle_events(run);
    if got == want {
        Ok(())
    } else {
        let mut actual = names(&got);
        if run.servers[0].outlived_client {
            actual.push_str(" (and still running when the client exited)");
        }
        Err((
            names(want),
            if actual.is_empty() {
                "nothing".into()
            } else {
                actual
            },
        ))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn want(kinds: &[ErrorKind], code: Option<i64>, status: Option<u16>) -> ErrorExpectation {
        ErrorExpectation {
            kinds: kinds.to_vec(),
            code,
            status,
        }
    }

    #[test]
    fn when_makes_a_rule_bind_only_once_its_subject_was_sent() {
        use mcp_harness_scenarios::model::WireStream;
        use serde_json::json;
        let check = WireExpectation {
            on: WireStream::HttpRequests,
            filter: None,
            rule: WireRule::Sequence(vec![
                json!({"method": "GET", "status": 200}),
                json!({"method": "GET"}),
            ]),
            revisions: Vec::new(),
            when: Some(json!({"method": "GET", "status": 200})),
        };
        let post = json!({"method": "POST", "status": 200});
        let get = json!({"method": "GET", "status": 200});
        let seed = Captures::new();
        assert!(
            wire_check(&check, &[&post], &seed).is_ok(),
            "no GET: nothing to judge"
        );
        assert!(
            wire_check(&check, &[&post, &get], &seed).is_err(),
            "opened, never reopened"
        );
        assert!(wire_check(&check, &[&get, &post, &get], &seed).is_ok());
    }

    #[test]
    fn code_and_status_bind_only_the_first_kind() {
        use ErrorKind::{HttpStatus, InvalidResponse, Timeout, TransportClosed};
        let e = want(
            &[HttpStatus, TransportClosed, InvalidResponse],
            None,
            Some(500),
        );
        assert!(error_accepted(&e, HttpStatus, None, Some(500)));
        assert!(!error_accepted(&e, HttpStatus, None, Some(502)));
        assert!(!error_accepted(&e, HttpStatus, None, None));
        assert!(error_accepted(&e, TransportClosed, None, None));
        assert!(error_accepted(&e, InvalidResponse, None, Some(200)));
        assert!(!error_accepted(&e, Timeout, None, Some(500)));
    }

    #[test]
    fn a_code_on_a_single_kind_is_required() {
        use ErrorKind::{HandshakeFailed, ProtocolError};
        let e = want(&[ProtocolError], Some(-32601), None);
        assert!(error_accepted(&e, ProtocolError, Some(-32601), None));
        assert!(!error_accepted(&e, ProtocolError, Some(-32602), None));
        assert!(!error_accepted(&e, ProtocolError, None, None));
        assert!(!error_accepted(&e, HandshakeFailed, Some(-32601), None));
    }
}
