//! OTLP messages as the harness reads them: one JSON object per span and per metric data
//! point, the same whichever encoding carried it (the shape is documented on the transcript's
//! `span` event). Ids become lower-case hex, enums names, attribute lists objects.
//! Every free string of a message is kept (descriptions, units, scopes, trace states, links,
//! schema URLs, entity references), so the runner's secrets scan sees all a client exported;
//! the optional ones only when non-empty.

use base64::Engine as _;
use opentelemetry_proto::tonic::collector::metrics::v1::ExportMetricsServiceRequest;
use opentelemetry_proto::tonic::collector::trace::v1::ExportTraceServiceRequest;
use opentelemetry_proto::tonic::common::v1::{AnyValue, InstrumentationScope, KeyValue, any_value};
use opentelemetry_proto::tonic::metrics::v1::{Exemplar, Metric, metric::Data};
use opentelemetry_proto::tonic::resource::v1::Resource;
use opentelemetry_proto::tonic::trace::v1::Span;
use serde_json::{Map, Value, json};

/// Every span of an export request, normalised, tagged with the `encoding` it came in.
pub fn spans(request: &ExportTraceServiceRequest, encoding: &str) -> Vec<Value> {
    let mut out = Vec::new();
    for rs in &request.resource_spans {
        let resource = resource(rs.resource.as_ref());
        for ss in &rs.scope_spans {
            let mut origin = Map::new();
            about_scope(&mut origin, ss.scope.as_ref(), &ss.schema_url);
            about_resource(&mut origin, rs.resource.as_ref(), &rs.schema_url);
            for span in &ss.spans {
                let mut o = one_span(span, &resource);
                o.extend(origin.clone());
                o.insert("encoding".into(), encoding.into());
                out.push(Value::Object(o));
            }
        }
    }
    out
}

/// The scope's name as `scope` (always), its version, attributes and schema URL.
fn about_scope(o: &mut Map<String, Value>, scope: Option<&InstrumentationScope>, schema: &str) {
    let name = scope.map(|s| s.name.as_str()).unwrap_or("");
    o.insert("scope".into(), name.into());
    if let Some(scope) = scope {
        put_str(o, "scope_version", &scope.version);
        if !scope.attributes.is_empty() {
            o.insert("scope_attributes".into(), attributes(&scope.attributes));
        }
    }
    put_str(o, "scope_schema_url", schema);
}

/// The resource's schema URL and entity references (its attributes are `resource`).
fn about_resource(o: &mut Map<String, Value>, resource: Option<&Resource>, schema: &str) {
    put_str(o, "resource_schema_url", schema);
    let entities: Vec<Value> = resource
        .into_iter()
        .flat_map(|r| &r.entity_refs)
        .map(|e| {
            json!({"type": e.r#type, "id_keys": e.id_keys,
                "description_keys": e.description_keys, "schema_url": e.schema_url})
        })
        .collect();
    if !entities.is_empty() {
        o.insert("resource_entities".into(), Value::Array(entities));
    }
}

/// Inserts a string unless it is empty.
fn put_str(o: &mut Map<String, Value>, key: &str, value: &str) {
    if !value.is_empty() {
        o.insert(key.into(), value.into());
    }
}

fn one_span(span: &Span, resource: &Value) -> Map<String, Value> {
    let mut o = Map::new();
    o.insert("trace_id".into(), hex(&span.trace_id).into());
    o.insert("span_id".into(), hex(&span.span_id).into());
    if !span.parent_span_id.is_empty() {
        o.insert("parent_span_id".into(), hex(&span.parent_span_id).into());
    }
    put_str(&mut o, "trace_state", &span.trace_state);
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
    let links: Vec<Value> = span
        .links
        .iter()
        .map(|l| {
            let mut link = Map::new();
            link.insert("trace_id".into(), hex(&l.trace_id).into());
            link.insert("span_id".into(), hex(&l.span_id).into());
            put_str(&mut link, "trace_state", &l.trace_state);
            link.insert("attributes".into(), attributes(&l.attributes));
            Value::Object(link)
        })
        .collect();
    if !links.is_empty() {
        o.insert("links".into(), Value::Array(links));
    }
    o.insert("resource".into(), resource.clone());
    o
}

/// Every data point of every metric of an export request:
/// `{"name", "unit", "kind", "attributes", "encoding"}` each, with the metric's
/// `description` and `metadata`, the point's `exemplars`, and its scope and resource as a
/// span has them, when there are any.
pub fn metric_points(request: &ExportMetricsServiceRequest, encoding: &str) -> Vec<Value> {
    let mut out = Vec::new();
    for rm in &request.resource_metrics {
        let resource = resource(rm.resource.as_ref());
        for sm in &rm.scope_metrics {
            let mut origin = Map::new();
            about_scope(&mut origin, sm.scope.as_ref(), &sm.schema_url);
            about_resource(&mut origin, rm.resource.as_ref(), &rm.schema_url);
            origin.insert("resource".into(), resource.clone());
            for metric in &sm.metrics {
                for (kind, attrs, exemplars) in points(metric) {
                    let mut o = Map::new();
                    o.insert("name".into(), metric.name.clone().into());
                    o.insert("unit".into(), metric.unit.clone().into());
                    put_str(&mut o, "description", &metric.description);
                    if !metric.metadata.is_empty() {
                        o.insert("metadata".into(), attributes(&metric.metadata));
                    }
                    o.insert("kind".into(), kind.into());
                    o.insert("attributes".into(), attributes(attrs));
                    if !exemplars.is_empty() {
                        let list = exemplars.iter().map(exemplar).collect();
                        o.insert("exemplars".into(), Value::Array(list));
                    }
                    o.extend(origin.clone());
                    o.insert("encoding".into(), encoding.into());
                    out.push(Value::Object(o));
                }
            }
        }
    }
    out
}

/// A metric's data points: kind, attributes and exemplars of each.
fn points(metric: &Metric) -> Vec<(&'static str, &[KeyValue], &[Exemplar])> {
    match &metric.data {
        Some(Data::Gauge(g)) => g
            .data_points
            .iter()
            .map(|p| ("gauge", &p.attributes[..], &p.exemplars[..]))
            .collect(),
        Some(Data::Sum(s)) => s
            .data_points
            .iter()
            .map(|p| ("sum", &p.attributes[..], &p.exemplars[..]))
            .collect(),
        Some(Data::Histogram(h)) => h
            .data_points
            .iter()
            .map(|p| ("histogram", &p.attributes[..], &p.exemplars[..]))
            .collect(),
        Some(Data::ExponentialHistogram(h)) => h
            .data_points
            .iter()
            .map(|p| ("exponential_histogram", &p.attributes[..], &p.exemplars[..]))
            .collect(),
        Some(Data::Summary(s)) => s
            .data_points
            .iter()
            .map(|p| ("summary", &p.attributes[..], &[][..]))
            .collect(),
        None => Vec::new(),
    }
}

/// An exemplar's filtered attributes and the span it was taken in.
fn exemplar(e: &Exemplar) -> Value {
    json!({"attributes": attributes(&e.filtered_attributes),
        "trace_id": hex(&e.trace_id), "span_id": hex(&e.span_id)})
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
