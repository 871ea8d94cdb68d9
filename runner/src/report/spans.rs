//! A traces trial's spans in the report, beside its wire messages: under each request the
//! client sent, the span(s) whose `jsonrpc.request.id` and method are the request's (name,
//! duration, status, the attributes that tell it apart, its events); then every span, also
//! those no request matches, with all its attributes. Each span shows short ids (trace, span,
//! parent), and a span without `jsonrpc.request.id` that is the parent or a child of a
//! request's span is shown with it, so a library's two layers per request can be seen
//! nested. Secrets were replaced by labels before a span was stored, so what is shown here
//! is safe to show.

use std::collections::HashMap;
use std::fmt::Write as _;

use serde_json::Value;

use super::TrialResult;
use super::detail::Texts;
use super::page::esc;

/// Attributes shown under a request (the rest are in the list of every span).
const KEY_ATTRIBUTES: &[&str] = &[
    "gen_ai.tool.name",
    "gen_ai.prompt.name",
    "mcp.resource.uri",
    "mcp.protocol.version",
    "mcp.session.id",
    "network.transport",
    "error.type",
    "rpc.response.status_code",
];

/// Writes the two collapsed blocks of a trial with spans (nothing for one without).
pub fn trial_spans(out: &mut String, texts: &mut Texts, trial: &TrialResult) {
    if trial.spans.is_empty() {
        return;
    }
    let n = trial.spans.len();
    texts.collapsed_html(
        out,
        &format!("messages with their spans ({n} spans)"),
        wire_with_spans(&trial.transcript, &trial.spans),
    );
    texts.collapsed_html(out, &format!("every span ({n})"), every_span(&trial.spans));
}

fn text(v: Option<&Value>) -> &str {
    v.and_then(Value::as_str).unwrap_or("")
}

fn id_text(v: &Value) -> Option<String> {
    match v {
        Value::String(s) => Some(s.clone()),
        Value::Number(n) => Some(n.to_string()),
        _ => None,
    }
}

/// The span's duration in ms, one decimal.
fn duration(span: &Value) -> String {
    let at = |k: &str| span.get(k).and_then(Value::as_u64);
    match (at("start_ns"), at("end_ns")) {
        (Some(start), Some(end)) if end >= start => {
            format!("{:.1} ms", (end - start) as f64 / 1e6)
        }
        _ => "? ms".into(),
    }
}

fn status(span: &Value) -> String {
    let code = text(span.pointer("/status/code"));
    let class = match code {
        "error" => "fail",
        "ok" => "pass",
        _ => "unimplemented",
    };
    let message = text(span.pointer("/status/message"));
    let title = match message.is_empty() {
        true => String::new(),
        false => format!(" title=\"{}\"", esc(message)),
    };
    format!(
        "<span class=\"badge {class}\"{title}>{}</span>",
        esc(if code.is_empty() { "unset" } else { code })
    )
}

/// The first 8 hex digits of an id, the whole one in a tooltip.
fn short(id: &str) -> String {
    format!(
        "<span title=\"{}\">{}</span>",
        esc(id),
        esc(&id.chars().take(8).collect::<String>())
    )
}

/// `trace 4bf92f35 · span 00f067aa ← 1a2b3c4d` (or `← root`): where a span sits.
fn ids(span: &Value) -> String {
    let parent = match text(span.get("parent_span_id")) {
        "" => "root".to_owned(),
        id => short(id),
    };
    format!(
        "<div class=\"ids\">trace {} · span {} ← {parent}</div>",
        short(text(span.get("trace_id"))),
        short(text(span.get("span_id"))),
    )
}

fn value(v: &Value) -> String {
    match v {
        Value::String(s) => s.clone(),
        other => other.to_string(),
    }
}

fn events(span: &Value, with_attributes: bool) -> String {
    let list = span.get("events").and_then(Value::as_array);
    let shown: Vec<String> = list
        .into_iter()
        .flatten()
        .map(|e| {
            let name = esc(text(e.get("name")));
            let attrs = e.get("attributes").and_then(Value::as_object);
            match attrs.filter(|a| with_attributes && !a.is_empty()) {
                Some(a) => {
                    let kv: Vec<String> =
                        a.iter().map(|(k, v)| format!("{k}={}", value(v))).collect();
                    format!(
                        "<b>{name}</b> <span class=\"note\">{}</span>",
                        esc(&kv.join(", "))
                    )
                }
                None => format!("<b>{name}</b>"),
            }
        })
        .collect();
    shown.join("; ")
}

/// One span as a line under its request: `label` says what it is to the request (`span`,
/// `outer span`, `inner span`), `class` how it is drawn.
fn span_line(span: &Value, label: &str, class: &str) -> String {
    let attrs = span.get("attributes").and_then(Value::as_object);
    let key: Vec<String> = KEY_ATTRIBUTES
        .iter()
        .filter_map(|k| attrs?.get(*k).map(|v| format!("{k}={}", value(v))))
        .chain(
            attrs
                .into_iter()
                .flatten()
                .filter(|(k, _)| k.starts_with("mcp_harness."))
                .map(|(k, v)| format!("{k}={}", value(v))),
        )
        .collect();
    let events = events(span, true);
    format!(
        "<div class=\"span{class}\">↳ {label} <b>{}</b> · {} · {} · {}{}{}{}</div>",
        esc(text(span.get("name"))),
        esc(text(span.get("kind"))),
        duration(span),
        status(span),
        match key.is_empty() {
            true => String::new(),
            false => format!(" <span class=\"attrs\">{}</span>", esc(&key.join("  "))),
        },
        ids(span),
        match events.is_empty() {
            true => String::new(),
            false => format!("<div class=\"events\">events: {events}</div>"),
        }
    )
}

/// The spans by id, to find a span's parents and children.
struct Tree<'a> {
    by_id: HashMap<&'a str, &'a Value>,
    /// How many spans with a `jsonrpc.request.id` each span is above.
    requests_under: HashMap<&'a str, usize>,
    spans: &'a [Value],
}

fn has_id(span: &Value) -> bool {
    span.pointer("/attributes/jsonrpc.request.id").is_some()
}

impl<'a> Tree<'a> {
    fn new(spans: &'a [Value]) -> Tree<'a> {
        let by_id = spans
            .iter()
            .filter(|s| !text(s.get("span_id")).is_empty())
            .map(|s| (text(s.get("span_id")), s))
            .collect();
        let mut tree = Tree {
            by_id,
            requests_under: HashMap::new(),
            spans,
        };
        for span in spans.iter().filter(|s| has_id(s)) {
            for parent in tree.above(span) {
                *tree
                    .requests_under
                    .entry(text(parent.get("span_id")))
                    .or_default() += 1;
            }
        }
        tree
    }

    /// The spans above one, nearest first; bounded, as ids a client made up may loop.
    fn above(&self, span: &Value) -> Vec<&'a Value> {
        let mut chain: Vec<&'a Value> = Vec::new();
        let mut at = self.by_id.get(text(span.get("parent_span_id")));
        while let Some(&p) = at.filter(|p| chain.len() < 8 && !chain.contains(p)) {
            chain.push(p);
            at = self.by_id.get(text(p.get("parent_span_id")));
        }
        chain
    }
}

/// A request's span with the spans of no request around it: its parents while they carry
/// no `jsonrpc.request.id` and are around this request alone (a session-wide span is not
/// one request's layer), outermost first, then its children without one.
fn span_with_layers(span: &Value, tree: &Tree<'_>) -> String {
    let outer: Vec<&Value> = tree
        .above(span)
        .into_iter()
        .take_while(|p| {
            let under = tree.requests_under.get(text(p.get("span_id")));
            !has_id(p) && under.copied().unwrap_or(0) <= 1
        })
        .collect();
    let mut out = String::new();
    for (depth, parent) in outer.iter().rev().enumerate() {
        let class = format!(" layer d{}", depth.min(3));
        out.push_str(&span_line(parent, "outer span", &class));
    }
    let depth = outer.len();
    let class = match depth {
        0 => String::new(),
        d => format!(" d{}", d.min(3)),
    };
    out.push_str(&span_line(span, "span", &class));
    let me = text(span.get("span_id"));
    let inner = tree
        .spans
        .iter()
        .filter(|s| !me.is_empty() && text(s.get("parent_span_id")) == me && !has_id(s));
    for child in inner {
        let class = format!(" layer d{}", (depth + 1).min(3));
        out.push_str(&span_line(child, "inner span", &class));
    }
    out
}

/// The transcript's message lines, each request the client sent followed by its span(s).
/// Requests sent again with one id and method share its spans in order of their start.
fn wire_with_spans(transcript: &str, spans: &[Value]) -> String {
    let mut by_request: HashMap<(String, String), Vec<&Value>> = HashMap::new();
    for span in spans {
        let id = span
            .pointer("/attributes/jsonrpc.request.id")
            .and_then(id_text);
        let method = text(span.pointer("/attributes/mcp.method.name")).to_owned();
        if let Some(id) = id {
            by_request.entry((id, method)).or_default().push(span);
        }
    }
    for list in by_request.values_mut() {
        list.sort_by_key(|s| s.get("start_ns").and_then(Value::as_u64));
    }
    let requests = |key: &(String, String)| {
        transcript
            .lines()
            .filter(|l| request_of(l).as_ref() == Some(key))
            .count()
    };
    let mut seen: HashMap<(String, String), usize> = HashMap::new();
    let tree = Tree::new(spans);
    let mut out = String::from("<div class=\"wire\">");
    // The messages alone: the outcome lines are in the transcript block above.
    let messages = transcript
        .lines()
        .skip_while(|l| *l != "transcript:")
        .skip(1);
    for line in messages {
        // The snapshot's own list of spans is shown below, whole.
        if line == "spans:" || line == "spans: none" {
            break;
        }
        let _ = write!(out, "<div>{}</div>", esc(line));
        let Some(key) = request_of(line) else {
            continue;
        };
        let Some(list) = by_request.get(&key) else {
            let _ = write!(
                out,
                "<div class=\"span missing\">↳ no span with jsonrpc.request.id {} and mcp.method.name {}</div>",
                esc(&key.0),
                esc(&key.1)
            );
            continue;
        };
        let k = seen.entry(key.clone()).or_default();
        let mine: Vec<&Value> = match list.len() == requests(&key) {
            true => list.get(*k).into_iter().copied().collect(),
            false => list.clone(),
        };
        *k += 1;
        for span in mine {
            out.push_str(&span_with_layers(span, &tree));
        }
    }
    out.push_str("</div>");
    out
}

/// `(id, method)` of a transcript line showing a request the client sent.
fn request_of(line: &str) -> Option<(String, String)> {
    let (_, json) = line.split_once(" → ")?;
    let message: Value = serde_json::from_str(json).ok()?;
    let method = message.get("method")?.as_str()?.to_owned();
    Some((id_text(message.get("id")?)?, method))
}

/// Every span in order of its start, with all its attributes, its name indented by how
/// many of the spans are above it.
fn every_span(spans: &[Value]) -> String {
    let tree = Tree::new(spans);
    let mut sorted: Vec<&Value> = spans.iter().collect();
    sorted.sort_by_key(|s| s.get("start_ns").and_then(Value::as_u64));
    let mut out = String::from(
        "<table class=\"spans\"><thead><tr><th>span</th><th>kind</th><th>duration</th><th>status</th><th>attributes</th><th>events</th></tr></thead><tbody>",
    );
    for span in sorted {
        let attrs: Vec<String> = span
            .get("attributes")
            .and_then(Value::as_object)
            .into_iter()
            .flatten()
            .map(|(k, v)| format!("{k}={}", value(v)))
            .collect();
        let depth = tree.above(span).len().min(3);
        let attrs = match attrs.is_empty() {
            true => String::new(),
            false => format!("<pre>{}</pre>", esc(&attrs.join("\n"))),
        };
        let _ = write!(
            out,
            "<tr><td class=\"d{depth}\"><code>{}</code>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{attrs}</td><td>{}</td></tr>",
            esc(text(span.get("name"))),
            ids(span),
            esc(text(span.get("kind"))),
            duration(span),
            status(span),
            events(span, true)
        );
    }
    out.push_str("</tbody></table>");
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn each_request_is_followed_by_its_span_and_a_request_without_one_says_so() {
        let transcript = "transcript:\n  server#1 → {\"id\":1,\"jsonrpc\":\"2.0\",\"method\":\"tools/call\",\"params\":{\"name\":\"echo\"}}\n  server#1 ← {\"id\":1,\"jsonrpc\":\"2.0\",\"result\":{}}\n  server#1 → {\"id\":2,\"jsonrpc\":\"2.0\",\"method\":\"ping\"}\nspans:\n  \"x\"";
        let span = json!({"name": "tools/call echo", "kind": "client", "start_ns": 1_000_000,
            "end_ns": 3_500_000, "status": {"code": "error", "message": "boom"},
            "attributes": {"jsonrpc.request.id": "1", "mcp.method.name": "tools/call",
                "gen_ai.tool.name": "echo", "error.type": "tool_error", "mcp_harness.era": "legacy"},
            "events": [{"name": "retry", "attributes": {"attempt": 2}}]});
        let html = wire_with_spans(transcript, &[span]);
        let call = html.find("tools/call&quot;").expect("the request line");
        let shown = html
            .find("↳ span <b>tools/call echo</b>")
            .expect("its span");
        let answer = html.find("← ").expect("the answer line");
        assert!(call < shown && shown < answer, "{html}");
        assert!(html.contains("2.5 ms"), "{html}");
        assert!(
            html.contains("gen_ai.tool.name=echo  error.type=tool_error  mcp_harness.era=legacy"),
            "{html}"
        );
        assert!(html.contains("title=\"boom\">error</span>"), "{html}");
        assert!(
            html.contains("<b>retry</b> <span class=\"note\">attempt=2</span>"),
            "{html}"
        );
        assert!(
            html.contains("no span with jsonrpc.request.id 2 and mcp.method.name ping"),
            "{html}"
        );
        assert!(!html.contains("spans:"), "{html}");
    }
}
