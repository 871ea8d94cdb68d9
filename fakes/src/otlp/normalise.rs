//! OTLP messages as the harness reads them: one JSON object per span and per metric data
//! point, the same whichever encoding carried it (the shape is documented on the transcript's
//! `span` event). Ids become lower-case hex, enums names, attribute lists objects.

use base64::Engine as _;
use opentelemetry_proto::tonic::collector::metrics::v1::ExportMetricsServiceRequest;
use opentelemetry_proto::tonic::collector::trace::v1::ExportTraceServiceRequest;
use opentelemetry_proto::tonic::common::v1::{AnyValue, KeyValue, any_value};
use opentelemetry_proto::tonic::metrics::v1::metric::Data;
use opentelemetry_proto::tonic::resource::v1::Resource;
use opentelemetry_proto::tonic::trace::v1::Span;
use serde_json::{Map, Value, json};

/// Every span of an export request, normalised, tagged with the `encoding` it came in.
pub fn spans(request: &ExportTraceServiceRequest, encoding: &str) -> Vec<Value> {
    let mut out = Vec::new();
    for rs in &request.resource_spans {
        let resource = resource(rs.resource.as_ref());
        for ss in &rs.scope_spans {
            let scope = ss.scope.as_ref().map(|s| s.name.as_str()).unwrap_or("");
            for span in &ss.spans {
                out.push(one_span(span, scope, &resource, encoding));
            }
        }
    }
    out
}

fn one_span(span: &Span, scope: &str, resource: &Value, encoding: &str) -> Value {
    let mut o = Map::new();
    o.insert("trace_id".into(), hex(&span.trace_id).into());
    o.insert("span_id".into(), hex(&span.span_id).into());
    if !span.parent_span_id.is_empty() {
        o.insert("parent_span_id".into(), hex(&span.parent_span_id).into());
    }
    o.insert("name".into(), span.name.clone().into());
    o.insert("kind".into(), kind(span.kind).into());
    o.insert("start_ns".into(), span.start_time_unix_nano.into());
    o.insert("end_ns".into(), span.end_time_unix_nano.into());
    let mut status = Map::new();
    let (code, message) = span
        .status
        .as_ref()
        .map(|s| (s.code, s.message.as_str()))
        .unwrap_or((0, ""));
    let code = match code {
        1 => "ok",
        2 => "error",
        _ => "unset",
    };
    status.insert("code".into(), code.into());
    if !message.is_empty() {
        status.insert("message".into(), message.into());
    }
    o.insert("status".into(), status.into());
    o.insert("attributes".into(), attributes(&span.attributes));
    let events = span
        .events
        .iter()
        .map(|e| json!({"name": e.name, "attributes": attributes(&e.attributes)}))
        .collect();
    o.insert("events".into(), Value::Array(events));
    o.insert("scope".into(), scope.into());
    o.insert("resource".into(), resource.clone());
    o.insert("encoding".into(), encoding.into());
    Value::Object(o)
}

/// Every data point of every metric of an export request:
/// `{"name", "unit", "kind", "attributes", "encoding"}` each.
pub fn metric_points(request: &ExportMetricsServiceRequest, encoding: &str) -> Vec<Value> {
    let mut out = Vec::new();
    let metrics = request
        .resource_metrics
        .iter()
        .flat_map(|rm| &rm.scope_metrics)
        .flat_map(|sm| &sm.metrics);
    for metric in metrics {
        let points: Vec<(&str, &[KeyValue])> = match &metric.data {
            Some(Data::Gauge(g)) => g
                .data_points
                .iter()
                .map(|p| ("gauge", &p.attributes[..]))
                .collect(),
            Some(Data::Sum(s)) => s
                .data_points
                .iter()
                .map(|p| ("sum", &p.attributes[..]))
                .collect(),
            Some(Data::Histogram(h)) => h
                .data_points
                .iter()
                .map(|p| ("histogram", &p.attributes[..]))
                .collect(),
            Some(Data::ExponentialHistogram(h)) => h
                .data_points
                .iter()
                .map(|p| ("exponential_histogram", &p.attributes[..]))
                .collect(),
            Some(Data::Summary(s)) => s
                .data_points
                .iter()
                .map(|p| ("summary", &p.attributes[..]))
                .collect(),
            None => Vec::new(),
        };
        for (kind, attrs) in points {
            out.push(json!({
                "name": metric.name,
                "unit": metric.unit,
                "kind": kind,
                "attributes": attributes(attrs),
                "encoding": encoding,
            }));
        }
    }
    out
}

fn resource(resource: Option<&Resource>) -> Value {
    resource
        .map(|r| attributes(&r.attributes))
        .unwrap_or_else(|| Value::Object(Map::new()))
}

/// A key-value list as a JSON object (a repeated key: the last one wins).
fn attributes(list: &[KeyValue]) -> Value {
    let mut o = Map::new();
    for kv in list {
        o.insert(kv.key.clone(), any(kv.value.as_ref()));
    }
    Value::Object(o)
}

/// An OTLP value as JSON: strings and bools as they are, ints and doubles as numbers (a
/// double that JSON cannot hold, NaN or an infinity, as null), bytes as base64, arrays as
/// arrays, key-value lists as objects, an empty value as null.
fn any(value: Option<&AnyValue>) -> Value {
    use any_value::Value as V;
    match value.and_then(|v| v.value.as_ref()) {
        None => Value::Null,
        Some(V::StringValue(s)) => s.clone().into(),
        Some(V::BoolValue(b)) => (*b).into(),
        Some(V::IntValue(i)) => (*i).into(),
        Some(V::DoubleValue(d)) => serde_json::Number::from_f64(*d)
            .map(Value::Number)
            .unwrap_or(Value::Null),
        Some(V::ArrayValue(a)) => a.values.iter().map(|v| any(Some(v))).collect(),
        Some(V::KvlistValue(kv)) => attributes(&kv.values),
        Some(V::BytesValue(b)) => base64::engine::general_purpose::STANDARD.encode(b).into(),
        // A string-table reference (profiles only): there is no table here to look it up in.
        Some(V::StringValueStrindex(_)) => Value::Null,
    }
}

fn kind(kind: i32) -> &'static str {
    match kind {
        1 => "internal",
        2 => "server",
        3 => "client",
        4 => "producer",
        5 => "consumer",
        _ => "unspecified",
    }
}

fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}
