//! The checks of a client's exported spans (a traces case, CLIENTS.md § Traces), always on in
//! a trial whose case asks for traces. Each request the client put on the wire is matched to
//! its span by `jsonrpc.request.id`; the OpenTelemetry MCP conventions then say what the
//! span holds (ADV-OTEL-1..4, advisory: they are not the MCP specification), and the
//! contract says what it never holds (CONTRACT-33: no secret of the trial).
//!
//! The spans are read from the transcript's `span` records (the runner appends them after
//! the fake's), so `mcp-harness check` can judge a recording that holds them.

use std::collections::{BTreeMap, HashMap, HashSet};

use serde_json::Value;

use mcp_harness_scenarios::model::Transport;
use mcp_harness_scenarios::transcript::{Event, Record};

use super::Checker;
use super::rules::Versions;
use crate::conformance::trial::TrialRun;

/// How many problems a failure names before it counts the rest.
const SHOWN: usize = 3;

/// One request the client sent, with what the wire shows around it.
struct Request<'a> {
    /// Its id as the span names it: a number's decimal text, a string as is.
    id: String,
    method: &'a str,
    message: &'a Value,
    /// The server's answer, if it sent one.
    answer: Option<&'a Value>,
    /// The client cancelled it (a `notifications/cancelled`, or at 2026-07-28 a closed
    /// response stream).
    given_up: bool,
    /// The protocol versions its span may name.
    versions: Vec<String>,
    /// The `Mcp-Session-Id` of the HTTP request that carried it.
    session: Option<&'a str>,
}

impl Request<'_> {
    fn label(&self) -> String {
        format!("request {} ({})", self.id, self.method)
    }

    fn param(&self, name: &str) -> Option<&str> {
        self.message.pointer(&format!("/params/{name}"))?.as_str()
    }
}

/// The text form of a JSON-RPC id (`None` for what is not an id).
fn id_text(id: &Value) -> Option<String> {
    match id {
        Value::String(s) => Some(s.clone()),
        Value::Number(n) => Some(n.to_string()),
        _ => None,
    }
}

/// Every request the client sent the main server, in order, each with its answer.
fn requests<'a>(records: &'a [Record], fallback: String) -> Vec<Request<'a>> {
    let mut versions = Versions::new(fallback);
    let mut out: Vec<Request<'a>> = Vec::new();
    // Requests not answered yet, by server process and id.
    let mut open: HashMap<(u32, String), Vec<usize>> = HashMap::new();
    let mut session: Option<&str> = None;
    for r in records {
        match &r.event {
            Event::HttpRequest { headers, .. } => {
                session = headers.get("mcp-session-id").map(String::as_str);
            }
            Event::Received { message } => {
                // After an `initialize`, the version it offers is in force.
                versions.follow(r);
                let version = versions.at(r.pid, Some(message));
                let method = message.get("method").and_then(Value::as_str);
                if method == Some("notifications/cancelled") {
                    let id = message.pointer("/params/requestId").and_then(id_text);
                    cancel(&mut out, &open, r.pid, id);
                }
                let (Some(method), Some(id)) = (method, message.get("id").and_then(id_text)) else {
                    continue;
                };
                open.entry((r.pid, id.clone())).or_default().push(out.len());
                out.push(Request {
                    id,
                    method,
                    message,
                    answer: None,
                    given_up: false,
                    versions: vec![version],
                    session,
                });
            }
            Event::Sent { message } => {
                versions.follow(r);
                let Some(id) = message.get("id").and_then(id_text) else {
                    continue;
                };
                if message.get("method").is_some() {
                    continue;
                }
                let Some(waiting) = open.get_mut(&(r.pid, id)) else {
                    continue;
                };
                if !waiting.is_empty() {
                    let i = waiting.remove(0);
                    out[i].answer = Some(message);
                    // An initialize span may name the version offered or the one settled.
                    let settled = message.pointer("/result/protocolVersion");
                    if let Some(v) = settled.and_then(Value::as_str) {
                        out[i].versions.push(v.to_owned());
                    }
                }
            }
            Event::StreamClosed { id } => cancel(&mut out, &open, r.pid, id_text(id)),
            _ => {}
        }
    }
    out
}

fn cancel(
    out: &mut [Request<'_>],
    open: &HashMap<(u32, String), Vec<usize>>,
    pid: u32,
    id: Option<String>,
) {
    let Some(id) = id else { return };
    for &i in open.get(&(pid, id)).into_iter().flatten() {
        out[i].given_up = true;
    }
}

fn attr<'a>(span: &'a Value, key: &str) -> Option<&'a Value> {
    span.get("attributes")?.get(key)
}

fn attr_str<'a>(span: &'a Value, key: &str) -> Option<&'a str> {
    attr(span, key)?.as_str()
}

fn name(span: &Value) -> &str {
    span.get("name").and_then(Value::as_str).unwrap_or_default()
}

/// A span's `jsonrpc.request.id` as text (a number is read too, and flagged elsewhere).
fn span_id_text(span: &Value) -> Option<String> {
    attr(span, "jsonrpc.request.id").and_then(id_text)
}

/// Each request paired with its span. Requests with the same id and method (a message sent
/// again as it was) share the spans of that id and method, in order of their start.
fn pair<'a>(requests: &[Request<'_>], spans: &[&'a Value]) -> Vec<Option<&'a Value>> {
    let mut groups: BTreeMap<(&str, &str), Vec<usize>> = BTreeMap::new();
    for (i, r) in requests.iter().enumerate() {
        groups.entry((&r.id, r.method)).or_default().push(i);
    }
    let mut out = vec![None; requests.len()];
    for ((id, method), members) in groups {
        let mut candidates: Vec<&Value> = spans
            .iter()
            .copied()
            .filter(|s| {
                span_id_text(s).as_deref() == Some(id)
                    && attr_str(s, "mcp.method.name") == Some(method)
            })
            .collect();
        candidates.sort_by_key(|s| s.get("start_ns").and_then(Value::as_u64));
        for (k, &i) in members.iter().enumerate() {
            out[i] = candidates.get(k).or(candidates.last()).copied();
        }
    }
    out
}

/// A request's span and the other CLIENT spans of the same method nested with it (its
/// ancestors and descendants by `parent_span_id`): where two instrumentation layers each make
/// a span for one request (a library's around its SDK's), the trace shows what either holds.
/// The span paired by id comes first.
fn family<'a>(span: &'a Value, method: &str, spans: &[&'a Value]) -> Vec<&'a Value> {
    let id = |s: &Value| s.get("span_id").and_then(Value::as_str).map(str::to_owned);
    let parent = |s: &Value| {
        s.get("parent_span_id")
            .and_then(Value::as_str)
            .map(str::to_owned)
    };
    let same = |s: &Value| {
        s.get("kind").and_then(Value::as_str) == Some("client")
            && attr_str(s, "mcp.method.name") == Some(method)
    };
    let mut out = vec![span];
    // Ancestors, nearest first.
    let mut up = parent(span);
    while let Some(p) = up.take() {
        let Some(found) = spans
            .iter()
            .copied()
            .find(|s| id(s).as_deref() == Some(p.as_str()))
        else {
            break;
        };
        if same(found) && !out.iter().any(|o| std::ptr::eq(*o, found)) {
            out.push(found);
        }
        up = parent(found).filter(|_| out.len() < spans.len());
    }
    // Descendants.
    let mut frontier: Vec<String> = id(span).into_iter().collect();
    while let Some(p) = frontier.pop() {
        for child in spans
            .iter()
            .copied()
            .filter(|s| parent(s).as_deref() == Some(p.as_str()))
        {
            if out.iter().any(|o| std::ptr::eq(*o, child)) {
                continue;
            }
            if same(child) {
                out.push(child);
            }
            frontier.extend(id(child));
        }
        if out.len() >= spans.len() {
            break;
        }
    }
    out
}

/// The first value of `key` among the spans, if any holds it.
fn attr_in<'a>(spans: &[&'a Value], key: &str) -> Option<&'a Value> {
    spans.iter().find_map(|s| attr(s, key))
}

/// Up to [`SHOWN`] problems, then how many more there were.
fn listed(problems: &[String]) -> String {
    let mut text = problems[..problems.len().min(SHOWN)].join("; ");
    if problems.len() > SHOWN {
        text.push_str(&format!(" (and {} more)", problems.len() - SHOWN));
    }
    text
}

fn verdict(expected: &str, problems: &[String]) -> Result<(), (String, String)> {
    match problems.is_empty() {
        true => Ok(()),
        false => Err((expected.to_owned(), listed(problems))),
    }
}

/// Judges the spans of a traces trial (made when the case has `traces`, or offline when a
/// recording holds spans).
pub(super) fn otel_rules(c: &mut Checker<'_>, run: &TrialRun) {
    let records: &[Record] = run.records.as_deref().unwrap_or_default();
    let requests = requests(records, c.case.versions().protocol);
    let spans = run.spans();
    let paired = pair(&requests, &spans);
    one_span_per_request(c, run, &requests, &spans, &paired);
    let with_span: Vec<(&Request<'_>, Vec<&Value>)> = requests
        .iter()
        .zip(&paired)
        .filter_map(|(r, s)| s.map(|s| (r, family(s, r.method, &spans))))
        .collect();
    named_by_the_conventions(c, records, &with_span);
    context_is_the_spans(c, &with_span);
    errors_are_typed(c, &with_span);
    if let Some(traces) = &run.traces {
        let exported = !spans.is_empty() || !traces.metrics.is_empty() || !traces.leaks.is_empty();
        c.cite_on(
            "nothing the client exported to the OTLP receiver holds a secret of the trial",
            "CONTRACT-33",
            exported,
            verdict(
                "no token, code, verifier, client secret or sensitive value in a span or metric",
                &traces.leaks,
            ),
        );
    }
}

/// ADV-OTEL-1: a CLIENT span per request, with its method and id.
fn one_span_per_request(
    c: &mut Checker<'_>,
    run: &TrialRun,
    requests: &[Request<'_>],
    spans: &[&Value],
    paired: &[Option<&Value>],
) {
    let mut problems = Vec::new();
    if spans.is_empty() && !requests.is_empty() {
        problems.push(format!(
            "the client exported no span for its {} request(s)",
            requests.len()
        ));
    } else {
        let missing: Vec<String> = requests
            .iter()
            .zip(paired)
            .filter(|(_, s)| s.is_none())
            .map(|(r, _)| r.label())
            .collect();
        if !missing.is_empty() {
            problems.push(format!("no span for {}", listed(&missing)));
        }
        let by_id: HashMap<&str, HashSet<&str>> =
            requests.iter().fold(HashMap::new(), |mut m, r| {
                m.entry(r.id.as_str()).or_default().insert(r.method);
                m
            });
        for span in spans {
            let Some(id) = span_id_text(span) else {
                continue;
            };
            let Some(methods) = by_id.get(id.as_str()) else {
                continue;
            };
            let method = attr_str(span, "mcp.method.name");
            if !method.is_some_and(|m| methods.contains(m)) {
                let mut wire: Vec<&str> = methods.iter().copied().collect();
                wire.sort_unstable();
                problems.push(format!(
                    "span {:?} has jsonrpc.request.id {id}, the id of a {} request, but mcp.method.name {}",
                    name(span),
                    wire.join(" or "),
                    method.map_or("absent".to_owned(), |m| format!("{m:?}")),
                ));
            }
        }
        for (r, span) in requests.iter().zip(paired) {
            let Some(span) = span else { continue };
            let kind = span.get("kind").and_then(Value::as_str).unwrap_or("absent");
            if kind != "client" {
                problems.push(format!(
                    "the span of {} is kind {kind}, not client",
                    r.label()
                ));
            }
            if attr(span, "jsonrpc.request.id").is_some_and(|v| !v.is_string()) {
                problems.push(format!(
                    "the span of {} has a jsonrpc.request.id that is not a string",
                    r.label()
                ));
            }
        }
    }
    // A refused export is spans lost: named whether or not the rest matched.
    if let Some(traces) = run.traces.as_ref().filter(|t| !t.rejected.is_empty()) {
        problems.push(format!(
            "the OTLP receiver refused {} export(s): {}",
            traces.rejected.len(),
            listed(&traces.rejected)
        ));
    }
    // Problems are listed whole in the message: each names its own requests.
    let actual = problems.join("; ");
    c.cite_on(
        "the client exported a span per request it sent, with its method and id",
        "ADV-OTEL-1",
        !requests.is_empty() || run.traces.as_ref().is_some_and(|t| !t.rejected.is_empty()),
        match problems.is_empty() {
            true => Ok(()),
            false => Err((
                "a CLIENT span per request, with its mcp.method.name and jsonrpc.request.id (the id as a string)".into(),
                actual,
            )),
        },
    );
}

/// ADV-OTEL-2: the name and the attributes the conventions give, as the wire shows them.
fn named_by_the_conventions(
    c: &mut Checker<'_>,
    records: &[Record],
    pairs: &[(&Request<'_>, Vec<&Value>)],
) {
    let sessions: HashSet<&str> = records
        .iter()
        .filter_map(|r| match &r.event {
            Event::HttpRequest { headers, .. } => headers.get("mcp-session-id").map(String::as_str),
            _ => None,
        })
        .collect();
    let transports: &[&str] = match c.transport {
        Transport::Stdio => &["pipe"],
        Transport::Https => &["tcp", "quic"],
    };
    let mut problems = Vec::new();
    for (r, family) in pairs {
        let (label, span) = (r.label(), family[0]);
        let target = match r.method {
            "tools/call" | "prompts/get" => r.param("name"),
            _ => None,
        };
        let resource = r.method.starts_with("resources/");
        let names: Vec<String> = match (target, resource.then(|| r.param("uri")).flatten()) {
            (Some(t), _) => vec![format!("{} {t}", r.method)],
            (None, Some(uri)) => vec![r.method.to_owned(), format!("{} {uri}", r.method)],
            (None, None) => vec![r.method.to_owned()],
        };
        if !family.iter().any(|s| names.iter().any(|n| n == name(s))) {
            problems.push(format!(
                "{label}: span named {:?}, not {:?}",
                name(span),
                names[0]
            ));
        }
        let wanted = match r.method {
            "tools/call" => Some(("gen_ai.tool.name", "name")),
            "prompts/get" => Some(("gen_ai.prompt.name", "name")),
            "resources/read" | "resources/subscribe" | "resources/unsubscribe" => {
                Some(("mcp.resource.uri", "uri"))
            }
            _ => None,
        };
        if let Some((key, param)) = wanted
            && let Some(value) = r.param(param)
        {
            let values: Vec<&Value> = family.iter().filter_map(|s| attr(s, key)).collect();
            if values.is_empty() || values.iter().any(|v| v.as_str() != Some(value)) {
                problems.push(format!(
                    "{label}: {key} {}, not {value:?}",
                    shown(values.into_iter().find(|v| v.as_str() != Some(value)))
                ));
            }
        }
        let each = |key: &'static str| family.iter().filter_map(move |s| attr(s, key));
        for v in each("mcp.protocol.version")
            .filter(|v| !r.versions.iter().any(|w| v.as_str() == Some(w)))
            .take(1)
        {
            problems.push(format!(
                "{label}: mcp.protocol.version {}, not {:?}",
                shown(Some(v)),
                r.versions.last().map_or("", String::as_str)
            ));
        }
        for v in each("mcp.session.id") {
            let ok = match r.session {
                Some(s) => v.as_str() == Some(s),
                None => v.as_str().is_some_and(|v| sessions.contains(v)),
            };
            if !ok {
                problems.push(format!(
                    "{label}: mcp.session.id is not the Mcp-Session-Id the wire shows{}",
                    if sessions.is_empty() { " (none)" } else { "" }
                ));
                break;
            }
        }
        for v in each("network.transport")
            .filter(|v| !v.as_str().is_some_and(|v| transports.contains(&v)))
            .take(1)
        {
            problems.push(format!(
                "{label}: network.transport {}, not {:?}",
                shown(Some(v)),
                transports.join(" or ")
            ));
        }
    }
    c.cite_on(
        "each request's span is named and attributed by the OpenTelemetry MCP conventions",
        "ADV-OTEL-2",
        !pairs.is_empty(),
        verdict(
            "span name {mcp.method.name} {target}, with gen_ai.tool.name / gen_ai.prompt.name / mcp.resource.uri, protocol version, session id and transport as on the wire",
            &problems,
        ),
    );
}

fn shown(v: Option<&Value>) -> String {
    v.map_or("absent".to_owned(), Value::to_string)
}

/// ADV-OTEL-3: a request's `_meta` traceparent is its span's.
fn context_is_the_spans(c: &mut Checker<'_>, pairs: &[(&Request<'_>, Vec<&Value>)]) {
    let mut problems = Vec::new();
    for (r, family) in pairs {
        let span = family[0];
        let Some(traceparent) = r.param("_meta/traceparent") else {
            problems.push(format!("{}: no traceparent in params._meta", r.label()));
            continue;
        };
        let fields: Vec<&str> = traceparent.split('-').collect();
        let (trace, parent) = (fields.get(1).copied(), fields.get(2).copied());
        let span_trace = span.get("trace_id").and_then(Value::as_str);
        let span_id = span.get("span_id").and_then(Value::as_str);
        let is_one = |s: &&Value| {
            s.get("trace_id").and_then(Value::as_str) == trace
                && s.get("span_id").and_then(Value::as_str) == parent
        };
        if !family.iter().any(is_one) {
            problems.push(format!(
                "{}: traceparent {traceparent:?} is not span {:?} ({}-{})",
                r.label(),
                name(span),
                span_trace.unwrap_or("?"),
                span_id.unwrap_or("?")
            ));
        }
    }
    c.cite_on(
        "the trace context a request carries in _meta is its span's",
        "ADV-OTEL-3",
        !pairs.is_empty(),
        verdict(
            "params._meta.traceparent naming the request span's trace id and span id",
            &problems,
        ),
    );
}

/// ADV-OTEL-4: a failed request's span says how it failed; a successful one does not.
fn errors_are_typed(c: &mut Checker<'_>, pairs: &[(&Request<'_>, Vec<&Value>)]) {
    let mut problems = Vec::new();
    let mut failures = 0;
    for (r, family) in pairs {
        let label = r.label();
        let error_type = attr_in(family, "error.type");
        let status_code = attr_in(family, "rpc.response.status_code");
        let error = r.answer.and_then(|a| a.get("error"));
        let tool_error = r.method == "tools/call"
            && r.answer
                .and_then(|a| a.pointer("/result/isError"))
                .and_then(Value::as_bool)
                == Some(true);
        if let Some(error) = error {
            failures += 1;
            let code = error.get("code").map(Value::to_string).unwrap_or_default();
            let codes: Vec<&Value> = family
                .iter()
                .filter_map(|s| attr(s, "rpc.response.status_code"))
                .collect();
            if !codes.iter().any(|v| v.as_str() == Some(code.as_str())) {
                problems.push(format!(
                    "{label}: answered error {code}, rpc.response.status_code {}",
                    shown(codes.first().copied())
                ));
            }
            if error_type.is_none() {
                problems.push(format!("{label}: answered error {code}, no error.type"));
            }
            let statuses: Vec<&str> = family
                .iter()
                .filter_map(|s| s.pointer("/status/code").and_then(Value::as_str))
                .collect();
            if !statuses.contains(&"error") {
                let status = statuses.first().copied();
                problems.push(format!(
                    "{label}: answered error {code}, span status {}",
                    status.unwrap_or("absent")
                ));
            }
        } else if tool_error {
            failures += 1;
            let types: Vec<&Value> = family
                .iter()
                .filter_map(|s| attr(s, "error.type"))
                .collect();
            if !types.iter().any(|t| t.as_str() == Some("tool_error")) {
                problems.push(format!(
                    "{label}: isError true, error.type {}, not \"tool_error\"",
                    shown(error_type)
                ));
            }
        } else if r.answer.is_none() {
            failures += 1;
            if error_type.is_none() {
                problems.push(format!("{label}: never answered, no error.type"));
            }
            // The attribute is the code of the response: none came.
            if let Some(code) = status_code {
                problems.push(format!(
                    "{label}: never answered, yet rpc.response.status_code {code} (no response carried a code)"
                ));
            }
        } else if !r.given_up && error_type.is_some() {
            problems.push(format!(
                "{label}: answered with success, error.type {}",
                shown(error_type)
            ));
        }
    }
    c.cite_on(
        "a failed request's span carries error.type and the error code",
        "ADV-OTEL-4",
        failures > 0,
        verdict(
            "error.type and rpc.response.status_code (the code as a string) with status ERROR on a JSON-RPC error; error.type tool_error on isError; none on success",
            &problems,
        ),
    );
}

#[cfg(test)]
mod tests;
