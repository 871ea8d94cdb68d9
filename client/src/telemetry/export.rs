//! Installs the OpenTelemetry SDK with the OTLP/HTTP exporter, from the standard variables and
//! only when they ask for it, and shuts it down (flushing what is buffered) within a bound.
//!
//! Without `OTEL_EXPORTER_OTLP_ENDPOINT` (or the signal's own `..._TRACES_ENDPOINT` /
//! `..._METRICS_ENDPOINT`), or with `OTEL_SDK_DISABLED=true`, nothing is built: no exporter, no
//! thread, no HTTP client, so a driver run without telemetry starts as fast as before. The
//! exporter reads the endpoint, `OTEL_EXPORTER_OTLP_PROTOCOL` (`http/protobuf` by default, or
//! `http/json`), headers and timeout itself; the SDK reads the sampler, the batch delays and
//! `OTEL_SERVICE_NAME` (default here: `mcp-harness-client`).

use std::sync::mpsc;
use std::time::Duration;

use opentelemetry_otlp::{MetricExporter, SpanExporter};
use opentelemetry_sdk::Resource;
use opentelemetry_sdk::metrics::SdkMeterProvider;
use opentelemetry_sdk::trace::SdkTracerProvider;

/// The providers installed as the global ones; [`Installed::shutdown`] flushes them.
#[must_use = "shut it down before exiting, or buffered spans are lost"]
pub struct Installed {
    tracer: Option<SdkTracerProvider>,
    meter: Option<SdkMeterProvider>,
}

/// What the environment (read through `env`) asks for: traces, metrics.
fn wanted(env: &dyn Fn(&str) -> Option<String>) -> (bool, bool) {
    let set = |name: &str| env(name).is_some_and(|v| !v.trim().is_empty());
    let disabled = env("OTEL_SDK_DISABLED").is_some_and(|v| v.trim().eq_ignore_ascii_case("true"));
    let not_none = |name: &str| !env(name).is_some_and(|v| v.trim().eq_ignore_ascii_case("none"));
    let base = set("OTEL_EXPORTER_OTLP_ENDPOINT");
    let traces =
        (base || set("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT")) && not_none("OTEL_TRACES_EXPORTER");
    let metrics =
        (base || set("OTEL_EXPORTER_OTLP_METRICS_ENDPOINT")) && not_none("OTEL_METRICS_EXPORTER");
    (traces && !disabled, metrics && !disabled)
}

/// Installs the SDK as the global tracer and meter providers when the process environment
/// asks for it; `None` (nothing built) otherwise. A failure to build the exporter is said on
/// stderr and leaves telemetry off.
pub fn install_from_env() -> Option<Installed> {
    let (traces, metrics) = wanted(&|name| std::env::var(name).ok());
    if !traces && !metrics {
        return None;
    }
    // The exporter's reqwest client takes the process's default TLS provider; the tree's one
    // provider is ring (the client's own connections name it explicitly). Already installed
    // is fine.
    let _ = rustls::crypto::ring::default_provider().install_default();
    let mut resource = Resource::builder();
    if std::env::var_os("OTEL_SERVICE_NAME").is_none() {
        resource = resource.with_service_name(super::SCOPE);
    }
    let resource = resource.build();
    let tracer = traces
        .then(|| SpanExporter::builder().with_http().build())
        .and_then(|built| built.map_err(|e| warn("traces", &e)).ok())
        .map(|exporter| {
            SdkTracerProvider::builder()
                .with_batch_exporter(exporter)
                .with_resource(resource.clone())
                .build()
        });
    let meter = metrics
        .then(|| MetricExporter::builder().with_http().build())
        .and_then(|built| built.map_err(|e| warn("metrics", &e)).ok())
        .map(|exporter| {
            SdkMeterProvider::builder()
                .with_periodic_exporter(exporter)
                .with_resource(resource)
                .build()
        });
    if let Some(provider) = &tracer {
        opentelemetry::global::set_tracer_provider(provider.clone());
    }
    if let Some(provider) = &meter {
        opentelemetry::global::set_meter_provider(provider.clone());
    }
    Some(Installed { tracer, meter })
}

fn warn(signal: &str, error: &dyn std::fmt::Display) {
    eprintln!("mcp-harness-client: no OpenTelemetry {signal} export: {error}");
}

impl Installed {
    /// Flushes and shuts both providers down, waiting at most `bound` (a collector that does
    /// not answer must not hold the process); what is not out by then is lost.
    pub fn shutdown(self, bound: Duration) {
        let (done, finished) = mpsc::channel();
        let worker = std::thread::Builder::new()
            .name("otel-shutdown".into())
            .spawn(move || {
                if let Some(tracer) = self.tracer {
                    let _ = tracer.shutdown_with_timeout(bound);
                }
                if let Some(meter) = self.meter {
                    let _ = meter.shutdown_with_timeout(bound);
                }
                let _ = done.send(());
            });
        if worker.is_ok() && finished.recv_timeout(bound).is_err() {
            eprintln!(
                "mcp-harness-client: the OpenTelemetry export did not finish within {} ms",
                bound.as_millis()
            );
        }
    }
}

#[cfg(test)]
mod tests {
    use super::wanted;

    fn with(vars: &[(&str, &str)]) -> (bool, bool) {
        let vars: Vec<(String, String)> = vars
            .iter()
            .map(|(k, v)| ((*k).into(), (*v).into()))
            .collect();
        wanted(&move |name| vars.iter().find(|(k, _)| k == name).map(|(_, v)| v.clone()))
    }

    #[test]
    fn only_an_endpoint_turns_the_export_on() {
        assert_eq!(with(&[]), (false, false));
        assert_eq!(with(&[("OTEL_TRACES_EXPORTER", "otlp")]), (false, false));
        let base = ("OTEL_EXPORTER_OTLP_ENDPOINT", "http://127.0.0.1:4318");
        assert_eq!(with(&[base]), (true, true));
        assert_eq!(with(&[base, ("OTEL_SDK_DISABLED", "true")]), (false, false));
        assert_eq!(with(&[base, ("OTEL_SDK_DISABLED", "false")]), (true, true));
        assert_eq!(
            with(&[base, ("OTEL_METRICS_EXPORTER", "none")]),
            (true, false)
        );
        let traces = (
            "OTEL_EXPORTER_OTLP_TRACES_ENDPOINT",
            "http://127.0.0.1:1/v1/traces",
        );
        assert_eq!(with(&[traces]), (true, false));
    }
}
