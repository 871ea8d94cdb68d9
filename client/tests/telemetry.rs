//! The driver's production traces: with the standard OTLP variables set it exports one CLIENT
//! span per request it sent, by the OpenTelemetry conventions for MCP, and the `_meta`
//! traceparent of each request is its span's; without them nothing is exported and the wire
//! is as before. Each telemetry defect breaks what it names.
//!
//! The collector is a loopback OTLP/HTTP server in this test (hyper), decoding protobuf and
//! JSON with the official protocol definitions.

mod common;

use std::collections::BTreeMap;
use std::net::SocketAddr;
use std::process::Command;
use std::sync::{Arc, Mutex};

use common::SERVER;
use http_body_util::{BodyExt, Full};
use hyper::body::{Bytes, Incoming};
use hyper::{Request, Response};
use hyper_util::rt::TokioIo;
use opentelemetry_proto::tonic::collector::metrics::v1::ExportMetricsServiceRequest;
use opentelemetry_proto::tonic::collector::trace::v1::ExportTraceServiceRequest;
use opentelemetry_proto::tonic::common::v1::{AnyValue, any_value};
use prost::Message;
use serde_json::{Value, json};

/// One export the collector received: its path, content type and body.
type Export = (String, String, Vec<u8>);

/// A loopback OTLP/HTTP collector that keeps every export and answers 200.
struct Collector {
    addr: SocketAddr,
    got: Arc<Mutex<Vec<Export>>>,
    _runtime: tokio::runtime::Runtime,
}

impl Collector {
    fn start() -> Collector {
        let runtime = tokio::runtime::Builder::new_multi_thread()
            .worker_threads(1)
            .enable_all()
            .build()
            .expect("a runtime");
        let got: Arc<Mutex<Vec<Export>>> = Arc::default();
        let listener = runtime
            .block_on(tokio::net::TcpListener::bind("127.0.0.1:0"))
            .expect("bind loopback");
        let addr = listener.local_addr().expect("an address");
        let kept = Arc::clone(&got);
        runtime.spawn(async move {
            loop {
                let Ok((stream, _)) = listener.accept().await else {
                    return;
                };
                let kept = Arc::clone(&kept);
                let service = hyper::service::service_fn(move |request: Request<Incoming>| {
                    let kept = Arc::clone(&kept);
                    async move {
                        let path = request.uri().path().to_owned();
                        let kind = request
                            .headers()
                            .get("content-type")
                            .and_then(|v| v.to_str().ok())
                            .unwrap_or_default()
                            .to_owned();
                        let body = request.into_body().collect().await?.to_bytes().to_vec();
                        let reply = match kind.contains("json") {
                            true => "{}",
                            false => "",
                        };
                        kept.lock().unwrap().push((path, kind.clone(), body));
                        Ok::<_, hyper::Error>(
                            Response::builder()
                                .header("content-type", kind)
                                .body(Full::new(Bytes::from_static(reply.as_bytes())))
                                .unwrap(),
                        )
                    }
                });
                tokio::spawn(
                    hyper::server::conn::http1::Builder::new()
                        .serve_connection(TokioIo::new(stream), service),
                );
            }
        });
        Collector {
            addr,
            got,
            _runtime: runtime,
        }
    }

    fn exports(&self, path: &str) -> Vec<Export> {
        let got = self.got.lock().unwrap();
        got.iter().filter(|(p, _, _)| p == path).cloned().collect()
    }

    /// Every span received, decoded by its content type, in a flat form.
    fn spans(&self) -> Vec<Span> {
        let mut spans = Vec::new();
        for (_, kind, body) in self.exports("/v1/traces") {
            let request = match kind.contains("json") {
                true => serde_json::from_slice::<ExportTraceServiceRequest>(&body)
                    .expect("OTLP/JSON traces"),
                false => ExportTraceServiceRequest::decode(body.as_slice())
                    .expect("OTLP/protobuf traces"),
            };
            for resource in request.resource_spans {
                for scope in resource.scope_spans {
                    let scope_name = scope.scope.map(|s| s.name).unwrap_or_default();
                    for s in scope.spans {
                        spans.push(Span {
                            trace_id: hex(&s.trace_id),
                            span_id: hex(&s.span_id),
                            parent: hex(&s.parent_span_id),
                            name: s.name,
                            kind: s.kind,
                            scope: scope_name.clone(),
                            status: s.status.map(|st| st.code).unwrap_or(0),
                            attributes: s
                                .attributes
                                .into_iter()
                                .map(|kv| (kv.key, flat(kv.value)))
                                .collect(),
                            events: s.events.into_iter().map(|e| e.name).collect(),
                        });
                    }
                }
            }
        }
        spans
    }

    /// The names of the metrics received.
    fn metric_names(&self) -> Vec<String> {
        let mut names = Vec::new();
        for (_, kind, body) in self.exports("/v1/metrics") {
            let request = match kind.contains("json") {
                true => serde_json::from_slice::<ExportMetricsServiceRequest>(&body)
                    .expect("OTLP/JSON metrics"),
                false => ExportMetricsServiceRequest::decode(body.as_slice())
                    .expect("OTLP/protobuf metrics"),
            };
            for resource in request.resource_metrics {
                for scope in resource.scope_metrics {
                    names.extend(scope.metrics.into_iter().map(|m| m.name));
                }
            }
        }
        names
    }
}

#[derive(Debug, Clone)]
struct Span {
    trace_id: String,
    span_id: String,
    parent: String,
    name: String,
    /// 3 is CLIENT, 1 INTERNAL.
    kind: i32,
    scope: String,
    /// 2 is ERROR.
    status: i32,
    attributes: BTreeMap<String, Value>,
    events: Vec<String>,
}

impl Span {
    fn attr(&self, key: &str) -> Option<&str> {
        self.attributes.get(key).and_then(Value::as_str)
    }
}

fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

fn flat(value: Option<AnyValue>) -> Value {
    match value.and_then(|v| v.value) {
        Some(any_value::Value::StringValue(s)) => json!(s),
        Some(any_value::Value::BoolValue(b)) => json!(b),
        Some(any_value::Value::IntValue(i)) => json!(i),
        Some(any_value::Value::DoubleValue(d)) => json!(d),
        Some(any_value::Value::ArrayValue(a)) => {
            Value::Array(a.values.into_iter().map(|v| flat(Some(v))).collect())
        }
        _ => Value::Null,
    }
}

const OTEL_VARS: [&str; 8] = [
    "OTEL_EXPORTER_OTLP_ENDPOINT",
    "OTEL_EXPORTER_OTLP_TRACES_ENDPOINT",
    "OTEL_EXPORTER_OTLP_METRICS_ENDPOINT",
    "OTEL_EXPORTER_OTLP_PROTOCOL",
    "OTEL_SDK_DISABLED",
    "OTEL_TRACES_EXPORTER",
    "OTEL_METRICS_EXPORTER",
    "OTEL_SERVICE_NAME",
];

/// Runs the driver on the stdio test server with `plan`, exporting to `collector` with
/// `protocol` when given; returns the outcome lines.
fn driver(defects: &[&str], plan: Value, collector: Option<(&Collector, &str)>) -> Vec<Value> {
    let argv = json!(["python3", "-c", SERVER, "normal"]);
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_mcp-harness-driver"));
    for d in defects {
        cmd.args(["--defect", d]);
    }
    for var in OTEL_VARS {
        cmd.env_remove(var);
    }
    cmd.env("MCP_HARNESS_CONTRACT", "1")
        .env("MCP_HARNESS_TRANSPORT", "stdio")
        .env("MCP_HARNESS_SERVER_COMMAND", argv.to_string())
        .env("MCP_HARNESS_PLAN", plan.to_string())
        .env("MCP_HARNESS_TIMEOUT_MS", "5000")
        .env("MCP_HARNESS_PROTOCOL_VERSION", "2025-03-26")
        .env("MCP_HARNESS_SHUTDOWN_GRACE_MS", "100");
    if let Some((collector, protocol)) = collector {
        cmd.env(
            "OTEL_EXPORTER_OTLP_ENDPOINT",
            format!("http://{}", collector.addr),
        )
        .env("OTEL_EXPORTER_OTLP_PROTOCOL", protocol)
        .env("OTEL_TRACES_SAMPLER", "always_on")
        .env("OTEL_BSP_SCHEDULE_DELAY", "100")
        .env("OTEL_METRIC_EXPORT_INTERVAL", "500");
    }
    let out = cmd.output().expect("driver runs");
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        out.status.success(),
        "driver failed: {:?}\n{stderr}",
        out.status
    );
    String::from_utf8(out.stdout)
        .expect("UTF-8")
        .lines()
        .map(|l| serde_json::from_str(l).expect("JSON lines"))
        .collect()
}

const CALLER: &str = "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01";

/// A plan touching a paged listing, a success, a tool error, a JSON-RPC error, a
/// cancellation, and `seen` last (the messages the server received).
fn plan(trace_context: bool) -> Value {
    let mut connect = json!({"op": "connect", "handlers": {
        "elicitation/create": {"action": "accept", "content": {"pin": "elicited-7731"}},
    }});
    if trace_context {
        connect["trace_context"] =
            json!({"traceparent": CALLER, "tracestate": "congo=t61rcWkgMzE"});
    }
    json!([
        connect,
        {"op": "list_tools"},
        {"op": "call_tool", "name": "echo", "arguments": {"secret": "argument-value-123"}},
        {"op": "call_tool", "name": "fail", "arguments": {}},
        {"op": "call_tool", "name": "rpcerr", "arguments": {}},
        {"op": "call_tool", "name": "slow", "arguments": {}, "cancel_after_ms": 50},
        {"op": "call_tool", "name": "seen", "arguments": {}},
        {"op": "close"},
    ])
}

/// The requests (with an id) the server received, from the `seen` step's outcome.
fn wire_requests(lines: &[Value]) -> Vec<Value> {
    let seen = lines
        .iter()
        .find_map(|l| l["ok"]["structured"]["messages"].as_array())
        .expect("a seen outcome");
    seen.iter()
        .filter(|m| m.get("id").is_some() && m.get("method").is_some())
        .cloned()
        .collect()
}

fn span_for<'a>(spans: &'a [Span], id: &Value) -> Vec<&'a Span> {
    let id = id.to_string();
    spans
        .iter()
        .filter(|s| s.attr("jsonrpc.request.id") == Some(id.as_str()))
        .collect()
}

fn traceparent(request: &Value) -> &str {
    request["params"]["_meta"]["traceparent"]
        .as_str()
        .expect("a traceparent in _meta")
}

fn by_tool<'a>(spans: &'a [Span], tool: &str) -> &'a Span {
    spans
        .iter()
        .find(|s| s.attr("gen_ai.tool.name") == Some(tool))
        .unwrap_or_else(|| panic!("a span for tool {tool}: {spans:#?}"))
}

fn every_request_has_its_span(protocol: &str) {
    let collector = Collector::start();
    let lines = driver(&[], plan(true), Some((&collector, protocol)));
    let spans = collector.spans();
    let requests = wire_requests(&lines);
    assert!(requests.len() >= 7, "{requests:#?}");
    for request in &requests {
        let found = span_for(&spans, &request["id"]);
        assert_eq!(found.len(), 1, "one span for {request}: {spans:#?}");
        let span = found[0];
        let method = request["method"].as_str().unwrap();
        assert_eq!(span.kind, 3, "CLIENT: {span:?}");
        assert_eq!(span.scope, "mcp-harness-client");
        assert_eq!(span.attr("mcp.method.name"), Some(method));
        assert_eq!(span.attr("network.transport"), Some("pipe"));
        assert_eq!(span.attr("mcp_harness.era"), Some("legacy"));
        let expected = match request["params"]["name"].as_str() {
            Some(tool) if method == "tools/call" => format!("{method} {tool}"),
            _ => method.to_owned(),
        };
        assert_eq!(span.name, expected);
        // The caller's trace, the span as the parent on the wire; tracestate as given.
        assert_eq!(span.trace_id, "0af7651916cd43dd8448eb211c80319c");
        assert_eq!(span.parent, "b7ad6b7169203331");
        let wire = traceparent(request);
        assert_eq!(wire, format!("00-{}-{}-01", span.trace_id, span.span_id));
        assert_eq!(
            request["params"]["_meta"]["tracestate"],
            "congo=t61rcWkgMzE"
        );
        if method != "initialize" {
            assert_eq!(
                span.attr("mcp.protocol.version"),
                Some("2025-03-26"),
                "{span:?}"
            );
            assert_eq!(span.attr("mcp_harness.server.name"), Some("py-normal"));
        }
    }
    let initialize = spans.iter().find(|s| s.name == "initialize").unwrap();
    assert!(initialize.events.contains(&"capabilities".to_owned()));
    assert_eq!(initialize.attr("mcp.protocol.version"), Some("2025-03-26"));
    let pages = spans.iter().filter(|s| s.name == "tools/list").count();
    assert_eq!(pages, 2, "one span per page");
    let echo = by_tool(&spans, "echo");
    assert_eq!(echo.attr("gen_ai.operation.name"), Some("execute_tool"));
    assert_eq!(echo.attr("mcp_harness.final_status"), Some("ok"));
    assert_eq!(echo.attr("mcp_harness.result.type"), Some("complete"));
    assert!(echo.attr("error.type").is_none() && echo.status != 2);
    let fail = by_tool(&spans, "fail");
    assert_eq!(fail.attr("error.type"), Some("tool_error"));
    let rpcerr = by_tool(&spans, "rpcerr");
    assert_eq!(rpcerr.attr("error.type"), Some("-32602"));
    assert_eq!(rpcerr.attr("rpc.response.status_code"), Some("-32602"));
    assert_eq!(rpcerr.status, 2, "ERROR status");
    let slow = by_tool(&spans, "slow");
    assert_eq!(slow.attr("error.type"), Some("cancelled"));
    assert!(slow.events.contains(&"cancelled".to_owned()));
    // No argument, answer or result in any span.
    let everything = format!("{spans:?}");
    for secret in ["argument-value-123", "elicited-7731", "\"k\""] {
        assert!(!everything.contains(secret), "{secret} in a span");
    }
    let metrics = collector.metric_names();
    assert!(
        metrics.contains(&"mcp.client.operation.duration".to_owned()),
        "{metrics:?}"
    );
    assert!(
        metrics.contains(&"mcp.client.session.duration".to_owned()),
        "{metrics:?}"
    );
}

#[test]
fn every_request_has_its_span_over_protobuf() {
    every_request_has_its_span("http/protobuf");
}

#[test]
fn every_request_has_its_span_over_json() {
    every_request_has_its_span("http/json");
}

#[test]
fn without_the_variables_nothing_is_exported_and_the_wire_is_as_before() {
    let collector = Collector::start();
    let lines = driver(&[], plan(true), None);
    assert!(collector.exports("/v1/traces").is_empty());
    assert!(
        collector.got.lock().unwrap().is_empty(),
        "no request at all"
    );
    for request in wire_requests(&lines) {
        assert_eq!(traceparent(&request), CALLER, "the caller's, as given");
    }
    // Without a caller's context and without telemetry, no _meta is added at all.
    let lines = driver(&[], plan(false), None);
    for request in wire_requests(&lines) {
        assert!(
            request["params"]["_meta"].get("traceparent").is_none(),
            "{request}"
        );
    }
}

#[test]
fn without_a_callers_context_each_request_starts_a_trace_of_its_own() {
    let collector = Collector::start();
    let lines = driver(&[], plan(false), Some((&collector, "http/protobuf")));
    let spans = collector.spans();
    for request in wire_requests(&lines) {
        let span = span_for(&spans, &request["id"])[0];
        assert!(span.parent.is_empty(), "a root span: {span:?}");
        assert_eq!(
            traceparent(&request),
            format!("00-{}-{}-01", span.trace_id, span.span_id)
        );
    }
}

#[test]
fn each_telemetry_defect_breaks_what_it_names() {
    let run = |defect: &str| {
        let collector = Collector::start();
        let lines = driver(&[defect], plan(true), Some((&collector, "http/protobuf")));
        (collector.spans(), wire_requests(&lines), collector)
    };

    let (spans, _, collector) = run("no-spans");
    assert!(spans.is_empty() && collector.exports("/v1/traces").is_empty());

    let (spans, requests, _) = run("span-wrong-id");
    assert!(!spans.is_empty());
    for request in &requests {
        assert!(span_for(&spans, &request["id"]).is_empty(), "{request}");
    }

    let (spans, _, _) = run("span-misnamed");
    assert!(spans.iter().all(|s| s.name == "mcp.request"), "{spans:?}");
    assert!(spans.iter().all(|s| s.attr("gen_ai.tool.name").is_none()));

    let (spans, _, _) = run("token-in-span");
    assert!(format!("{spans:?}").contains("elicited-7731"), "{spans:?}");

    let (spans, requests, _) = run("wire-context-not-span");
    for request in &requests {
        let span = span_for(&spans, &request["id"])[0];
        let wire = traceparent(request);
        assert!(wire.contains(&span.trace_id), "same trace");
        assert!(
            !wire.contains(&span.span_id),
            "not the span: {wire} {span:?}"
        );
    }

    let (spans, _, _) = run("span-no-error-type");
    let rpcerr = by_tool(&spans, "rpcerr");
    assert!(
        rpcerr.attr("error.type").is_none() && rpcerr.attr("rpc.response.status_code").is_none()
    );
    assert_ne!(rpcerr.status, 2);
}
