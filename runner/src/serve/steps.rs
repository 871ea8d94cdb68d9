//! Which steps of a case's plan a host performed, read from what its servers recorded. A host
//! is handed no plan: each step is recognised by its wire signature (`connect` by an
//! `initialize` or `server/discover`, `list_tools` by a `tools/list`, `call_tool N` by a
//! `tools/call` of `N`, …) on the server the step names. A case's wire and lifecycle checks
//! are judged only once every step shows; until then they are "not exercised", naming the
//! steps missing.

use std::collections::BTreeMap;

use serde_json::Value;

use mcp_harness_scenarios::model::servers::MAIN;
use mcp_harness_scenarios::model::{
    Endpoint, ErrorKind, Rule, Scenario, Step, StepOutcome, Transport,
};
use mcp_harness_scenarios::transcript::{Event, Record};

/// What the host's servers recorded: the main server's records and each extra server's.
pub struct Seen<'a> {
    /// The main server's records.
    pub main: &'a [Record],
    /// Each extra server's records, by name.
    pub others: &'a BTreeMap<String, Vec<Record>>,
    /// The stdio servers (`main` or an extra's name) whose every process has ended: a host
    /// that killed its server closed it too, though no record says so.
    pub ended: &'a [String],
}

impl Seen<'_> {
    fn of(&self, server: Option<&str>) -> &[Record] {
        match server {
            None => self.main,
            Some(name) => self.others.get(name).map_or(&[], Vec::as_slice),
        }
    }

    fn all(&self) -> impl Iterator<Item = &[Record]> {
        std::iter::once(self.main).chain(self.others.values().map(Vec::as_slice))
    }
}

/// The plan's steps the host has not performed, each as `step N op (what shows it)`; empty
/// once every one shows. A server whose certificate or URL a host must refuse gets no request
/// past the connection: there only `connect` is looked for (any connection shows it). Steps
/// the plan expects a client to fail without sending are not looked for either: every step
/// after a `connect` that must fail (a refused version: what the host then does not send is
/// what the case judges), and a step whose main expected error is `capability_missing`
/// (refused before sending).
pub fn missing(s: &Scenario, transport: Transport, seen: &Seen<'_>) -> Vec<String> {
    let unsendable = unsendable_steps(s);
    let refused = transport == Transport::Https
        && matches!(
            s.server.http.endpoint,
            Endpoint::UntrustedCa | Endpoint::WrongName | Endpoint::InsecureRemote
        );
    let mut missing = Vec::new();
    for (i, step) in s.plan.iter().enumerate() {
        let server = s.plan_servers.get(i).cloned().flatten();
        let records = seen.of(server.as_deref());
        let shown = unsendable.contains(&i)
            || match (refused && server.is_none(), step) {
                (true, Step::Connect { .. }) => connected(records) || received(records, &|_| true),
                (true, _) => true,
                (false, Step::ExposedTools) => seen
                    .all()
                    .all(|r| received(r, &|m| method(m) == Some("tools/list"))),
                (false, Step::Close)
                    if seen
                        .ended
                        .iter()
                        .any(|e| *e == server.as_deref().unwrap_or(MAIN)) =>
                {
                    true
                }
                (false, step) => performed(step, transport, records),
            };
        if !shown {
            let on = server
                .map(|n| format!(" on server {n}"))
                .unwrap_or_default();
            missing.push(format!(
                "step {} {}{on} ({})",
                i + 1,
                step.op(),
                signature(step)
            ));
        }
    }
    missing
}

/// The plan as a host author reads it: each step and what shows it on the wire, so that the
/// person driving the host knows what to make it do (`serve` prints it beside the address).
pub fn to_do(s: &Scenario) -> Vec<String> {
    let unsendable = unsendable_steps(s);
    s.plan
        .iter()
        .enumerate()
        .map(|(i, step)| {
            let on = match s.plan_servers.get(i).cloned().flatten() {
                Some(name) => format!(" on server {name}"),
                None => String::new(),
            };
            let note = match unsendable.contains(&i) && !matches!(step, Step::Close) {
                true => " (a correct client fails it and sends nothing)",
                false => "",
            };
            format!("{}. {}{on}: {}{note}", i + 1, step.op(), signature(step))
        })
        .collect()
}

/// The indexes of the steps a correct client fails without sending anything (see `missing`).
fn unsendable_steps(s: &Scenario) -> Vec<usize> {
    let must_fail = |index: usize| {
        s.checks.iter().find_map(|c| match &c.rule {
            Rule::Step {
                index: i,
                outcome: StepOutcome::Error(e),
                ..
            } if *i == index => Some(e.kinds.clone()),
            _ => None,
        })
    };
    let refused_connect = s
        .plan
        .iter()
        .enumerate()
        .position(|(i, step)| matches!(step, Step::Connect { .. }) && must_fail(i).is_some());
    (0..s.plan.len())
        .filter(|&i| {
            refused_connect.is_some_and(|c| i > c)
                || must_fail(i)
                    .is_some_and(|kinds| kinds.first() == Some(&ErrorKind::CapabilityMissing))
        })
        .collect()
}

/// Whether `records` show `step` done.
fn performed(step: &Step, transport: Transport, records: &[Record]) -> bool {
    let named = |field: &'static str, want: &str| {
        let want = want.to_owned();
        move |m: &Value| {
            m.pointer(&format!("/params/{field}"))
                .and_then(Value::as_str)
                == Some(&want)
        }
    };
    match step {
        Step::Connect { .. } => received(records, &|m| {
            matches!(method(m), Some("initialize" | "server/discover"))
        }),
        // The arguments too: the case's checks are about the calls it plans, and a host that
        // called the same tool with other arguments did not make them.
        Step::CallTool {
            name, arguments, ..
        } => received(records, &|m| {
            method(m) == Some("tools/call")
                && named("name", name)(m)
                && same_arguments(m.pointer("/params/arguments"), Some(arguments))
        }),
        Step::ReadResource { uri } => received(records, &|m| {
            method(m) == Some("resources/read") && named("uri", uri)(m)
        }),
        Step::GetPrompt { name, arguments } => received(records, &|m| {
            method(m) == Some("prompts/get")
                && named("name", name)(m)
                && same_arguments(m.pointer("/params/arguments"), arguments.as_ref())
        }),
        Step::Close => match transport {
            // Over HTTP a host may close by simply going away: nothing on the wire to require.
            Transport::Https => true,
            Transport::Stdio => records.iter().any(|r| {
                matches!(
                    r.event,
                    Event::StdinEof | Event::Signal { .. } | Event::Exited { .. }
                )
            }),
        },
        Step::Together { steps } => steps.iter().all(|s| performed(s, transport, records)),
        step => match request_method(step) {
            Some(want) => received(records, &|m| method(m) == Some(want)),
            // What a host does for itself alone (`sleep`, `events`, `fetch_icons`): nothing
            // on this server's wire shows it, nothing is required.
            None => true,
        },
    }
}

/// Whether a request's `arguments` are the step's: equal, an absent member counting as `{}`.
fn same_arguments(sent: Option<&Value>, planned: Option<&serde_json::Map<String, Value>>) -> bool {
    let empty = serde_json::Map::new();
    let sent = match sent {
        None | Some(Value::Null) => &empty,
        Some(Value::Object(map)) => map,
        Some(_) => return false,
    };
    sent == planned.unwrap_or(&empty)
}

/// The one method that shows a step sent only by its method.
fn request_method(step: &Step) -> Option<&'static str> {
    Some(match step {
        Step::ListTools => "tools/list",
        Step::ListResources => "resources/list",
        Step::ListResourceTemplates => "resources/templates/list",
        Step::ListPrompts => "prompts/list",
        Step::Complete { .. } => "completion/complete",
        Step::Ping => "ping",
        Step::SetLoggingLevel { .. } => "logging/setLevel",
        Step::Discover => "server/discover",
        Step::ListTasks => "tasks/list",
        Step::GetTask { .. } => "tasks/get",
        Step::CancelTask { .. } => "tasks/cancel",
        Step::TaskResult { .. } => "tasks/result",
        Step::SubscribeResource { .. } => "resources/subscribe",
        Step::UnsubscribeResource { .. } => "resources/unsubscribe",
        Step::Listen { .. } => "subscriptions/listen",
        Step::SetRoots { .. } => "notifications/roots/list_changed",
        _ => return None,
    })
}

/// What shows a step, for the "not exercised" line.
fn signature(step: &Step) -> String {
    match step {
        Step::Connect { .. } => "an initialize or server/discover".into(),
        Step::CallTool {
            name, arguments, ..
        } => format!(
            "a tools/call of {name:?} with the arguments {}",
            Value::Object(arguments.clone())
        ),
        Step::ReadResource { uri } => format!("a resources/read of {uri:?}"),
        Step::GetPrompt {
            name,
            arguments: Some(arguments),
        } => format!(
            "a prompts/get of {name:?} with the arguments {}",
            Value::Object(arguments.clone())
        ),
        Step::GetPrompt { name, .. } => format!("a prompts/get of {name:?}"),
        Step::Close => "the server's stdin closed, a signal, or its end".into(),
        Step::ExposedTools => "a tools/list on every server".into(),
        step => match request_method(step) {
            Some(m) => format!("a {m}"),
            None => "each of its steps".into(),
        },
    }
}

fn method(m: &Value) -> Option<&str> {
    m.get("method").and_then(Value::as_str)
}

fn received(records: &[Record], pick: &dyn Fn(&Value) -> bool) -> bool {
    records.iter().any(|r| match &r.event {
        Event::Received { message } => match message {
            // A batch's elements count one by one.
            Value::Array(items) => items.iter().any(pick),
            one => pick(one),
        },
        _ => false,
    })
}

fn connected(records: &[Record]) -> bool {
    records
        .iter()
        .any(|r| matches!(r.event, Event::Connected | Event::HttpRequest { .. }))
}
