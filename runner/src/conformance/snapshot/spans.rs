//! A traces trial's spans in its snapshot: one line per span, in an order the export's
//! timing does not decide, without the values that differ from run to run.

use std::fmt::Write as _;

use serde_json::Value;

use super::normalize;
use crate::conformance::trial::TrialRun;

/// Attribute keys whose values differ from run to run (ports, session ids, times): a
/// snapshot shows that they are there, not what they held.
fn volatile(key: &str) -> bool {
    key.ends_with("session.id")
        || key.ends_with(".port")
        || key.ends_with("trace_id")
        || key.ends_with("span_id")
        || key.contains("duration")
        || key.ends_with("_ms")
        || key.ends_with(".time")
}

/// A traces trial's spans, one line each, in an order the export's timing does not decide
/// (by `jsonrpc.request.id`, numbers by value, then by name): name, kind, status code, the
/// attributes but for their volatile values, and the events' names. Nothing for other trials.
pub(super) fn render(run: &TrialRun, out: &mut String) {
    if run.traces.is_none() && run.spans().is_empty() {
        return;
    }
    let mut spans = run.spans();
    spans.sort_by_cached_key(|s| order(s));
    let _ = writeln!(out, "spans:{}", if spans.is_empty() { " none" } else { "" });
    for span in spans {
        let mut attributes = span.get("attributes").cloned().unwrap_or(Value::Null);
        if let Some(map) = attributes.as_object_mut() {
            for (key, value) in map.iter_mut() {
                if volatile(key) {
                    *value = Value::from("[varies]");
                } else if key.ends_with(".version") && !key.contains("protocol") {
                    // A library's own version changes with its releases, as in `clientInfo`.
                    *value = Value::from("[version]");
                }
            }
        }
        normalize(&mut attributes);
        let events: Vec<String> = span
            .get("events")
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
            .map(|e| text(e.get("name")))
            .collect();
        let _ = writeln!(
            out,
            "  {:?} {} {} {attributes}{}",
            text(span.get("name")),
            text(span.get("kind")),
            text(span.pointer("/status/code")),
            match events.is_empty() {
                true => String::new(),
                false => format!(" events: {}", events.join(", ")),
            }
        );
    }
}

fn text(v: Option<&Value>) -> String {
    v.and_then(Value::as_str).unwrap_or("").to_owned()
}

/// Spans without a request id last; ids that are numbers by value, before other ids.
type Order = (bool, bool, Option<i64>, Option<String>, String);

fn order(span: &Value) -> Order {
    let id = span.pointer("/attributes/jsonrpc.request.id");
    let id = id.map(|v| v.as_str().map_or_else(|| v.to_string(), str::to_owned));
    let number = id.as_deref().and_then(|i| i.parse::<i64>().ok());
    (
        id.is_none(),
        number.is_none(),
        number,
        id,
        text(span.get("name")),
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use mcp_harness_scenarios::transcript::{Event, Record};
    use serde_json::json;

    fn span(name: &str, id: Option<&str>, start: u64) -> Record {
        let mut attributes = json!({"mcp.method.name": name, "mcp.session.id": format!("s{start}"),
            "mcp.protocol.version": "2025-11-25", "mcp_harness.client.version": format!("0.{start}"),
            "server.port": 40000 + start, "network.transport": "tcp"});
        if let Some(id) = id {
            attributes["jsonrpc.request.id"] = json!(id);
        }
        Record {
            pid: 0,
            at_ms: None,
            event: Event::Span {
                span: json!({"name": name, "kind": "client", "status": {"code": "unset"},
                    "trace_id": format!("{start:032x}"), "span_id": format!("{start:016x}"),
                    "start_ns": start, "end_ns": start + 5, "attributes": attributes,
                    "events": [{"name": "retry", "attributes": {"n": start}}]}),
            },
        }
    }

    fn rendered(records: Vec<Record>) -> String {
        let run = crate::offline::trial_run(records);
        let mut out = String::new();
        render(&run, &mut out);
        out
    }

    #[test]
    fn spans_are_shown_in_request_id_order_without_what_varies() {
        let one = rendered(vec![
            span("tools/list", Some("10"), 3),
            span("connect", None, 1),
            span("ping", Some("2"), 2),
        ]);
        let other = rendered(vec![
            span("ping", Some("2"), 7),
            span("connect", None, 8),
            span("tools/list", Some("10"), 9),
        ]);
        assert_eq!(one, other);
        let lines: Vec<&str> = one.lines().collect();
        assert_eq!(lines[0], "spans:");
        assert!(lines[1].starts_with("  \"ping\" client unset {"), "{one}");
        assert!(lines[2].starts_with("  \"tools/list\""), "{one}");
        assert!(lines[3].starts_with("  \"connect\""), "{one}");
        assert!(
            lines[1].contains("\"mcp.session.id\":\"[varies]\""),
            "{one}"
        );
        assert!(lines[1].contains("\"server.port\":\"[varies]\""), "{one}");
        assert!(lines[1].contains("\"network.transport\":\"tcp\""), "{one}");
        assert!(
            lines[1].contains("\"mcp.protocol.version\":\"2025-11-25\""),
            "{one}"
        );
        assert!(
            lines[1].contains("\"mcp_harness.client.version\":\"[version]\""),
            "{one}"
        );
        assert!(lines[1].ends_with(" events: retry"), "{one}");
        assert!(!one.contains("start_ns") && !one.contains(&format!("{:016x}", 2)));
    }

    #[test]
    fn a_trial_without_traces_shows_no_section() {
        assert_eq!(rendered(Vec::new()), "");
    }
}
