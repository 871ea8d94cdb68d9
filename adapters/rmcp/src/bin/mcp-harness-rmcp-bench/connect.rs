//! Opens the benchmarked rmcp connection the way an rmcp application would: a child process
//! over stdio, or the streamable HTTP client on reqwest with rustls+ring and the run's CA.

use std::error::Error;
use std::process::Stdio;

use rmcp::model::ClientConfig;
use rmcp::service::{ClientInitializeError, RunningService};
use rmcp::transport::streamable_http_client::{
    StreamableHttpClientTransportConfig, StreamableHttpError,
};
use rmcp::transport::worker::WorkerQuitReason;
use rmcp::transport::{StreamableHttpClientTransport, TokioChildProcess};
use rmcp::{RoleClient, ServiceExt};

use crate::Target;

pub type Client = RunningService<RoleClient, ClientConfig>;

/// Starts the transport and runs rmcp's `initialize` handshake (`serve`).
pub async fn connect(target: &Target) -> Result<Client, String> {
    let info = ClientConfig::default();
    match target {
        Target::Stdio { argv } => {
            let (program, args) = argv
                .split_first()
                .ok_or("--server-command is an empty array")?;
            let mut command = tokio::process::Command::new(program);
            command.args(args);
            let (transport, _) = TokioChildProcess::builder(command)
                .stderr(Stdio::inherit())
                .spawn()
                .map_err(|e| format!("could not launch {program:?}: {e}"))?;
            info.serve(transport)
                .await
                .map_err(|e| format!("initialize over stdio failed: {}", chain(&e)))
        }
        Target::Http { url, ca_file } => {
            let client = http_client(ca_file.as_deref())?;
            let config = StreamableHttpClientTransportConfig::with_uri(url.as_str());
            let transport = StreamableHttpClientTransport::with_client(client, config);
            info.serve(transport)
                .await
                .map_err(|e| format!("initialize with {url} failed: {}", chain(&e)))
        }
    }
}

/// rustls with ring, the platform's roots plus the CA in `ca_file`; verification stays on.
fn http_client(ca_file: Option<&str>) -> Result<reqwest::Client, String> {
    // rmcp's reqwest is built without a crypto provider; only the first install wins.
    let _ = rustls::crypto::ring::default_provider().install_default();
    let mut builder = reqwest::Client::builder();
    if let Some(path) = ca_file {
        let pem = std::fs::read(path).map_err(|e| format!("cannot read --ca-file {path}: {e}"))?;
        let certs = reqwest::Certificate::from_pem_bundle(&pem)
            .map_err(|e| format!("--ca-file {path} holds no usable PEM: {e}"))?;
        builder = builder.tls_certs_merge(certs);
    }
    builder
        .build()
        .map_err(|e| format!("could not build the HTTP client: {}", chain(&e)))
}

/// An error and its causes on one line. Several rmcp errors keep their cause out of `source()`
/// (see `cause_of`); those links are followed by hand to reach e.g. "Connection refused".
pub fn chain(error: &(dyn Error + 'static)) -> String {
    let mut text = error.to_string();
    let mut next = cause_of(error);
    while let Some(cause) = next {
        let part = cause.to_string();
        if !text.contains(&part) {
            text.push_str(": ");
            text.push_str(&part);
        }
        next = cause_of(cause);
    }
    text
}

fn cause_of<'a>(error: &'a (dyn Error + 'static)) -> Option<&'a (dyn Error + 'static)> {
    if let Some(ClientInitializeError::TransportError { error, .. }) = error.downcast_ref() {
        return Some(error);
    }
    if let Some(WorkerQuitReason::<HttpError>::Fatal { error, .. }) = error.downcast_ref() {
        return Some(error);
    }
    if let Some(HttpError::Client(inner)) = error.downcast_ref() {
        return Some(inner);
    }
    error.source()
}

type HttpError = StreamableHttpError<reqwest::Error>;
