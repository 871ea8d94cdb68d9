//! What the client adds to every request's `_meta` on the caller's behalf: the trace context
//! the caller hands it (W3C Trace Context and Baggage, under the keys 2026-07-28 reserves for
//! OpenTelemetry), and at 2026-07-28 the log level the caller set, which that revision carries
//! per request instead of in `logging/setLevel`.
//!
//! The trace context goes out in every revision: any revision lets a request carry `_meta`,
//! and the OpenTelemetry conventions for MCP use the same keys before 2026-07-28. When an
//! OpenTelemetry SDK records the request's span (`telemetry/`), `traceparent` is that span's
//! (in the caller's trace, when the caller gave one); otherwise it is the caller's as given.
//! `tracestate` and `baggage` always go out as given.

use std::sync::Mutex;

use serde_json::Value;

/// A W3C trace context to propagate: `traceparent`, and optionally `tracestate` and
/// `baggage`, each as its HTTP header value would be.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TraceContext {
    /// `version-traceid-parentid-flags`, lower-case hex.
    pub traceparent: String,
    /// The vendor list, sent unchanged when given.
    pub tracestate: Option<String>,
    /// The W3C Baggage list, sent unchanged when given.
    pub baggage: Option<String>,
}

impl TraceContext {
    /// The `_meta` members this context is sent as.
    fn members(&self) -> impl Iterator<Item = (&'static str, &String)> {
        [
            ("traceparent", Some(&self.traceparent)),
            ("tracestate", self.tracestate.as_ref()),
            ("baggage", self.baggage.as_ref()),
        ]
        .into_iter()
        .filter_map(|(key, value)| value.map(|v| (key, v)))
    }
}

/// `_meta` key of the per-request log level (2026-07-28).
pub(crate) const LOG_LEVEL: &str = "io.modelcontextprotocol/logLevel";

/// The members a session adds to each request's `_meta`.
#[derive(Default)]
pub(crate) struct RequestMeta {
    trace: Option<TraceContext>,
    log_level: Mutex<Option<String>>,
}

impl RequestMeta {
    pub(crate) fn new(trace: Option<TraceContext>) -> Self {
        RequestMeta {
            trace,
            log_level: Mutex::new(None),
        }
    }

    /// Keeps `level` for the `_meta` of every later request (2026-07-28).
    pub(crate) fn keep_log_level(&self, level: &str) {
        *self.log_level.lock().unwrap_or_else(|p| p.into_inner()) = Some(level.to_owned());
    }

    /// `params` with the members added beside any `_meta` already there (members the request
    /// already has are kept), `traceparent` being `own` (the request's span's) when given.
    /// Unchanged when there is nothing to add.
    pub(crate) fn add_to(&self, params: Value, own: Option<String>) -> Value {
        let level = self
            .log_level
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .clone();
        if self.trace.is_none() && level.is_none() && own.is_none() {
            return params;
        }
        let (mut params, mut meta) = crate::era::meta::split_meta(params);
        if let Some(own) = own {
            meta.entry("traceparent").or_insert(Value::String(own));
        }
        for (key, value) in self.trace.iter().flat_map(TraceContext::members) {
            meta.entry(key)
                .or_insert_with(|| Value::String(value.clone()));
        }
        if let Some(level) = level {
            meta.entry(LOG_LEVEL).or_insert(Value::String(level));
        }
        params.insert("_meta".into(), Value::Object(meta));
        Value::Object(params)
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn context() -> TraceContext {
        TraceContext {
            traceparent: "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01".into(),
            tracestate: Some("congo=t61rcWkgMzE".into()),
            baggage: None,
        }
    }

    #[test]
    fn the_context_goes_beside_the_existing_meta() {
        let meta = RequestMeta::new(Some(context()));
        let params = meta.add_to(json!({"name": "t", "_meta": {"progressToken": 1}}), None);
        assert_eq!(
            params,
            json!({"name": "t", "_meta": {
                "progressToken": 1,
                "traceparent": "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01",
                "tracestate": "congo=t61rcWkgMzE",
            }})
        );
        assert_eq!(
            meta.add_to(Value::Null, None)["_meta"]["tracestate"],
            "congo=t61rcWkgMzE"
        );
    }

    #[test]
    fn the_spans_traceparent_replaces_the_callers_and_the_rest_goes_as_given() {
        let own = "00-0af7651916cd43dd8448eb211c80319c-00f067aa0ba902b7-01".to_owned();
        let params = RequestMeta::new(Some(context())).add_to(json!({}), Some(own.clone()));
        assert_eq!(params["_meta"]["traceparent"], own);
        assert_eq!(params["_meta"]["tracestate"], "congo=t61rcWkgMzE");
        let alone = RequestMeta::default().add_to(json!({}), Some(own.clone()));
        assert_eq!(alone, json!({"_meta": {"traceparent": own}}));
    }

    #[test]
    fn nothing_is_added_without_a_context_or_a_level() {
        let meta = RequestMeta::default();
        assert_eq!(meta.add_to(Value::Null, None), Value::Null);
        meta.keep_log_level("warning");
        assert_eq!(meta.add_to(json!({}), None)["_meta"][LOG_LEVEL], "warning");
    }
}
