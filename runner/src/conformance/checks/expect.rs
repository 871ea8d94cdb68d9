//! The case's own expectations: what each step reports, what the fake received (messages or
//! HTTP requests), and how the stdio server process ended.

use serde_json::Value;

use mcp_harness_scenarios::Case;
use mcp_harness_scenarios::matcher::{self, Captures};
use mcp_harness_scenarios::model::{
    ErrorExpectation, ErrorKind, LifecycleEvent, StepOutcome, TimeScale, WireExpectation, WireRule,
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

/// Judges a wire check on `received`, the items of its stream in order; `times` holds when
/// each arrived by the fake's clock (`at_ms`), for the messages (one per item), and is
/// empty for the other streams; `scale` is the trial's time scale, which a `spaced` rule's
/// `min_ms` is multiplied by.
pub(super) fn wire_check(
    w: &WireExpectation,
    received: &[&Value],
    times: &[Option<u64>],
    seed: &Captures,
    scale: TimeScale,
) -> Result<(), (String, String)> {
    // `filter` narrows what every rule looks at.
    let (considered, times): (Vec<&Value>, Vec<Option<u64>>) = received
        .iter()
        .enumerate()
        .filter(|(_, got)| {
            w.filter
                .as_ref()
                .is_none_or(|f| matcher::matches(f, got, &mut seed.clone()).is_ok())
        })
        .map(|(i, got)| (*got, times.get(i).copied().flatten()))
        .unzip();
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
        WireRule::Spaced { matcher: m, min_ms } => {
            spaced(m, scale.ms(*min_ms), received, &times, seed)
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

/// Consecutive messages matching `m` arrived at least `min_ms` apart: the first pair that
/// came closer is named, with the gap.
fn spaced(
    m: &Value,
    min_ms: u64,
    received: &[&Value],
    times: &[Option<u64>],
    seed: &Captures,
) -> Result<(), (String, String)> {
    let expected = || {
        format!(
            "messages matching {} at least {min_ms} ms apart",
            matcher::full(m)
        )
    };
    let matching: Vec<(usize, Option<u64>)> = received
        .iter()
        .enumerate()
        .filter(|(_, got)| matcher::matches(m, got, &mut seed.clone()).is_ok())
        .map(|(i, _)| (i, times.get(i).copied().flatten()))
        .collect();
    let name = |i: usize| format!("message {} ({})", i + 1, matcher::short(received[i]));
    for pair in matching.windows(2) {
        let [(a, at_a), (b, at_b)] = [pair[0], pair[1]];
        let (Some(at_a), Some(at_b)) = (at_a, at_b) else {
            return Err((
                expected(),
                format!("no arrival time recorded for {} or {}", name(a), name(b)),
            ));
        };
        let gap = at_b.saturating_sub(at_a);
        if gap < min_ms {
            return Err((
                expected(),
                format!("{} came {gap} ms after {}", name(b), name(a)),
            ));
        }
    }
    Ok(())
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
            // A span (`on: "spans"`): its name.
            if m.get("span_id").is_some() {
                let name = m.get("name").and_then(Value::as_str).unwrap_or("?");
                return format!("span {name:?}");
            }
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
    let Some(first) = run.main_servers().first().copied() else {
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
    let Some(main) = run.main_servers().first().copied() else {
        return Err((names(want), "the server was never started".into()));
    };
    let got = lifecycle_events(run);
    if got == want {
        Ok(())
    } else {
        let mut actual = names(&got);
        if main.outlived_client {
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
            server: None,
        };
        let post = json!({"method": "POST", "status": 200});
        let get = json!({"method": "GET", "status": 200});
        let seed = Captures::new();
        assert!(
            wire_check(&check, &[&post], &[], &seed, TimeScale::ONE).is_ok(),
            "no GET: nothing to judge"
        );
        assert!(
            wire_check(&check, &[&post, &get], &[], &seed, TimeScale::ONE).is_err(),
            "opened, never reopened"
        );
        assert!(wire_check(&check, &[&get, &post, &get], &[], &seed, TimeScale::ONE).is_ok());
    }

    #[test]
    fn spaced_judges_the_gaps_between_matching_messages_scaled() {
        use mcp_harness_scenarios::model::WireStream;
        use serde_json::json;
        let check = WireExpectation {
            on: WireStream::Messages,
            filter: Some(json!({"method": {"$one_of": ["tasks/get", "tools/call"]}})),
            rule: WireRule::Spaced {
                matcher: json!({"method": "tasks/get"}),
                min_ms: 100,
            },
            revisions: Vec::new(),
            when: None,
            server: None,
        };
        let call = json!({"method": "tools/call", "id": 1});
        let get = |id: u32| json!({"method": "tasks/get", "id": id});
        let ping = json!({"method": "ping", "id": 9});
        let (g2, g3, g4) = (get(2), get(3), get(4));
        let seed = Captures::new();
        let one = TimeScale::ONE;
        let messages = [&call, &g2, &ping, &g3, &g4];
        // Polls 150 ms apart pass; a ping between them is not one of them.
        let apart = [Some(0), Some(10), Some(50), Some(160), Some(310)];
        assert_eq!(wire_check(&check, &messages, &apart, &seed, one), Ok(()));
        // A poll 40 ms after the one before fails, naming both and the gap.
        let close = [Some(0), Some(10), Some(50), Some(160), Some(200)];
        let (expected, actual) = wire_check(&check, &messages, &close, &seed, one).unwrap_err();
        assert!(expected.contains("at least 100 ms apart"), "{expected}");
        assert!(
            actual.contains("message 4")
                && actual.contains("message 3")
                && actual.contains("40 ms"),
            "{actual}"
        );
        // At a time scale of 2 the least gap is 200 ms: 150 ms apart is too close.
        let two = TimeScale::new(2.0).unwrap();
        assert!(wire_check(&check, &messages, &apart, &seed, two).is_err());
        // Fewer than two polls: nothing to judge.
        assert_eq!(
            wire_check(&check, &[&call, &g2], &[Some(0), Some(1)], &seed, one),
            Ok(())
        );
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
