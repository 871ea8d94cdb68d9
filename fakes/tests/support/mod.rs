//! A deliberately small HTTP/1.1 client for driving the HTTP fake in tests: one request per
//! connection (`Connection: close`), written by hand over TCP or rustls, and a response
//! read until the server closes or a time limit passes. Hand-written so that the tests see
//! the bytes as sent, including cut bodies, split streams and dropped connections.
//! Each test file uses a different part of it.
#![allow(dead_code)]

pub mod trial;

use std::net::SocketAddr;
use std::pin::Pin;
use std::sync::Arc;
use std::time::Duration;

use rustls::pki_types::pem::PemObject;
use rustls::pki_types::{CertificateDer, ServerName};
use rustls::{ClientConfig, RootCertStore};
use tokio::io::{AsyncRead, AsyncReadExt, AsyncWrite, AsyncWriteExt};
use tokio::net::TcpStream;
use tokio_rustls::TlsConnector;

/// Either side of a connection.
pub trait Stream: AsyncRead + AsyncWrite + Send + Unpin {}
impl<T: AsyncRead + AsyncWrite + Send + Unpin> Stream for T {}

/// A rustls client config that trusts only the PEM given.
pub fn trusting(ca_pem: &str) -> Arc<ClientConfig> {
    let mut roots = RootCertStore::empty();
    for cert in CertificateDer::pem_slice_iter(ca_pem.as_bytes()) {
        roots
            .add(cert.expect("CA PEM parses"))
            .expect("CA is usable");
    }
    let provider = Arc::new(rustls::crypto::ring::default_provider());
    let config = ClientConfig::builder_with_provider(provider)
        .with_safe_default_protocol_versions()
        .expect("protocol versions")
        .with_root_certificates(roots)
        .with_no_client_auth();
    Arc::new(config)
}

/// Connects to `addr`, over TLS for the name `localhost` when `tls` is given.
pub async fn connect(
    addr: SocketAddr,
    tls: Option<&Arc<ClientConfig>>,
) -> std::io::Result<Pin<Box<dyn Stream>>> {
    let tcp = TcpStream::connect(addr).await?;
    match tls {
        None => Ok(Box::pin(tcp)),
        Some(config) => {
            let name = ServerName::try_from("localhost").expect("a valid name");
            let stream = TlsConnector::from(Arc::clone(config))
                .connect(name, tcp)
                .await?;
            Ok(Box::pin(stream))
        }
    }
}

/// A parsed response, with what the connection did after it.
#[derive(Debug)]
pub struct Reply {
    /// The status code (0 when nothing arrived).
    pub status: u16,
    /// The headers, names lower-cased.
    pub headers: Vec<(String, String)>,
    /// The body, de-chunked.
    pub body: Vec<u8>,
    /// How many reads brought bytes.
    pub reads: usize,
    /// Whether the server closed before the time limit.
    pub closed: bool,
}

impl Reply {
    /// The first header named `name` (lower-case).
    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers
            .iter()
            .find(|(n, _)| n == name)
            .map(|(_, v)| v.as_str())
    }

    /// The body as text.
    pub fn text(&self) -> String {
        String::from_utf8_lossy(&self.body).into_owned()
    }
}

/// Sends one request and reads the answer for at most `limit`.
pub async fn request(
    stream: &mut Pin<Box<dyn Stream>>,
    method: &str,
    path: &str,
    headers: &[(&str, &str)],
    body: &str,
    limit: Duration,
) -> Reply {
    let mut head = format!("{method} {path} HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n");
    for (name, value) in headers {
        head.push_str(&format!("{name}: {value}\r\n"));
    }
    if method == "POST" {
        head.push_str(&format!("Content-Length: {}\r\n", body.len()));
    }
    head.push_str("\r\n");
    head.push_str(body);
    stream
        .write_all(head.as_bytes())
        .await
        .expect("write request");
    stream.flush().await.expect("flush request");
    read_reply(stream, limit).await
}

async fn read_reply(stream: &mut Pin<Box<dyn Stream>>, limit: Duration) -> Reply {
    let mut raw = Vec::new();
    let mut reads = 0;
    let deadline = tokio::time::Instant::now() + limit;
    let mut buf = [0u8; 4096];
    let closed = loop {
        match tokio::time::timeout_at(deadline, stream.read(&mut buf)).await {
            Err(_) => break false,
            // A close without TLS close_notify, or a reset, still ends the reply.
            Ok(Ok(0) | Err(_)) => break true,
            Ok(Ok(n)) => {
                reads += 1;
                raw.extend_from_slice(&buf[..n]);
            }
        }
    };
    parse(&raw, reads, closed)
}

fn parse(raw: &[u8], reads: usize, closed: bool) -> Reply {
    let Some(split) = raw.windows(4).position(|w| w == b"\r\n\r\n") else {
        return Reply {
            status: 0,
            headers: Vec::new(),
            body: raw.to_vec(),
            reads,
            closed,
        };
    };
    let head = String::from_utf8_lossy(&raw[..split]).into_owned();
    let mut lines = head.split("\r\n");
    let status = lines
        .next()
        .and_then(|l| l.split(' ').nth(1))
        .and_then(|s| s.parse().ok())
        .unwrap_or(0);
    let headers: Vec<(String, String)> = lines
        .filter_map(|l| l.split_once(':'))
        .map(|(n, v)| (n.trim().to_ascii_lowercase(), v.trim().to_owned()))
        .collect();
    let rest = &raw[split + 4..];
    let chunked = headers
        .iter()
        .any(|(n, v)| n == "transfer-encoding" && v.contains("chunked"));
    let body = if chunked {
        dechunk(rest)
    } else {
        rest.to_vec()
    };
    Reply {
        status,
        headers,
        body,
        reads,
        closed,
    }
}

/// Decodes a chunked body, keeping whatever arrived of a body that was cut off.
fn dechunk(mut rest: &[u8]) -> Vec<u8> {
    let mut out = Vec::new();
    while let Some(eol) = rest.windows(2).position(|w| w == b"\r\n") {
        let size_text = String::from_utf8_lossy(&rest[..eol]);
        let Ok(size) = usize::from_str_radix(size_text.split(';').next().unwrap_or("").trim(), 16)
        else {
            break;
        };
        rest = &rest[eol + 2..];
        if size == 0 {
            break;
        }
        let take = size.min(rest.len());
        out.extend_from_slice(&rest[..take]);
        rest = &rest[take..];
        rest = rest.strip_prefix(b"\r\n").unwrap_or(rest);
    }
    out
}

/// The `data:` payloads of the `message` events in an SSE body, parsed as JSON.
pub fn sse_messages(body: &str) -> Vec<serde_json::Value> {
    body.split("\n\n")
        .filter(|event| event.lines().any(|l| l == "event: message"))
        .map(|event| {
            let data: Vec<&str> = event
                .lines()
                .filter_map(|l| l.strip_prefix("data: "))
                .collect();
            serde_json::from_str(&data.join("\n")).expect("event data is JSON")
        })
        .collect()
}
