//! A traces case's collection (CLIENTS.md § Traces): what the trial's loopback OTLP receiver
//! got from the client, once every secret the trial knows of was looked for and replaced.
//! The receiver itself is a fake (`mcp_harness_fakes::otlp`); the span checks read this.

use mcp_harness_fakes::otlp::Collected;
use mcp_harness_scenarios::transcript::{Event, Record};
use serde_json::Value;

use super::trial::TrialRun;

/// The spans of a transcript (its `span` records), in the order received.
pub fn recorded(records: &[Record]) -> Vec<&Value> {
    records
        .iter()
        .filter_map(|r| match &r.event {
            Event::Span { span } => Some(span),
            _ => None,
        })
        .collect()
}

impl TrialRun {
    /// The trial's spans: its transcript's, else what its OTLP receiver kept (a transcript
    /// that could not be read). Empty for a trial that asked for no traces.
    pub fn spans(&self) -> Vec<&Value> {
        match self.records.as_deref().map(recorded) {
            Ok(spans) if !spans.is_empty() => spans,
            _ => self.traces.iter().flat_map(|t| &t.spans).collect(),
        }
    }
}

/// What a traces trial collected.
#[derive(Debug, Clone, Default)]
pub struct TracesRun {
    /// The spans, in the order received, normalised (the shape of a transcript `span`
    /// event) and with every secret replaced by a label.
    pub spans: Vec<Value>,
    /// The metrics' data points, normalised: `{"name", "unit", "kind", "attributes",
    /// "encoding"}` per point, with the metric's description, scope and resource
    /// (`mcp_harness_fakes::otlp::normalise`), secrets replaced.
    pub metrics: Vec<Value>,
    /// Export requests the receiver could not take, each saying why (an encoding it could
    /// not decode, a body past its cap): the request's path and the reason, never the body.
    pub rejected: Vec<String>,
    /// Where a secret was found before it was replaced: `"bearer token in attribute
    /// auth.header of span \"tools/call echo\""`, never the value (`CONTRACT-33`).
    pub leaks: Vec<String>,
}

/// A value the client's telemetry must never carry, with what it is (the label a leak and
/// its replacement name).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Secret {
    /// `bearer token`, `authorization secret` or `sensitive value`.
    pub kind: &'static str,
    /// The value.
    pub value: String,
}

/// The secrets of a traces trial: the bearer token handed to the client, everything the
/// authorization side made or received (codes, verifiers, access and refresh tokens, client
/// secrets: the fake does not say which), and the case's `traces.sensitive`. Empty values
/// are dropped; longer ones come first, so none is cut into pieces by one it contains.
pub fn secrets(token: Option<&str>, issued: &[String], sensitive: &[String]) -> Vec<Secret> {
    let token = token.map(|t| ("bearer token", t));
    let issued = issued.iter().map(|s| ("authorization secret", s.as_str()));
    let sensitive = sensitive.iter().map(|s| ("sensitive value", s.as_str()));
    let mut all: Vec<Secret> = Vec::new();
    for (kind, value) in token.into_iter().chain(issued).chain(sensitive) {
        if !value.is_empty() && !all.iter().any(|s| s.value == value) {
            all.push(Secret {
                kind,
                value: value.to_owned(),
            });
        }
    }
    all.sort_by_key(|s| std::cmp::Reverse(s.value.len()));
    all
}

impl TracesRun {
    /// What the receiver collected, with every secret replaced by `[redacted: <kind>]` and
    /// each place one was found named in `leaks`.
    pub fn scrubbed(collected: Collected, secrets: &[Secret]) -> TracesRun {
        let mut leaks = Vec::new();
        let mut spans = collected.spans;
        for span in &mut spans {
            scrub_item(span, "span", secrets, &mut leaks);
        }
        let mut metrics = collected.metrics;
        for point in &mut metrics {
            scrub_item(point, "metric", secrets, &mut leaks);
        }
        // A refusal's reason quotes no body, but may quote a header the client sent.
        let mut rejected = collected.rejected;
        for note in &mut rejected {
            for kind in scrub_str(note, secrets) {
                leaks.push(format!("{kind} in the head of a refused export"));
            }
        }
        TracesRun {
            spans,
            metrics,
            rejected,
            leaks,
        }
    }
}

/// Scrubs one span or metric point; its (scrubbed) name names it in a leak.
fn scrub_item(item: &mut Value, what: &str, secrets: &[Secret], leaks: &mut Vec<String>) {
    let mut found = Vec::new();
    scrub(item, &mut Vec::new(), secrets, &mut found);
    let name = item.get("name").and_then(Value::as_str).unwrap_or("");
    for (kind, path) in found {
        leaks.push(format!("{kind} in {} of {what} `{name}`", place(&path)));
    }
}

/// Replaces every secret in every string of `value` (object keys included), noting the kind
/// and the path (keys and indexes, each already scrubbed) of each place one was found.
fn scrub(
    value: &mut Value,
    path: &mut Vec<String>,
    secrets: &[Secret],
    found: &mut Vec<(&'static str, Vec<String>)>,
) {
    match value {
        Value::String(s) => {
            for kind in scrub_str(s, secrets) {
                found.push((kind, path.clone()));
            }
        }
        Value::Array(items) => {
            for (i, item) in items.iter_mut().enumerate() {
                path.push(i.to_string());
                scrub(item, path, secrets, found);
                path.pop();
            }
        }
        Value::Object(map) => {
            let old = std::mem::take(map);
            for (mut key, mut item) in old {
                for kind in scrub_str(&mut key, secrets) {
                    let mut at = path.clone();
                    at.push(key.clone());
                    at.push("(key)".into());
                    found.push((kind, at));
                }
                path.push(key.clone());
                scrub(&mut item, path, secrets, found);
                path.pop();
                map.insert(key, item);
            }
        }
        _ => {}
    }
}

/// Replaces each secret in `s`; returns the kinds found. Only whole values count: pieces
/// (as stdout redaction also looks for) would flag honest strings that end like a token's
/// fixed prefix (`mcp-harness-…`), and OTLP exporters do not cut attribute values by default.
fn scrub_str(s: &mut String, secrets: &[Secret]) -> Vec<&'static str> {
    let mut kinds = Vec::new();
    for secret in secrets {
        if s.contains(&secret.value) {
            *s = s.replace(&secret.value, &format!("[redacted: {}]", secret.kind));
            kinds.push(secret.kind);
        }
    }
    kinds
}

/// Where in a normalised span or metric point a path is, in words.
fn place(path: &[String]) -> String {
    let key = path.last().filter(|k| *k == "(key)").map(|_| "the key of ");
    let path = &path[..path.len() - usize::from(key.is_some())];
    let key = key.unwrap_or("");
    let p: Vec<&str> = path.iter().map(String::as_str).collect();
    match p.as_slice() {
        ["attributes", name, ..] => format!("{key}attribute `{name}`"),
        ["events", i, "attributes", name, ..] => format!("{key}attribute `{name}` of event {i}"),
        ["events", i, ..] => format!("the name of event {i}"),
        ["resource", name, ..] => format!("{key}resource attribute `{name}`"),
        ["links", i, "attributes", name, ..] => format!("{key}attribute `{name}` of link {i}"),
        ["links", i, ..] => format!("the trace state of link {i}"),
        ["scope_attributes", name, ..] => format!("{key}scope attribute `{name}`"),
        ["metadata", name, ..] => format!("{key}metadata `{name}`"),
        ["exemplars", i, "attributes", name, ..] => {
            format!("{key}attribute `{name}` of exemplar {i}")
        }
        ["resource_entities", ..] => "an entity reference of the resource".to_owned(),
        ["status", ..] => "the status message".to_owned(),
        ["name"] => "the name".to_owned(),
        ["scope"] => "the scope name".to_owned(),
        ["scope_version"] => "the scope version".to_owned(),
        ["scope_schema_url" | "resource_schema_url"] => "a schema URL".to_owned(),
        ["trace_state"] => "the trace state".to_owned(),
        ["description"] => "the description".to_owned(),
        ["unit"] => "the unit".to_owned(),
        _ => format!("{key}`{}`", p.join(".")),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn collected(spans: Vec<Value>) -> Collected {
        Collected {
            spans,
            ..Collected::default()
        }
    }

    #[test]
    fn every_string_is_scrubbed_and_each_place_named_by_kind() {
        let token = "mcp-harness-secret-0123456789abcdef";
        let span = json!({
            "name": format!("tools/call {token}"),
            "attributes": {"auth.header": format!("Bearer {token}"), "ok": "fine", "n": 3},
            "events": [{"name": "elicit", "attributes": {"answer": "hunter2-password"}}],
            "resource": {"x": [token]},
            "status": {"code": "error", "message": format!("failed: {token}")},
        });
        let secrets = secrets(Some(token), &[], &["hunter2-password".to_owned()]);
        let run = TracesRun::scrubbed(collected(vec![span]), &secrets);
        let text = serde_json::to_string(&run.spans).unwrap();
        assert!(!text.contains("0123456789abcdef"), "{text}");
        assert!(!text.contains("hunter2"), "{text}");
        assert_eq!(
            run.spans[0]["attributes"]["auth.header"],
            "Bearer [redacted: bearer token]"
        );
        assert_eq!(run.spans[0]["attributes"]["ok"], "fine");
        let name = "tools/call [redacted: bearer token]";
        assert_eq!(
            run.leaks,
            vec![
                format!("bearer token in the name of span `{name}`"),
                format!("bearer token in attribute `auth.header` of span `{name}`"),
                format!("sensitive value in attribute `answer` of event 0 of span `{name}`"),
                format!("bearer token in resource attribute `x` of span `{name}`"),
                format!("bearer token in the status message of span `{name}`"),
            ]
        );
        assert!(run.leaks.iter().all(|l| !l.contains("0123456789abcdef")));
    }

    #[test]
    fn a_secret_in_a_refusal_and_in_a_metric_is_replaced() {
        let token = "tok-abcdefghijkl";
        let collected = Collected {
            metrics: vec![json!({"name": "m", "attributes": {"user": token}})],
            rejected: vec![format!(
                "POST /v1/traces: unsupported content-type \"{token}\""
            )],
            ..Collected::default()
        };
        let run = TracesRun::scrubbed(collected, &secrets(Some(token), &[], &[]));
        assert_eq!(
            run.rejected,
            vec!["POST /v1/traces: unsupported content-type \"[redacted: bearer token]\""]
        );
        assert_eq!(
            run.metrics[0]["attributes"]["user"],
            "[redacted: bearer token]"
        );
        assert_eq!(
            run.leaks,
            vec![
                "bearer token in attribute `user` of metric `m`",
                "bearer token in the head of a refused export",
            ]
        );
    }

    #[test]
    fn a_secret_only_in_a_metric_description_or_a_link_is_found_and_replaced() {
        let token = "tok-abcdefghijkl";
        let collected = Collected {
            spans: vec![json!({"name": "s", "trace_state": format!("k={token}"),
                "links": [{"span_id": "01", "attributes": {"why": token}}]})],
            metrics: vec![json!({"name": "m", "unit": "s",
                "description": format!("time of {token}"), "scope_version": token})],
            ..Collected::default()
        };
        let run = TracesRun::scrubbed(collected, &secrets(Some(token), &[], &[]));
        let text = serde_json::to_string(&(&run.spans, &run.metrics)).unwrap();
        assert!(!text.contains(token), "{text}");
        assert_eq!(
            run.metrics[0]["description"],
            "time of [redacted: bearer token]"
        );
        assert_eq!(
            run.leaks,
            vec![
                "bearer token in the trace state of span `s`",
                "bearer token in attribute `why` of link 0 of span `s`",
                "bearer token in the description of metric `m`",
                "bearer token in the scope version of metric `m`",
            ]
        );
    }

    #[test]
    fn a_secret_in_a_key_is_replaced_and_a_clean_span_left_alone() {
        let token = "tok-abcdefghijkl";
        let spans = vec![
            json!({"name": "a", "attributes": {token: 1}}),
            json!({"name": "b", "attributes": {"k": "v"}}),
        ];
        let run = TracesRun::scrubbed(collected(spans.clone()), &secrets(Some(token), &[], &[]));
        assert_eq!(
            run.spans[0]["attributes"],
            json!({"[redacted: bearer token]": 1})
        );
        assert_eq!(run.spans[1], spans[1]);
        assert_eq!(
            run.leaks,
            vec!["bearer token in the key of attribute `[redacted: bearer token]` of span `a`"]
        );
    }

    #[test]
    fn secrets_are_labelled_deduplicated_and_longest_first() {
        let s = secrets(
            Some("token"),
            &["token".into(), "".into(), "refresh-token-long".into()],
            &["pw".into()],
        );
        let got: Vec<(&str, &str)> = s.iter().map(|s| (s.kind, s.value.as_str())).collect();
        assert_eq!(
            got,
            vec![
                ("authorization secret", "refresh-token-long"),
                ("bearer token", "token"),
                ("sensitive value", "pw"),
            ]
        );
    }
}
