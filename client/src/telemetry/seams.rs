//! The seam of the client's telemetry (see `seams/`). Each default is the correct decision;
//! `defects/telemetry.rs` bends them.

use opentelemetry::trace::SpanContext;
use serde_json::Value;

use crate::session::Session;

/// The decisions of the telemetry.
pub(crate) trait TelemetrySeams {
    /// Whether the driver installs the exporter the environment asks for; correct: yes.
    fn exports(&self) -> bool {
        true
    }

    /// The `jsonrpc.request.id` of the request sent with `id`; correct: the id as a string.
    fn span_request_id(&self, id: i64) -> String {
        id.to_string()
    }

    /// Whether spans are named and attributed by the conventions; correct: yes.
    fn conventional_names(&self) -> bool {
        true
    }

    /// The context put in the request's `_meta`; correct: its span's.
    fn wire_context(&self, span: SpanContext) -> SpanContext {
        span
    }

    /// Whether an error sets `error.type`, `rpc.response.status_code` and the ERROR status;
    /// correct: yes.
    fn error_attributes(&self) -> bool {
        true
    }

    /// Values put in the span of a request with `params`; correct: none (never a secret).
    fn leaked(&self, _session: &Session, _params: &Value) -> Vec<String> {
        Vec::new()
    }
}

#[cfg(not(feature = "defects"))]
impl TelemetrySeams for crate::seams::Seams {}
