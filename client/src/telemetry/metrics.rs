//! The client's two histograms by the MCP conventions: `mcp.client.operation.duration` (one
//! point per request, when its answer or its end came) and `mcp.client.session.duration` (one
//! per connection, when it is shut down), both in seconds. With no SDK installed the
//! instruments are no-ops.

use opentelemetry::KeyValue;
use opentelemetry::metrics::Histogram;

/// The instruments of one connection.
pub(crate) struct Instruments {
    operation: Histogram<f64>,
    session: Histogram<f64>,
}

impl Instruments {
    pub(crate) fn new() -> Self {
        let meter = opentelemetry::global::meter(super::SCOPE);
        Instruments {
            operation: meter
                .f64_histogram("mcp.client.operation.duration")
                .with_unit("s")
                .with_description("The duration of one MCP request as the client saw it")
                .build(),
            session: meter
                .f64_histogram("mcp.client.session.duration")
                .with_unit("s")
                .with_description("The duration of one MCP connection")
                .build(),
        }
    }

    /// One request took `seconds`; `attributes` are its span's low-cardinality ones.
    pub(crate) fn operation(&self, seconds: f64, attributes: &[KeyValue]) {
        self.operation.record(seconds, attributes);
    }

    /// One connection lasted `seconds`.
    pub(crate) fn session(&self, seconds: f64, attributes: &[KeyValue]) {
        self.session.record(seconds, attributes);
    }
}
