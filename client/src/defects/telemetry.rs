//! Seam: the client's telemetry (`telemetry/`). Defects here: `no-spans`, `span-wrong-id`,
//! `span-misnamed`, `token-in-span`, `wire-context-not-span`, `span-no-error-type`.

use opentelemetry::trace::{SpanContext, SpanId};
use serde_json::Value;

use crate::seams::{Seams, TelemetryDefects};
use crate::session::Session;
use crate::telemetry::seams::TelemetrySeams;

impl TelemetryDefects {
    /// The names this seam accepts.
    pub(crate) const NAMES: [&'static str; 6] = [
        "no-spans",
        "span-wrong-id",
        "span-misnamed",
        "token-in-span",
        "wire-context-not-span",
        "span-no-error-type",
    ];

    /// Switches on `name`; false if it is not this seam's.
    pub(crate) fn enable(&mut self, name: &str) -> bool {
        match name {
            "no-spans" => self.no_spans = true,
            "span-wrong-id" => self.wrong_id = true,
            "span-misnamed" => self.misnamed = true,
            "token-in-span" => self.token_in_span = true,
            "wire-context-not-span" => self.wire_not_span = true,
            "span-no-error-type" => self.no_error_type = true,
            _ => return false,
        }
        true
    }
}

impl TelemetrySeams for Seams {
    fn exports(&self) -> bool {
        !self.0.telemetry.no_spans
    }

    fn span_request_id(&self, id: i64) -> String {
        match self.0.telemetry.wrong_id {
            true => (id + 1000).to_string(),
            false => id.to_string(),
        }
    }

    fn conventional_names(&self) -> bool {
        !self.0.telemetry.misnamed
    }

    fn wire_context(&self, span: SpanContext) -> SpanContext {
        if !self.0.telemetry.wire_not_span {
            return span;
        }
        // Another parent id in the same trace: what a client that made the span but sent
        // a context of its own would show.
        let bytes = span.span_id().to_bytes().map(|b| !b);
        SpanContext::new(
            span.trace_id(),
            SpanId::from_bytes(bytes),
            span.trace_flags(),
            span.is_remote(),
            span.trace_state().clone(),
        )
    }

    fn error_attributes(&self) -> bool {
        !self.0.telemetry.no_error_type
    }

    fn leaked(&self, session: &Session, params: &Value) -> Vec<String> {
        if !self.0.telemetry.token_in_span {
            return Vec::new();
        }
        let mut values: Vec<String> = session.transport().held_token().into_iter().collect();
        let answers = session.options().handlers.elicitation_contents();
        // A modern retry carries the caller's answers to input requests.
        let modern = params.get("inputResponses").into_iter();
        for value in answers.into_iter().chain(modern) {
            strings(value, &mut values);
        }
        values
    }
}

/// Every string and number in `value` (an answer's values), in order.
fn strings(value: &Value, out: &mut Vec<String>) {
    match value {
        Value::String(s) => out.push(s.clone()),
        Value::Number(n) => out.push(n.to_string()),
        Value::Array(items) => items.iter().for_each(|v| strings(v, out)),
        Value::Object(members) => members.values().for_each(|v| strings(v, out)),
        Value::Null | Value::Bool(_) => {}
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_name_switches_one_flag_and_none_is_another_seams() {
        for name in TelemetryDefects::NAMES {
            let mut d = TelemetryDefects::default();
            assert!(d.enable(name), "{name}");
            assert_ne!(d, TelemetryDefects::default(), "{name}");
            assert!(!crate::seams::Defects::NAMES.contains(&name), "{name}");
        }
    }

    #[test]
    fn the_wire_context_defect_keeps_the_trace_and_changes_the_parent() {
        let span = SpanContext::new(
            opentelemetry::trace::TraceId::from_hex("0af7651916cd43dd8448eb211c80319c").unwrap(),
            SpanId::from_hex("b7ad6b7169203331").unwrap(),
            opentelemetry::trace::TraceFlags::SAMPLED,
            false,
            Default::default(),
        );
        let bent = Seams::only("wire-context-not-span").wire_context(span.clone());
        assert_eq!(bent.trace_id(), span.trace_id());
        assert_ne!(bent.span_id(), span.span_id());
        assert_eq!(Seams::default().wire_context(span.clone()), span);
    }
}
