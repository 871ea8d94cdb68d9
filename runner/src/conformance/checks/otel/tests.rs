//! The span checks over hand-built trials: a client whose spans follow the conventions passes
//! each of them, and each kind of broken span fails the check that judges it.

use std::collections::BTreeMap;
use std::path::PathBuf;

use serde_json::{Value, json};

use mcp_harness_scenarios::Case;
use mcp_harness_scenarios::model::traces::Traces;
use mcp_harness_scenarios::model::{Scenario, ServerScript, Transport};
use mcp_harness_scenarios::transcript::{Event, Record};

use super::super::{CheckResult, Checker};
use super::otel_rules;
use crate::conformance::traces::TracesRun;
use crate::conformance::trial::TrialRun;
use crate::offline::trial_run as trace_run;

const TRACE: &str = "4bf92f3577b34da6a3ce929d0e0e4736";

fn span_id(n: u64) -> String {
    format!("{:016x}", 0x1000 + n)
}

fn traceparent(n: u64) -> String {
    format!("00-{TRACE}-{}-01", span_id(n))
}

fn record(event: Event) -> Record {
    Record {
        pid: 7,
        at_ms: None,
        event,
    }
}

/// The session: initialize (0), a tool call (1), a tool call answered isError (2), a
/// listing answered with an error (3), a resource read (4); each request with its span's
/// traceparent.
fn wire() -> Vec<Record> {
    let request = |id: u64, method: &str, params: Value| {
        let mut params = params;
        params["_meta"] = json!({"traceparent": traceparent(id)});
        record(Event::Received {
            message: json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params}),
        })
    };
    let answer = |id: u64, body: Value| {
        let mut message = json!({"jsonrpc": "2.0", "id": id});
        message
            .as_object_mut()
            .unwrap()
            .extend(body.as_object().unwrap().clone());
        record(Event::Sent { message })
    };
    vec![
        request(0, "initialize", json!({"protocolVersion": "2025-11-25"})),
        answer(0, json!({"result": {"protocolVersion": "2025-11-25"}})),
        request(1, "tools/call", json!({"name": "echo", "arguments": {}})),
        answer(1, json!({"result": {"content": []}})),
        request(2, "tools/call", json!({"name": "fail"})),
        answer(2, json!({"result": {"content": [], "isError": true}})),
        request(3, "tools/list", json!({})),
        answer(3, json!({"error": {"code": -32601, "message": "no"}})),
        request(4, "resources/read", json!({"uri": "file:///a"})),
        answer(4, json!({"result": {"contents": []}})),
    ]
}

/// The spans a conforming client exports for [`wire`].
fn spans() -> Vec<Value> {
    let span = |id: u64, name: &str, method: &str, extra: Value| {
        let mut attributes = json!({
            "mcp.method.name": method, "jsonrpc.request.id": id.to_string(),
            "mcp.protocol.version": "2025-11-25", "network.transport": "pipe",
        });
        attributes
            .as_object_mut()
            .unwrap()
            .extend(extra.as_object().unwrap().clone());
        let status = match attributes.get("rpc.response.status_code") {
            Some(_) => json!({"code": "error", "message": "no"}),
            None => json!({"code": "unset"}),
        };
        json!({"trace_id": TRACE, "span_id": span_id(id), "name": name, "kind": "client",
            "start_ns": id, "end_ns": id + 1, "status": status, "attributes": attributes,
            "events": []})
    };
    vec![
        span(0, "initialize", "initialize", json!({})),
        span(
            1,
            "tools/call echo",
            "tools/call",
            json!({"gen_ai.tool.name": "echo"}),
        ),
        span(
            2,
            "tools/call fail",
            "tools/call",
            json!({"gen_ai.tool.name": "fail", "error.type": "tool_error"}),
        ),
        span(
            3,
            "tools/list",
            "tools/list",
            json!({"error.type": "-32601", "rpc.response.status_code": "-32601"}),
        ),
        span(
            4,
            "resources/read file:///a",
            "resources/read",
            json!({"mcp.resource.uri": "file:///a"}),
        ),
    ]
}

fn case() -> Case {
    let mut scenario = Scenario::serving(ServerScript::default());
    scenario.protocol_version = "2025-11-25".into();
    scenario.traces = Some(Traces::default());
    Case {
        id: "traces/unit".into(),
        path: PathBuf::from("traces/unit.json"),
        scenario,
        revision: None,
        variant: None,
    }
}

/// Judges `records` followed by `spans` as a stdio trial whose receiver noted `leaks`.
fn judge(records: Vec<Record>, spans: Vec<Value>, leaks: &[&str]) -> BTreeMap<String, CheckResult> {
    judge_on(Transport::Stdio, records, spans, leaks)
}

fn judge_on(
    transport: Transport,
    mut records: Vec<Record>,
    spans: Vec<Value>,
    leaks: &[&str],
) -> BTreeMap<String, CheckResult> {
    let traces = TracesRun {
        spans: spans.clone(),
        leaks: leaks.iter().map(|l| l.to_string()).collect(),
        ..Default::default()
    };
    records.extend(spans.into_iter().map(|span| record(Event::Span { span })));
    let run = TrialRun {
        traces: Some(traces),
        ..trace_run(records)
    };
    judge_run(transport, &run)
}

/// The span checks' results on `run`, by requirement id.
fn judge_run(transport: Transport, run: &TrialRun) -> BTreeMap<String, CheckResult> {
    let case = case();
    let mut c = Checker {
        case: &case,
        transport,
        results: Vec::new(),
        always_on: true,
    };
    otel_rules(&mut c, run);
    c.results
        .into_iter()
        .map(|r| (r.requirement_id.clone(), r))
        .collect()
}

/// The failure message of `id`, asserting it failed.
fn failure(results: &BTreeMap<String, CheckResult>, id: &str) -> String {
    let r = &results[id];
    assert!(!r.passed, "{id} passed: {results:#?}");
    assert!(r.observed);
    r.actual.clone()
}

fn passes(results: &BTreeMap<String, CheckResult>, id: &str) {
    let r = &results[id];
    assert!(r.passed, "{id} failed: {}", r.actual);
}

/// `spans()` with span `index` changed by `f`.
fn with(index: usize, f: impl FnOnce(&mut Value)) -> Vec<Value> {
    let mut spans = spans();
    f(&mut spans[index]);
    spans
}

#[test]
fn spans_that_follow_the_conventions_pass_every_check() {
    let results = judge(wire(), spans(), &[]);
    for id in [
        "ADV-OTEL-1",
        "ADV-OTEL-2",
        "ADV-OTEL-3",
        "ADV-OTEL-4",
        "CONTRACT-33",
    ] {
        passes(&results, id);
        assert!(results[id].observed, "{id} not observed");
    }
}

#[test]
fn a_client_that_exports_nothing_fails_the_span_count_and_is_not_judged_on_the_rest() {
    let results = judge(wire(), Vec::new(), &[]);
    let why = failure(&results, "ADV-OTEL-1");
    assert!(why.contains("exported no span for its 5 request"), "{why}");
    for id in ["ADV-OTEL-2", "ADV-OTEL-3", "ADV-OTEL-4", "CONTRACT-33"] {
        assert!(results[id].passed && !results[id].observed, "{id}");
    }
}

#[test]
fn a_span_with_the_wrong_id_leaves_its_request_without_one() {
    let spans = with(1, |s| s["attributes"]["jsonrpc.request.id"] = json!("101"));
    let why = failure(&judge(wire(), spans, &[]), "ADV-OTEL-1");
    assert_eq!(why, "no span for request 1 (tools/call)");
}

#[test]
fn a_span_naming_another_method_for_a_request_id_fails() {
    let spans = with(1, |s| {
        s["attributes"]["mcp.method.name"] = json!("tools/list")
    });
    let why = failure(&judge(wire(), spans, &[]), "ADV-OTEL-1");
    assert!(why.contains("no span for request 1 (tools/call)"), "{why}");
    assert!(
        why.contains("jsonrpc.request.id 1, the id of a tools/call request, but mcp.method.name \"tools/list\""),
        "{why}"
    );
}

#[test]
fn a_span_of_another_kind_or_a_numeric_id_fails() {
    let spans = with(1, |s| {
        s["kind"] = json!("internal");
        s["attributes"]["jsonrpc.request.id"] = json!(1);
    });
    let why = failure(&judge(wire(), spans, &[]), "ADV-OTEL-1");
    assert!(
        why.contains("request 1 (tools/call) is kind internal"),
        "{why}"
    );
    assert!(why.contains("not a string"), "{why}");
}

#[test]
fn rejected_exports_are_named() {
    let mut records = wire();
    records.truncate(2);
    let traces = TracesRun {
        rejected: vec!["/v1/traces: not protobuf".into()],
        ..Default::default()
    };
    let run = TrialRun {
        traces: Some(traces),
        ..trace_run(records)
    };
    let case = case();
    let mut c = Checker {
        case: &case,
        transport: Transport::Stdio,
        results: Vec::new(),
        always_on: true,
    };
    otel_rules(&mut c, &run);
    let why = &c.results[0].actual;
    assert!(
        why.contains("exported no span") && why.contains("not protobuf"),
        "{why}"
    );
}

#[test]
fn a_misnamed_span_or_a_wrong_target_attribute_fails_the_conventions() {
    let results = judge(wire(), with(1, |s| s["name"] = json!("call_tool")), &[]);
    let why = failure(&results, "ADV-OTEL-2");
    assert!(
        why.contains("span named \"call_tool\", not \"tools/call echo\""),
        "{why}"
    );
    passes(&results, "ADV-OTEL-1");
    let results = judge(
        wire(),
        with(1, |s| s["attributes"]["gen_ai.tool.name"] = json!("other")),
        &[],
    );
    let why = failure(&results, "ADV-OTEL-2");
    assert_eq!(
        why,
        "request 1 (tools/call): gen_ai.tool.name \"other\", not \"echo\""
    );
    let spans = with(4, |s| {
        s["name"] = json!("resources/read");
        s["attributes"]
            .as_object_mut()
            .unwrap()
            .remove("mcp.resource.uri");
    });
    let why = failure(&judge(wire(), spans, &[]), "ADV-OTEL-2");
    assert!(why.contains("mcp.resource.uri absent"), "{why}");
}

#[test]
fn version_session_and_transport_are_judged_when_present() {
    let broken = with(1, |s| {
        s["attributes"]["mcp.protocol.version"] = json!("2025-06-18");
        s["attributes"]["network.transport"] = json!("tcp");
        s["attributes"]["mcp.session.id"] = json!("abc");
    });
    let why = failure(&judge(wire(), broken, &[]), "ADV-OTEL-2");
    // The version an initialize offers is its span's too (the fake may settle on another).
    let mut records = wire();
    records[0] = record(Event::Received {
        message: json!({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {
            "protocolVersion": "2026-01-01", "_meta": {"traceparent": traceparent(0)}}}),
    });
    let offered = with(0, |s| {
        s["attributes"]["mcp.protocol.version"] = json!("2026-01-01")
    });
    passes(&judge(records, offered, &[]), "ADV-OTEL-2");
    assert!(why.contains("mcp.protocol.version \"2025-06-18\""), "{why}");
    assert!(
        why.contains("network.transport \"tcp\", not \"pipe\""),
        "{why}"
    );
    assert!(why.contains("mcp.session.id"), "{why}");
    // Over HTTPS: tcp, and the session id of the POST that carried the request.
    let post = |session: Option<&str>| {
        let mut headers = BTreeMap::new();
        headers.extend(session.map(|s| ("mcp-session-id".to_owned(), s.to_owned())));
        record(Event::HttpRequest {
            method: "POST".into(),
            path: "/mcp".into(),
            headers,
            status: 200,
            origin: None,
            endpoint: None,
            params: None,
        })
    };
    let mut records = Vec::new();
    for (i, r) in wire().into_iter().enumerate() {
        if i % 2 == 0 {
            records.push(post((i > 0).then_some("s-1")));
        }
        records.push(r);
    }
    let on_tcp = |session: &str| {
        spans()
            .into_iter()
            .map(|mut s| {
                s["attributes"]["network.transport"] = json!("tcp");
                s["attributes"]["mcp.session.id"] = json!(session);
                s
            })
            .collect::<Vec<_>>()
    };
    passes(
        &judge_on(Transport::Https, records.clone(), on_tcp("s-1"), &[]),
        "ADV-OTEL-2",
    );
    let results = judge_on(Transport::Https, records, on_tcp("s-2"), &[]);
    let why = failure(&results, "ADV-OTEL-2");
    assert!(
        why.contains("request 0 (initialize): mcp.session.id"),
        "{why}"
    );
}

#[test]
fn a_traceparent_that_is_not_the_spans_or_none_fails() {
    let mut records = wire();
    records[2] = record(Event::Received {
        message: json!({"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {
            "name": "echo", "_meta": {"traceparent": format!("00-{}-{}-01", "a".repeat(32), span_id(1))}}}),
    });
    let why = failure(&judge(records, spans(), &[]), "ADV-OTEL-3");
    assert!(
        why.starts_with("request 1 (tools/call): traceparent \"00-aaaa"),
        "{why}"
    );
    let mut records = wire();
    records[2] = record(Event::Received {
        message: json!({"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {"name": "echo"}}),
    });
    let why = failure(&judge(records, spans(), &[]), "ADV-OTEL-3");
    assert_eq!(
        why,
        "request 1 (tools/call): no traceparent in params._meta"
    );
}

#[test]
fn errors_without_their_type_or_code_fail() {
    let spans = with(3, |s| {
        s["attributes"]
            .as_object_mut()
            .unwrap()
            .remove("error.type");
        s["attributes"]["rpc.response.status_code"] = json!(-32601);
        s["status"] = json!({"code": "unset"});
    });
    let why = failure(&judge(wire(), spans, &[]), "ADV-OTEL-4");
    assert!(why.contains("rpc.response.status_code -32601"), "{why}");
    assert!(why.contains("no error.type"), "{why}");
    assert!(why.contains("span status unset"), "{why}");
    let spans = with(2, |s| {
        s["attributes"]["error.type"] = json!("-32603");
    });
    let why = failure(&judge(wire(), spans, &[]), "ADV-OTEL-4");
    assert!(why.contains("isError true, error.type \"-32603\""), "{why}");
    let spans = with(1, |s| s["attributes"]["error.type"] = json!("timeout"));
    let why = failure(&judge(wire(), spans, &[]), "ADV-OTEL-4");
    assert!(
        why.contains("request 1 (tools/call): answered with success"),
        "{why}"
    );
}

#[test]
fn an_unanswered_request_needs_an_error_type_and_no_failure_means_not_observed() {
    let mut records = wire();
    records.truncate(3);
    let mut two = spans();
    two.truncate(2);
    let why = failure(&judge(records.clone(), two.clone(), &[]), "ADV-OTEL-4");
    assert_eq!(why, "request 1 (tools/call): never answered, no error.type");
    two[1]["attributes"]["error.type"] = json!("timeout");
    passes(&judge(records, two, &[]), "ADV-OTEL-4");
    let mut records = wire();
    records.truncate(4);
    let mut two = spans();
    two.truncate(2);
    let results = judge(records, two, &[]);
    assert!(results["ADV-OTEL-4"].passed && !results["ADV-OTEL-4"].observed);
}

#[test]
fn a_leak_fails_the_contract_by_its_label() {
    let results = judge(
        wire(),
        spans(),
        &["bearer token in attribute `auth` of span \"tools/call echo\""],
    );
    let why = failure(&results, "CONTRACT-33");
    assert_eq!(
        why,
        "bearer token in attribute `auth` of span \"tools/call echo\""
    );
    assert_eq!(
        results["CONTRACT-33"].level,
        mcp_harness_scenarios::model::Level::Must
    );
    assert_eq!(
        results["ADV-OTEL-1"].level,
        mcp_harness_scenarios::model::Level::Advisory
    );
}

#[test]
fn a_recording_with_spans_is_judged_offline_on_them() {
    let mut records = wire();
    records.extend(spans().into_iter().map(|span| record(Event::Span { span })));
    let verdict = |records: &[Record], id: &str| {
        crate::offline::grade(records, None)
            .checks
            .iter()
            .find(|g| g.check.requirement_id == id)
            .map(|g| g.verdict)
    };
    use crate::offline::Verdict;
    assert_eq!(verdict(&records, "ADV-OTEL-3"), Some(Verdict::Pass));
    // A secret is found only live (the receiver's leaks): offline, CONTRACT-33 is not made.
    assert_eq!(verdict(&records, "CONTRACT-33"), None);
    let last = records.len() - 1;
    records[last] = record(Event::Span {
        span: with(4, |s| s["trace_id"] = json!("b".repeat(32))).remove(4),
    });
    assert_eq!(verdict(&records, "ADV-OTEL-3"), Some(Verdict::Fail));
    // Without spans the recording is not judged on them.
    assert_eq!(verdict(&wire(), "ADV-OTEL-1"), None);
}

/// `spans()` where request 2's span (an isError call) is split over two layers: an outer
/// CLIENT span of the same method, without the id, holding the name and attributes, around
/// an inner one with the id and a bare name (an SDK's span inside a library's).
fn two_layers(outer: impl FnOnce(&mut Value)) -> Vec<Value> {
    let mut spans = spans();
    let mut wrapper = spans[2].clone();
    wrapper["span_id"] = json!(span_id(20));
    wrapper["attributes"]
        .as_object_mut()
        .unwrap()
        .remove("jsonrpc.request.id");
    outer(&mut wrapper);
    let inner = &mut spans[2];
    inner["parent_span_id"] = json!(span_id(20));
    inner["name"] = json!("MCP send tools/call");
    let attributes = inner["attributes"].as_object_mut().unwrap();
    attributes.remove("gen_ai.tool.name");
    attributes.remove("error.type");
    spans.push(wrapper);
    spans
}

#[test]
fn a_request_traced_by_two_nested_layers_is_judged_on_what_either_holds() {
    let results = judge(wire(), two_layers(|_| {}), &[]);
    for id in ["ADV-OTEL-1", "ADV-OTEL-2", "ADV-OTEL-3", "ADV-OTEL-4"] {
        passes(&results, id);
    }
    // What either layer holds wrong still fails.
    let spans = two_layers(|outer| outer["attributes"]["gen_ai.tool.name"] = json!("other"));
    let why = failure(&judge(wire(), spans, &[]), "ADV-OTEL-2");
    assert!(
        why.contains("gen_ai.tool.name \"other\", not \"fail\""),
        "{why}"
    );
    // The wire context may name either layer; a span outside the family it may not.
    let mut wire_outer = wire();
    wire_outer[4] = record(Event::Received {
        message: json!({"jsonrpc": "2.0", "id": 2, "method": "tools/call",
            "params": {"name": "fail", "_meta": {"traceparent": traceparent(20)}}}),
    });
    passes(&judge(wire_outer, two_layers(|_| {}), &[]), "ADV-OTEL-3");
}

#[test]
fn a_code_no_response_carried_fails() {
    // Request 4 is never answered, and its span names a code all the same.
    let mut records = wire();
    records.pop();
    let spans = with(4, |s| {
        s["attributes"]["error.type"] = json!("timeout");
        s["attributes"]["rpc.response.status_code"] = json!("-32001");
    });
    let why = failure(&judge(records, spans, &[]), "ADV-OTEL-4");
    assert!(
        why.contains("never answered, yet rpc.response.status_code \"-32001\""),
        "{why}"
    );
}

#[test]
fn a_refused_export_fails_even_when_every_request_has_its_span() {
    passes(&judge(wire(), spans(), &[]), "ADV-OTEL-1");
    // The same trial, with one export the receiver could not decode.
    let mut records = wire();
    records.extend(spans().into_iter().map(|span| record(Event::Span { span })));
    let run = TrialRun {
        traces: Some(TracesRun {
            spans: spans(),
            rejected: vec!["/v1/traces: the protobuf body does not decode".into()],
            ..Default::default()
        }),
        ..trace_run(records)
    };
    let why = failure(&judge_run(Transport::Stdio, &run), "ADV-OTEL-1");
    assert!(
        why.contains("refused 1 export(s): /v1/traces: the protobuf body does not decode"),
        "{why}"
    );
}
