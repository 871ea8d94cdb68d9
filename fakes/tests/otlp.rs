//! The OTLP receiver fake as an exporter sees it: real OTLP bodies (built with the official
//! definitions, and one written by hand as the OTLP/JSON examples of the specification show
//! it) POSTed over loopback, and what the receiver hands back.

use std::io::{Read, Write};
use std::net::TcpStream;
use std::time::Duration;

use mcp_harness_fakes::otlp::{Collected, Receiver};
use opentelemetry_proto::tonic::collector::metrics::v1::ExportMetricsServiceRequest;
use opentelemetry_proto::tonic::collector::trace::v1::ExportTraceServiceRequest;
use opentelemetry_proto::tonic::common::v1::{
    AnyValue, ArrayValue, EntityRef, InstrumentationScope, KeyValue, KeyValueList,
    any_value::Value as V,
};
use opentelemetry_proto::tonic::metrics::v1::{
    Exemplar, Histogram, HistogramDataPoint, Metric, ResourceMetrics, ScopeMetrics, metric::Data,
};
use opentelemetry_proto::tonic::resource::v1::Resource;
use opentelemetry_proto::tonic::trace::v1::{ResourceSpans, ScopeSpans, Span, Status, span};
use prost::Message as _;
use serde_json::json;

const GRACE: Duration = Duration::from_secs(2);

fn kv(key: &str, value: V) -> KeyValue {
    KeyValue {
        key: key.into(),
        value: Some(AnyValue { value: Some(value) }),
        ..Default::default()
    }
}

/// One CLIENT span with every kind of attribute value, an event and an error status.
fn request() -> ExportTraceServiceRequest {
    let span = Span {
        trace_id: (1..=16).collect(),
        span_id: vec![0xab; 8],
        parent_span_id: vec![0x01, 0x02, 0x03, 0x04, 0x05, 0x06, 0x07, 0x08],
        name: "tools/call echo".into(),
        kind: 3,
        start_time_unix_nano: 1_700_000_000_000_000_001,
        end_time_unix_nano: 1_700_000_000_000_000_002,
        attributes: vec![
            kv("mcp.method.name", V::StringValue("tools/call".into())),
            kv("jsonrpc.request.id", V::StringValue("2".into())),
            kv("rpc.response.status_code", V::IntValue(-32602)),
            kv("retry", V::BoolValue(true)),
            kv("ratio", V::DoubleValue(0.5)),
            kv("raw", V::BytesValue(b"hi".to_vec())),
            kv(
                "list",
                V::ArrayValue(ArrayValue {
                    values: vec![AnyValue {
                        value: Some(V::IntValue(7)),
                    }],
                }),
            ),
            kv(
                "map",
                V::KvlistValue(KeyValueList {
                    values: vec![kv("k", V::StringValue("v".into()))],
                }),
            ),
        ],
        events: vec![span::Event {
            name: "retry".into(),
            attributes: vec![kv("attempt", V::IntValue(2))],
            ..Default::default()
        }],
        status: Some(Status {
            message: "Invalid params".into(),
            code: 2,
        }),
        ..Default::default()
    };
    ExportTraceServiceRequest {
        resource_spans: vec![ResourceSpans {
            resource: Some(Resource {
                attributes: vec![kv(
                    "service.name",
                    V::StringValue("mcp-harness-client".into()),
                )],
                ..Default::default()
            }),
            scope_spans: vec![ScopeSpans {
                scope: Some(InstrumentationScope {
                    name: "mcp-harness-client".into(),
                    ..Default::default()
                }),
                spans: vec![span],
                ..Default::default()
            }],
            ..Default::default()
        }],
    }
}

fn expected(encoding: &str) -> serde_json::Value {
    json!({
        "trace_id": "0102030405060708090a0b0c0d0e0f10",
        "span_id": "abababababababab",
        "parent_span_id": "0102030405060708",
        "name": "tools/call echo",
        "kind": "client",
        "start_ns": 1_700_000_000_000_000_001u64,
        "end_ns": 1_700_000_000_000_000_002u64,
        "status": {"code": "error", "message": "Invalid params"},
        "attributes": {
            "mcp.method.name": "tools/call",
            "jsonrpc.request.id": "2",
            "rpc.response.status_code": -32602,
            "retry": true,
            "ratio": 0.5,
            "raw": "aGk=",
            "list": [7],
            "map": {"k": "v"},
        },
        "events": [{"name": "retry", "attributes": {"attempt": 2}}],
        "scope": "mcp-harness-client",
        "resource": {"service.name": "mcp-harness-client"},
        "encoding": encoding,
    })
}

/// The status line, the headers (lower-case names) and the body of one request.
fn post(
    receiver: &Receiver,
    method: &str,
    path: &str,
    headers: &[(&str, &str)],
    body: &[u8],
) -> (u16, String, Vec<u8>) {
    let mut stream = TcpStream::connect(receiver.addr()).unwrap();
    let mut head = format!(
        "{method} {path} HTTP/1.1\r\nhost: {}\r\nconnection: close\r\ncontent-length: {}\r\n",
        receiver.addr(),
        body.len()
    );
    for (name, value) in headers {
        head.push_str(&format!("{name}: {value}\r\n"));
    }
    head.push_str("\r\n");
    stream.write_all(head.as_bytes()).unwrap();
    // A receiver may answer before reading a body it refuses (413): a write error is fine.
    let _ = stream.write_all(body);
    let mut got = Vec::new();
    let _ = stream.read_to_end(&mut got);
    let split = got
        .windows(4)
        .position(|w| w == b"\r\n\r\n")
        .expect("a response head");
    let head = String::from_utf8_lossy(&got[..split]).to_lowercase();
    let status = head[9..12].parse().unwrap();
    (status, head, got[split + 4..].to_vec())
}

const PROTOBUF: (&str, &str) = ("content-type", "application/x-protobuf");
const JSON: (&str, &str) = ("content-type", "application/json");

#[test]
fn a_protobuf_export_is_answered_empty_and_its_span_normalised() {
    let receiver = Receiver::start().unwrap();
    let (status, head, body) = post(
        &receiver,
        "POST",
        "/v1/traces",
        &[PROTOBUF],
        &request().encode_to_vec(),
    );
    assert_eq!(status, 200);
    assert!(
        head.contains("content-type: application/x-protobuf"),
        "{head}"
    );
    assert!(body.is_empty(), "the empty response encodes to no bytes");
    let got = receiver.finish(GRACE);
    assert_eq!(got.spans, vec![expected("http/protobuf")]);
    assert!(got.rejected.is_empty(), "{:?}", got.rejected);
}

#[test]
fn a_json_export_from_the_official_types_decodes_to_the_same_span() {
    let receiver = Receiver::start().unwrap();
    let body = serde_json::to_vec(&request()).unwrap();
    let (status, head, answer) = post(&receiver, "POST", "/v1/traces", &[JSON], &body);
    assert_eq!(status, 200);
    assert!(head.contains("content-type: application/json"), "{head}");
    assert_eq!(answer, b"{}");
    assert_eq!(receiver.finish(GRACE).spans, vec![expected("http/json")]);
}

/// OTLP/JSON as the specification writes it: hex ids, an integer `kind`, int64 values as
/// strings, unknown fields ignored.
#[test]
fn hand_written_otlp_json_with_hex_ids_and_string_ints_decodes() {
    let body = r#"{"resourceSpans":[{"resource":{"attributes":[
        {"key":"service.name","value":{"stringValue":"my.service"}}]},
      "scopeSpans":[{"scope":{"name":"my.library","version":"1.0.0"},
        "spans":[{"traceId":"5B8EFFF798038103D269B633813FC60C","spanId":"EEE19B7EC3C1B174",
          "parentSpanId":"","name":"initialize","kind":3,
          "startTimeUnixNano":"1544712660000000000","endTimeUnixNano":"1544712661000000000",
          "attributes":[{"key":"jsonrpc.request.id","value":{"intValue":"5"}},
                        {"key":"n","value":{"intValue":5}}],
          "status":{"code":1},"someFutureField":true}]}]}]}"#;
    let receiver = Receiver::start().unwrap();
    let (status, ..) = post(&receiver, "POST", "/v1/traces", &[JSON], body.as_bytes());
    assert_eq!(status, 200);
    let got = receiver.finish(GRACE);
    assert_eq!(got.rejected, Vec::<String>::new());
    assert_eq!(
        got.spans,
        vec![json!({
            "trace_id": "5b8efff798038103d269b633813fc60c",
            "span_id": "eee19b7ec3c1b174",
            "name": "initialize",
            "kind": "client",
            "start_ns": 1544712660000000000u64,
            "end_ns": 1544712661000000000u64,
            "status": {"code": "ok"},
            "attributes": {"jsonrpc.request.id": 5, "n": 5},
            "events": [],
            "scope": "my.library",
            "scope_version": "1.0.0",
            "resource": {"service.name": "my.service"},
            "encoding": "http/json",
        })]
    );
}

#[test]
fn a_gzipped_export_is_unpacked() {
    let mut gz = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::fast());
    gz.write_all(&request().encode_to_vec()).unwrap();
    let body = gz.finish().unwrap();
    let receiver = Receiver::start().unwrap();
    let headers = [PROTOBUF, ("content-encoding", "gzip")];
    let (status, ..) = post(&receiver, "POST", "/v1/traces", &headers, &body);
    assert_eq!(status, 200);
    assert_eq!(
        receiver.finish(GRACE).spans,
        vec![expected("http/protobuf")]
    );
}

#[test]
fn metric_points_are_normalised_and_logs_taken_and_dropped() {
    let point = |route: &str| HistogramDataPoint {
        attributes: vec![kv("mcp.method.name", V::StringValue(route.into()))],
        count: 1,
        ..Default::default()
    };
    let metrics = ExportMetricsServiceRequest {
        resource_metrics: vec![ResourceMetrics {
            scope_metrics: vec![ScopeMetrics {
                metrics: vec![Metric {
                    name: "mcp.client.operation.duration".into(),
                    unit: "s".into(),
                    data: Some(Data::Histogram(Histogram {
                        data_points: vec![point("initialize"), point("tools/list")],
                        aggregation_temporality: 2,
                    })),
                    ..Default::default()
                }],
                ..Default::default()
            }],
            ..Default::default()
        }],
    };
    let receiver = Receiver::start().unwrap();
    let (status, ..) = post(
        &receiver,
        "POST",
        "/v1/metrics",
        &[PROTOBUF],
        &metrics.encode_to_vec(),
    );
    assert_eq!(status, 200);
    let (status, _, body) = post(
        &receiver,
        "POST",
        "/v1/logs",
        &[JSON],
        b"{\"resourceLogs\":[]}",
    );
    assert_eq!((status, body), (200, b"{}".to_vec()));
    let got = receiver.finish(GRACE);
    let point = |route: &str| {
        json!({"name": "mcp.client.operation.duration", "unit": "s", "kind": "histogram",
               "attributes": {"mcp.method.name": route}, "scope": "", "resource": {},
               "encoding": "http/protobuf"})
    };
    assert_eq!(
        got,
        Collected {
            spans: Vec::new(),
            metrics: vec![point("initialize"), point("tools/list")],
            rejected: Vec::new(),
        }
    );
}

/// A scope, a resource with an entity reference, and their schema URLs, each string
/// carrying `mark` and a tag naming the field.
fn marked_origin(mark: &str) -> (InstrumentationScope, Resource) {
    let m = |field: &str| format!("{mark}-{field}");
    let scope = InstrumentationScope {
        name: m("scope-name"),
        version: m("scope-version"),
        attributes: vec![kv("scope.attr", V::StringValue(m("scope-attribute")))],
        ..Default::default()
    };
    let resource = Resource {
        attributes: vec![kv("service.name", V::StringValue(m("resource-attribute")))],
        entity_refs: vec![EntityRef {
            schema_url: m("entity-schema"),
            r#type: m("entity-type"),
            id_keys: vec![m("entity-id-key")],
            description_keys: vec![m("entity-description-key")],
        }],
        ..Default::default()
    };
    (scope, resource)
}

/// Every free string of a trace and a metrics export, in both encodings, is in what the
/// receiver hands back: the runner scans only that for secrets, so a string dropped here
/// is a secret that escapes the scan.
#[test]
fn every_exported_string_is_kept_for_the_secrets_scan() {
    let mark = "planted";
    let m = |field: &str| format!("{mark}-{field}");
    let (scope, resource) = marked_origin(mark);
    let span = Span {
        trace_id: vec![1; 16],
        span_id: vec![2; 8],
        trace_state: m("trace-state"),
        name: m("span-name"),
        kind: 3,
        attributes: vec![kv(&m("attribute-key"), V::StringValue(m("attribute")))],
        events: vec![span::Event {
            name: m("event-name"),
            attributes: vec![kv("e", V::StringValue(m("event-attribute")))],
            ..Default::default()
        }],
        links: vec![span::Link {
            trace_id: vec![3; 16],
            span_id: vec![4; 8],
            trace_state: m("link-trace-state"),
            attributes: vec![kv("l", V::StringValue(m("link-attribute")))],
            ..Default::default()
        }],
        status: Some(Status {
            message: m("status-message"),
            code: 2,
        }),
        ..Default::default()
    };
    let traces = ExportTraceServiceRequest {
        resource_spans: vec![ResourceSpans {
            resource: Some(resource.clone()),
            scope_spans: vec![ScopeSpans {
                scope: Some(scope.clone()),
                spans: vec![span],
                schema_url: m("scope-spans-schema"),
            }],
            schema_url: m("resource-spans-schema"),
        }],
    };
    let point = HistogramDataPoint {
        attributes: vec![kv("p", V::StringValue(m("point-attribute")))],
        exemplars: vec![Exemplar {
            filtered_attributes: vec![kv("x", V::StringValue(m("exemplar-attribute")))],
            ..Default::default()
        }],
        count: 1,
        ..Default::default()
    };
    let metrics = ExportMetricsServiceRequest {
        resource_metrics: vec![ResourceMetrics {
            resource: Some(resource),
            scope_metrics: vec![ScopeMetrics {
                scope: Some(scope),
                metrics: vec![Metric {
                    name: m("metric-name"),
                    description: m("metric-description"),
                    unit: m("metric-unit"),
                    metadata: vec![kv("md", V::StringValue(m("metric-metadata")))],
                    data: Some(Data::Histogram(Histogram {
                        data_points: vec![point],
                        aggregation_temporality: 2,
                    })),
                }],
                schema_url: m("scope-metrics-schema"),
            }],
            schema_url: m("resource-metrics-schema"),
        }],
    };
    let fields = [
        "scope-name",
        "scope-version",
        "scope-attribute",
        "resource-attribute",
        "entity-schema",
        "entity-type",
        "entity-id-key",
        "entity-description-key",
    ];
    let span_fields = [
        "trace-state",
        "span-name",
        "attribute-key",
        "attribute",
        "event-name",
        "event-attribute",
        "link-trace-state",
        "link-attribute",
        "status-message",
        "scope-spans-schema",
        "resource-spans-schema",
    ];
    let metric_fields = [
        "metric-name",
        "metric-description",
        "metric-unit",
        "metric-metadata",
        "point-attribute",
        "exemplar-attribute",
        "scope-metrics-schema",
        "resource-metrics-schema",
    ];
    for encoding in [PROTOBUF, JSON] {
        let (trace_body, metric_body) = match encoding {
            JSON => (
                serde_json::to_vec(&traces).unwrap(),
                serde_json::to_vec(&metrics).unwrap(),
            ),
            _ => (traces.encode_to_vec(), metrics.encode_to_vec()),
        };
        let receiver = Receiver::start().unwrap();
        assert_eq!(
            post(&receiver, "POST", "/v1/traces", &[encoding], &trace_body).0,
            200
        );
        assert_eq!(
            post(&receiver, "POST", "/v1/metrics", &[encoding], &metric_body).0,
            200
        );
        let got = receiver.finish(GRACE);
        let spans = serde_json::to_string(&got.spans).unwrap();
        let points = serde_json::to_string(&got.metrics).unwrap();
        for field in fields.iter().chain(&span_fields) {
            assert!(
                spans.contains(&m(field)),
                "{encoding:?}: {field} dropped: {spans}"
            );
        }
        for field in fields.iter().chain(&metric_fields) {
            assert!(
                points.contains(&m(field)),
                "{encoding:?}: {field} dropped: {points}"
            );
        }
    }
}

#[test]
fn bad_requests_get_their_status_and_a_note_that_never_quotes_the_body() {
    let receiver = Receiver::start().unwrap();
    let secret = "planted-secret-value";
    let bad_json = format!("{{\"resourceSpans\":[{{\"scopeSpans\":\"{secret}\"}}]}}");
    type Case<'a> = (&'a str, &'a str, Vec<(&'a str, &'a str)>, Vec<u8>, u16);
    let cases: Vec<Case> = vec![
        ("POST", "/v1/traces", vec![JSON], bad_json.into_bytes(), 400),
        ("POST", "/v1/traces", vec![JSON], b"{not json".to_vec(), 400),
        (
            "POST",
            "/v1/traces",
            vec![PROTOBUF],
            vec![0xff, 0xff, 0xff],
            400,
        ),
        (
            "POST",
            "/v1/traces",
            vec![PROTOBUF, ("content-encoding", "gzip")],
            b"not gzip".to_vec(),
            400,
        ),
        (
            "POST",
            "/v1/traces",
            vec![("content-type", "text/plain")],
            b"x".to_vec(),
            415,
        ),
        ("POST", "/v1/elsewhere", vec![JSON], b"{}".to_vec(), 404),
        ("GET", "/v1/traces", vec![], Vec::new(), 405),
        (
            "POST",
            "/v1/traces",
            vec![PROTOBUF],
            vec![0; 4 * 1024 * 1024 + 1],
            413,
        ),
    ];
    for (method, path, headers, body, want) in &cases {
        let (status, _, answer) = post(&receiver, method, path, headers, body);
        assert_eq!(status, *want, "{method} {path} {headers:?}");
        assert!(!String::from_utf8_lossy(&answer).contains(secret));
    }
    let got = receiver.finish(GRACE);
    assert!(got.spans.is_empty());
    // Every refused export is noted except the wrong path and method (no export at all).
    assert_eq!(got.rejected.len(), 6, "{:?}", got.rejected);
    assert!(
        got.rejected
            .iter()
            .all(|r| r.starts_with("POST /v1/traces: "))
    );
    assert!(got.rejected.iter().all(|r| !r.contains(secret)));
    assert!(
        got.rejected[0].contains("not an OTLP/JSON message"),
        "{:?}",
        got.rejected
    );
    assert!(got.rejected[5].contains("body over"), "{:?}", got.rejected);
}

#[test]
fn it_listens_on_loopback_only() {
    let receiver = Receiver::start().unwrap();
    assert!(receiver.addr().ip().is_loopback());
    assert_eq!(
        receiver.endpoint(),
        format!("http://127.0.0.1:{}", receiver.addr().port())
    );
}

/// A connection made just before the stop (its request already sent) is still served.
#[test]
fn an_export_sent_just_before_finish_is_kept() {
    let receiver = Receiver::start().unwrap();
    let body = request().encode_to_vec();
    let mut stream = TcpStream::connect(receiver.addr()).unwrap();
    let head = format!(
        "POST /v1/traces HTTP/1.1\r\nhost: x\r\ncontent-type: application/x-protobuf\r\ncontent-length: {}\r\n\r\n",
        body.len()
    );
    stream.write_all(head.as_bytes()).unwrap();
    stream.write_all(&body).unwrap();
    drop(stream);
    assert_eq!(receiver.finish(GRACE).spans.len(), 1);
}

/// The cost a traces trial pays: start and finish an idle receiver.
#[test]
fn starting_and_finishing_is_cheap() {
    let rounds: u32 = 50;
    let (mut start, mut finish) = (Duration::ZERO, Duration::ZERO);
    for _ in 0..rounds {
        let t = std::time::Instant::now();
        let receiver = Receiver::start().unwrap();
        start += t.elapsed();
        let t = std::time::Instant::now();
        receiver.finish(GRACE);
        finish += t.elapsed();
    }
    let (start, finish) = (start / rounds, finish / rounds);
    eprintln!("idle receiver: start {start:?}, finish {finish:?} (mean of {rounds})");
    assert!(
        start + finish < Duration::from_millis(50),
        "{start:?} {finish:?}"
    );
}
