//! The span of each JSON-RPC request the client sends: a CLIENT span named
//! `{mcp.method.name} {target}` (the tool or prompt name) or `{mcp.method.name}`, with the
//! attributes of the OpenTelemetry conventions for MCP and the seed's own fields under
//! `mcp_harness.`, and the context the request carries in `_meta`.
//!
//! Secrets are kept out at the source: the attributes are built from the method, the id, the
//! tool or prompt name, the resource URI, the connection's facts and the answer's kind, never
//! from arguments, results, headers, tokens or the answers given to input requests.

use std::sync::Mutex;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Instant;

use opentelemetry::global::{BoxedSpan, BoxedTracer};
use opentelemetry::trace::{
    Span, SpanContext, SpanId, SpanKind, Status, TraceContextExt, TraceFlags, TraceId, TraceState,
    Tracer,
};
use opentelemetry::{Array, Context, KeyValue, StringValue, Value as Attr};
use serde_json::Value;

use super::metrics::Instruments;
use super::seams::TelemetrySeams;
use crate::error::Error;
use crate::seams::Seams;
use crate::trace::TraceContext;

/// What the connection says of itself to a span (see `Transport::span_facts`).
#[derive(Debug, Default)]
pub(crate) struct Facts {
    /// `pipe` (stdio) or `tcp` (HTTP).
    pub(crate) transport: &'static str,
    /// HTTP: the `Mcp-Session-Id` held, if any.
    pub(crate) session_id: Option<String>,
    /// HTTP: the server's host and port.
    pub(crate) server: Option<(String, u16)>,
    /// OAuth: the scopes the access token held was obtained for.
    pub(crate) scopes: Option<Vec<String>>,
    /// OAuth: the issuer of the authorization server that gave it.
    pub(crate) issuer: Option<String>,
}

/// Why a request was sent, beyond its method: a retry, a multi round-trip step, the cache.
#[derive(Debug, Default, Clone, Copy)]
pub(crate) struct Note {
    /// Sent again under a new id after the request with this id failed, and why.
    pub(crate) retry_of: Option<(i64, &'static str)>,
    /// The multi round-trip round (1 for the first retry with input responses).
    pub(crate) mrtr_round: Option<usize>,
    /// The result cache was consulted: `miss`.
    pub(crate) cache: Option<&'static str>,
}

/// What names a request in its span.
#[derive(Clone, Copy)]
struct Request<'a> {
    method: &'a str,
    /// The tool or prompt name.
    target: Option<&'a str>,
    /// A resource request's URI.
    uri: Option<&'a str>,
    /// Named by the conventions (see [`TelemetrySeams::conventional_names`]).
    conventional: bool,
}

/// What a connection learnt that later spans carry.
#[derive(Default)]
struct Known {
    version: Option<String>,
    server_name: Option<String>,
}

/// The tracing of one connection: the tracer, the caller's context, what was learnt.
pub(crate) struct Tracing {
    tracer: BoxedTracer,
    /// The caller's remote context (from `connect`'s trace context), or none.
    parent: Context,
    known: Mutex<Known>,
    instruments: Instruments,
    started: Instant,
    closed: AtomicBool,
    seams: Seams,
}

/// The `_meta` key of the modern era's per-request protocol version.
const META_VERSION: &str = crate::era::meta::PROTOCOL_VERSION;

impl Tracing {
    pub(crate) fn new(caller: Option<&TraceContext>, seams: Seams) -> Self {
        let parent = caller
            .and_then(remote_context)
            .map(|remote| Context::new().with_remote_span_context(remote))
            .unwrap_or_default();
        Tracing {
            tracer: opentelemetry::global::tracer(super::SCOPE),
            parent,
            known: Mutex::new(Known::default()),
            instruments: Instruments::new(),
            started: Instant::now(),
            closed: AtomicBool::new(false),
            seams,
        }
    }

    fn known(&self) -> std::sync::MutexGuard<'_, Known> {
        self.known.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// Starts the span of a request of `method` with `params` (its id is set later).
    pub(crate) fn start(
        &self,
        method: &str,
        params: &Value,
        facts: impl FnOnce() -> Facts,
        note: Note,
        leaked: Vec<String>,
    ) -> RequestSpan {
        let conventional = self.seams.conventional_names();
        let text = |key: &str| params.get(key).and_then(Value::as_str);
        let target = match method {
            "tools/call" | "prompts/get" => text("name"),
            _ => None,
        };
        let name = match (conventional, target) {
            (false, _) => "mcp.request".to_owned(),
            (true, Some(target)) => format!("{method} {target}"),
            (true, None) => method.to_owned(),
        };
        let builder = self.tracer.span_builder(name).with_kind(SpanKind::Client);
        let mut span = self.tracer.build_with_context(builder, &self.parent);
        let modern_version = params
            .pointer(&format!("/_meta/{}", META_VERSION.replace('/', "~1")))
            .and_then(Value::as_str);
        let version = modern_version
            .map(str::to_owned)
            .or_else(|| self.known().version.clone());
        let recording = span.is_recording();
        // The connection's facts are read only for a span an SDK records.
        let facts = match recording {
            true => facts(),
            false => Facts::default(),
        };
        let mut metric = vec![KeyValue::new("mcp.method.name", method.to_owned())];
        if recording {
            metric.push(KeyValue::new("network.transport", facts.transport));
        }
        if let Some(version) = &version {
            metric.push(KeyValue::new("mcp.protocol.version", version.clone()));
        }
        // Nothing more is built for a span no SDK records (telemetry off: the common case).
        if recording {
            let era = match modern_version {
                Some(_) => "modern",
                None => "legacy",
            };
            let mut attributes = metric.clone();
            attributes.push(KeyValue::new("mcp_harness.era", era));
            let request = Request {
                method,
                target,
                uri: text("uri").filter(|_| method.starts_with("resources/")),
                conventional,
            };
            self.attributes(&mut attributes, request, facts, note, leaked);
            span.set_attributes(attributes);
            if let Some((of, why)) = note.retry_of {
                span.add_event(
                    "retry",
                    vec![
                        KeyValue::new("mcp_harness.retry.of", of.to_string()),
                        KeyValue::new("mcp_harness.retry.reason", why),
                    ],
                );
            }
            if let Some(round) = note.mrtr_round {
                span.add_event(
                    "mrtr.step",
                    vec![KeyValue::new(
                        "mcp_harness.mrtr.round",
                        i64::try_from(round).unwrap_or(i64::MAX),
                    )],
                );
            }
        }
        let client_capabilities = matches!(method, "initialize" | "server/discover")
            .then(|| capability_names(params))
            .flatten();
        RequestSpan {
            span,
            method: method.to_owned(),
            started: Instant::now(),
            metric,
            client_capabilities,
        }
    }

    /// The attributes of a recorded request span beyond those the duration metric carries.
    fn attributes(
        &self,
        attributes: &mut Vec<KeyValue>,
        request: Request<'_>,
        facts: Facts,
        note: Note,
        leaked: Vec<String>,
    ) {
        let conventional = request.conventional;
        let key = |good: &'static str, bad: &'static str| if conventional { good } else { bad };
        if let Some(server) = &self.known().server_name {
            attributes.push(KeyValue::new("mcp_harness.server.name", server.clone()));
        }
        match (request.method, request.target) {
            ("tools/call", Some(tool)) => {
                attributes.push(KeyValue::new(
                    key("gen_ai.tool.name", "mcp.tool.name"),
                    tool.to_owned(),
                ));
                attributes.push(KeyValue::new("gen_ai.operation.name", "execute_tool"));
            }
            ("prompts/get", Some(prompt)) => {
                attributes.push(KeyValue::new(
                    key("gen_ai.prompt.name", "mcp.prompt.name"),
                    prompt.to_owned(),
                ));
            }
            _ => {}
        }
        if let Some(uri) = request.uri {
            attributes.push(KeyValue::new(
                key("mcp.resource.uri", "resource.uri"),
                uri.to_owned(),
            ));
        }
        if let Some(id) = facts.session_id {
            attributes.push(KeyValue::new("mcp.session.id", id));
        }
        if let Some((host, port)) = facts.server {
            attributes.push(KeyValue::new("server.address", host));
            attributes.push(KeyValue::new("server.port", i64::from(port)));
        }
        if let Some(scopes) = facts.scopes {
            attributes.push(KeyValue::new("mcp_harness.auth.scopes", strings(scopes)));
        }
        if let Some(issuer) = facts.issuer {
            attributes.push(KeyValue::new("mcp_harness.auth.issuer", issuer));
        }
        if let Some(cache) = note.cache {
            attributes.push(KeyValue::new("mcp_harness.cache", cache));
        }
        for (i, value) in leaked.into_iter().enumerate() {
            attributes.push(KeyValue::new(
                format!("mcp_harness.debug.secret.{i}"),
                value,
            ));
        }
    }

    /// A result answered from the cache: no request was sent, so an INTERNAL span says so.
    pub(crate) fn cache_hit(&self, method: &str, params: &Value) {
        let target = match method {
            "tools/call" | "prompts/get" => params.get("name").and_then(Value::as_str),
            _ => None,
        };
        let name = match target {
            Some(target) => format!("{method} {target}"),
            None => method.to_owned(),
        };
        let builder = self
            .tracer
            .span_builder(name)
            .with_kind(SpanKind::Internal)
            .with_attributes([
                KeyValue::new("mcp.method.name", method.to_owned()),
                KeyValue::new("mcp_harness.cache", "hit"),
                KeyValue::new("mcp_harness.final_status", "ok"),
            ]);
        self.tracer.build_with_context(builder, &self.parent).end();
    }

    /// The connection is shut down: its duration is recorded, once.
    pub(crate) fn closed(&self) {
        if !self.closed.swap(true, Ordering::Relaxed) {
            let version = self.known().version.clone();
            let attributes: Vec<KeyValue> = version
                .map(|v| KeyValue::new("mcp.protocol.version", v))
                .into_iter()
                .collect();
            self.instruments
                .session(self.started.elapsed().as_secs_f64(), &attributes);
        }
    }
}

/// The span of one request in flight.
pub(crate) struct RequestSpan {
    span: BoxedSpan,
    method: String,
    started: Instant,
    /// The attributes the duration metric carries.
    metric: Vec<KeyValue>,
    /// The capability names the handshake declared (`initialize`, `server/discover`).
    client_capabilities: Option<Vec<String>>,
}

impl RequestSpan {
    /// The `traceparent` the request carries: its span's, when the span is recorded; `None`
    /// (the caller's context goes out as given) when no SDK records it.
    pub(crate) fn traceparent(&self, seams: &Seams) -> Option<String> {
        if !self.span.is_recording() {
            return None;
        }
        let context = seams.wire_context(self.span.span_context().clone());
        Some(format!(
            "00-{}-{}-{:02x}",
            context.trace_id(),
            context.span_id(),
            context.trace_flags().to_u8()
        ))
    }

    /// The id the request went out with.
    pub(crate) fn set_id(&mut self, id: i64, seams: &Seams) {
        self.span.set_attribute(KeyValue::new(
            "jsonrpc.request.id",
            seams.span_request_id(id),
        ));
    }

    /// The answer came: the result's kind, or the error.
    pub(crate) fn finish(mut self, outcome: &Result<Value, Error>, tracing: &Tracing) {
        let errors = tracing.seams.error_attributes();
        let error_type = match outcome {
            Ok(result) => {
                let kind = result
                    .get("resultType")
                    .and_then(Value::as_str)
                    .unwrap_or("complete");
                self.span
                    .set_attribute(KeyValue::new("mcp_harness.result.type", kind.to_owned()));
                self.handshake(result, tracing);
                match result.get("isError") == Some(&Value::Bool(true)) {
                    true => {
                        if errors {
                            self.span
                                .set_status(Status::error("the tool reported an error"));
                        }
                        Some("tool_error".to_owned())
                    }
                    false => None,
                }
            }
            Err(e) => {
                let code = e.code.map(|c| c.to_string());
                if let (Some(code), true) = (&code, errors) {
                    self.span
                        .set_attribute(KeyValue::new("rpc.response.status_code", code.clone()));
                }
                if errors {
                    self.span.set_status(Status::error(e.message.clone()));
                }
                Some(code.unwrap_or_else(|| e.kind.as_str().to_owned()))
            }
        };
        let status = match (&error_type, outcome) {
            (None, _) => "ok",
            (Some(_), Ok(_)) => "tool_error",
            (Some(_), Err(e)) => e.kind.as_str(),
        };
        self.end(error_type.filter(|_| errors), status, tracing);
    }

    /// The client stopped waiting: `why` is `timeout` or `cancelled`; `told` how the server
    /// was told.
    pub(crate) fn give_up(mut self, why: &'static str, told: &str, tracing: &Tracing) {
        let errors = tracing.seams.error_attributes();
        self.span.add_event(
            "cancelled",
            vec![
                KeyValue::new("mcp_harness.cancel.reason", why),
                KeyValue::new("mcp_harness.cancel.told", told.to_owned()),
            ],
        );
        if errors {
            self.span
                .set_status(Status::error(format!("the client stopped waiting ({why})")));
        }
        self.end(errors.then(|| why.to_owned()), why, tracing);
    }

    /// The request was dropped unanswered (its caller went away).
    pub(crate) fn abandon(self, tracing: &Tracing) {
        self.end(None, "abandoned", tracing);
    }

    fn end(mut self, error_type: Option<String>, status: &'static str, tracing: &Tracing) {
        if let Some(kind) = &error_type {
            self.span
                .set_attribute(KeyValue::new("error.type", kind.clone()));
            self.metric.push(KeyValue::new("error.type", kind.clone()));
        }
        self.span
            .set_attribute(KeyValue::new("mcp_harness.final_status", status));
        self.span.end();
        tracing
            .instruments
            .operation(self.started.elapsed().as_secs_f64(), &self.metric);
    }

    /// The handshake's answer: the version and server, and both sides' capabilities.
    fn handshake(&mut self, result: &Value, tracing: &Tracing) {
        if !matches!(self.method.as_str(), "initialize" | "server/discover") {
            return;
        }
        let version = result.get("protocolVersion").and_then(Value::as_str);
        let server = result.pointer("/serverInfo/name").and_then(Value::as_str);
        if let Some(version) = version {
            self.span
                .set_attribute(KeyValue::new("mcp.protocol.version", version.to_owned()));
        }
        if let Some(server) = server {
            self.span
                .set_attribute(KeyValue::new("mcp_harness.server.name", server.to_owned()));
        }
        {
            let mut known = tracing.known();
            if self.method == "initialize" {
                known.version = version.map(str::to_owned).or(known.version.take());
            }
            known.server_name = server.map(str::to_owned).or(known.server_name.take());
        }
        let mut attributes = Vec::new();
        if let Some(names) = self.client_capabilities.take() {
            attributes.push(KeyValue::new(
                "mcp_harness.client.capabilities",
                strings(names),
            ));
        }
        if let Some(names) = capability_names(result) {
            attributes.push(KeyValue::new(
                "mcp_harness.server.capabilities",
                strings(names),
            ));
        }
        self.span.add_event("capabilities", attributes);
    }
}

/// The span of a request re-issued under a new id (2026-07-28 over HTTP, after its response
/// stream broke): a CLIENT span of its own, a child of the first request's span, which the
/// transport starts and ends (the answer is the first request's).
pub(crate) struct ReissueSpan(BoxedSpan);

impl ReissueSpan {
    /// Starts the span of `message` (request `of` sent again as `wire`) and puts its context
    /// in the message's `_meta`, in the first request's trace; `None` when the first request
    /// carried no context of a recorded span.
    pub(crate) fn start(method: &str, of: i64, wire: i64, message: &mut Value) -> Option<Self> {
        let sent = message.pointer("/params/_meta/traceparent")?.as_str()?;
        let first = remote_context(&TraceContext {
            traceparent: sent.to_owned(),
            tracestate: None,
            baggage: None,
        })?;
        let tracer = opentelemetry::global::tracer(super::SCOPE);
        let target = match method {
            "tools/call" | "prompts/get" => message.pointer("/params/name").and_then(Value::as_str),
            _ => None,
        };
        let name = match target {
            Some(target) => format!("{method} {target}"),
            None => method.to_owned(),
        };
        let mut attributes = vec![
            KeyValue::new("mcp.method.name", method.to_owned()),
            KeyValue::new("jsonrpc.request.id", wire.to_string()),
            KeyValue::new("network.transport", "tcp"),
        ];
        if let Some(tool) = target.filter(|_| method == "tools/call") {
            attributes.push(KeyValue::new("gen_ai.tool.name", tool.to_owned()));
            attributes.push(KeyValue::new("gen_ai.operation.name", "execute_tool"));
        }
        let builder = tracer
            .span_builder(name)
            .with_kind(SpanKind::Client)
            .with_attributes(attributes);
        let parent = Context::new().with_remote_span_context(first);
        let mut span = tracer.build_with_context(builder, &parent);
        if !span.is_recording() {
            return None;
        }
        span.add_event(
            "reissue",
            vec![KeyValue::new("mcp_harness.reissue.of", of.to_string())],
        );
        let context = span.span_context();
        let own = format!(
            "00-{}-{}-{:02x}",
            context.trace_id(),
            context.span_id(),
            context.trace_flags().to_u8()
        );
        if let Some(meta) = message.pointer_mut("/params/_meta") {
            meta["traceparent"] = Value::String(own);
        }
        Some(ReissueSpan(span))
    }

    /// The re-issued POST is done: its answer was delivered, or it failed with `error`.
    pub(crate) fn end(mut self, error: Option<&Error>) {
        let status = match error {
            None => "ok",
            Some(e) => {
                self.0
                    .set_attribute(KeyValue::new("error.type", e.kind.as_str()));
                self.0.set_status(Status::error(e.message.clone()));
                e.kind.as_str()
            }
        };
        self.0
            .set_attribute(KeyValue::new("mcp_harness.final_status", status));
        self.0.end();
    }
}

/// The names of the `capabilities` object of `value` (or of its `_meta` client capabilities).
fn capability_names(value: &Value) -> Option<Vec<String>> {
    let object = value.get("capabilities").or_else(|| {
        value
            .get("_meta")?
            .get(crate::era::meta::CLIENT_CAPABILITIES)
    })?;
    Some(object.as_object()?.keys().cloned().collect())
}

fn strings(names: Vec<String>) -> Attr {
    Attr::Array(Array::String(
        names.into_iter().map(StringValue::from).collect(),
    ))
}

/// The caller's `traceparent` (and `tracestate`) as a remote span context; `None` when it
/// does not parse (it is still sent as given, see `trace.rs`).
fn remote_context(caller: &TraceContext) -> Option<SpanContext> {
    let mut parts = caller.traceparent.trim().split('-');
    let (version, trace, span, flags) =
        (parts.next()?, parts.next()?, parts.next()?, parts.next()?);
    if version.len() != 2 || trace.len() != 32 || span.len() != 16 || flags.len() != 2 {
        return None;
    }
    let trace = TraceId::from_hex(trace)
        .ok()
        .filter(|t| *t != TraceId::INVALID)?;
    let span = SpanId::from_hex(span)
        .ok()
        .filter(|s| *s != SpanId::INVALID)?;
    let flags = TraceFlags::new(u8::from_str_radix(flags, 16).ok()?);
    let state = caller
        .tracestate
        .as_deref()
        .and_then(|s| s.parse::<TraceState>().ok())
        .unwrap_or_default();
    Some(SpanContext::new(trace, span, flags, true, state))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_callers_traceparent_becomes_the_remote_parent() {
        let caller = TraceContext {
            traceparent: "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01".into(),
            tracestate: Some("congo=t61rcWkgMzE".into()),
            baggage: None,
        };
        let remote = remote_context(&caller).expect("parses");
        assert_eq!(
            remote.trace_id().to_string(),
            "0af7651916cd43dd8448eb211c80319c"
        );
        assert_eq!(remote.span_id().to_string(), "b7ad6b7169203331");
        assert!(remote.is_sampled() && remote.is_remote());
        for bad in [
            "",
            "00-xyz-b7ad6b7169203331-01",
            "00-00000000000000000000000000000000-b7ad6b7169203331-01",
        ] {
            let caller = TraceContext {
                traceparent: bad.into(),
                ..caller.clone()
            };
            assert!(remote_context(&caller).is_none(), "{bad}");
        }
    }

    #[test]
    fn without_an_sdk_no_span_is_recorded_and_nothing_changes_on_the_wire() {
        let tracing = Tracing::new(None, Seams::default());
        let span = tracing.start(
            "tools/call",
            &serde_json::json!({"name": "echo"}),
            || unreachable!("no facts are read for a span nobody records"),
            Note::default(),
            Vec::new(),
        );
        assert_eq!(span.traceparent(&Seams::default()), None);
    }
}
