//! `record --upstream URL`: a Streamable HTTP front on loopback, over TLS with a CA made for
//! this run, that forwards every request to the upstream MCP endpoint and streams each answer
//! back as it comes.
//!
//! Per request: the body is read whole (a POST is one message or a batch), forwarded with
//! its headers (not the hop-by-hop ones, nor `accept-encoding`: the answer must come
//! uncompressed to be recorded), and recorded once the upstream's status is known:
//! `http_request` (allow-listed, redacted headers) and the body's messages as `received`
//! (their `at_ms` is when the request arrived). An SSE answer is relayed event by event, each
//! complete event as soon as its blank line arrives, and each event's message recorded as
//! `sent` before it is relayed; a JSON answer is read whole, recorded, then relayed. When the
//! host drops a POST stream before its answer, `stream_closed` is recorded.

use std::collections::HashMap;
use std::io;
use std::net::{IpAddr, SocketAddr};
use std::path::PathBuf;
use std::sync::Arc;
use std::sync::atomic::AtomicBool;
use std::time::Duration;

use http_body_util::combinators::BoxBody;
use http_body_util::{BodyExt, Full, Limited, StreamBody};
use hyper::body::{Bytes, Incoming};
use hyper::{Request, Response, StatusCode};
use hyper_util::rt::TokioIo;
use mcp_harness_scenarios::transcript::Event;
use serde_json::Value;
use tokio::net::TcpListener;
use tokio::sync::mpsc;

use super::answer::{self, Stream};
use super::fault::{Fault, Faults, Kind};
use super::ledger::{ANSWER_WAIT, Ledger, NO_ANSWER_YET};
use super::note;
use super::redact::{self, Redactor};
use super::writer::Writer;

/// The largest request body forwarded.
const BODY_LIMIT: usize = 64 * 1024 * 1024;

/// How long a host gets to finish the TLS handshake.
const HANDSHAKE_TIMEOUT: Duration = Duration::from_secs(10);

/// Headers that belong to one connection, never forwarded (RFC 9110 §7.6.1), with `host`
/// and `content-length` (set again for the new hop) and `accept-encoding` (see the module
/// doc).
const NOT_FORWARDED: [&str; 11] = [
    "connection",
    "keep-alive",
    "proxy-connection",
    "transfer-encoding",
    "te",
    "trailer",
    "upgrade",
    "host",
    "content-length",
    "accept-encoding",
    "proxy-authenticate",
];

/// What `record --upstream URL` needs.
#[derive(Debug)]
pub struct HttpsOptions {
    /// The recording to write.
    pub out: PathBuf,
    /// The upstream MCP endpoint.
    pub upstream: String,
    /// Where the front listens (loopback only).
    pub listen: SocketAddr,
    /// Where to write the front's CA (PEM).
    pub ca_out: PathBuf,
    /// A CA to trust for an https upstream, besides the system's roots.
    pub upstream_ca: Option<PathBuf>,
    /// The faults to apply.
    pub faults: Faults,
}

/// Where the front is, once it listens.
#[derive(Debug, Clone)]
pub struct Front {
    /// The URL a host connects to.
    pub url: String,
    /// The CA file the host must trust.
    pub ca_file: PathBuf,
}

/// What every request of one recording shares.
pub(super) struct Ctx {
    pub writer: Writer,
    pub redactor: Redactor,
    pub faults: Faults,
    /// Requests waiting for their status, in arrival order.
    pub ledger: Ledger,
    upstream: reqwest::Url,
    http: reqwest::Client,
}

/// A response body to the host.
pub(super) type Body = BoxBody<Bytes, io::Error>;

/// Checks the upstream URL: https, or plain http on a loopback address only.
pub fn check_upstream(url: &str) -> Result<reqwest::Url, String> {
    let parsed =
        reqwest::Url::parse(url).map_err(|e| format!("--upstream {url:?} is not a URL: {e}"))?;
    let host = parsed.host_str().unwrap_or("");
    let loopback = host.eq_ignore_ascii_case("localhost")
        || host
            .trim_start_matches('[')
            .trim_end_matches(']')
            .parse::<IpAddr>()
            .is_ok_and(|ip| ip.is_loopback());
    match parsed.scheme() {
        "https" => Ok(parsed),
        "http" if loopback => Ok(parsed),
        "http" => Err(format!(
            "--upstream {url:?}: plain http is accepted on a loopback address only (127.0.0.0/8, ::1, localhost); use https for another host"
        )),
        other => Err(format!(
            "--upstream {url:?}: the scheme {other:?} is not http or https"
        )),
    }
}

/// Binds the front, writes its CA, and returns it with the future that serves until
/// SIGINT or SIGTERM.
pub async fn start(
    options: HttpsOptions,
) -> Result<(Front, impl std::future::Future<Output = ()>), String> {
    let upstream = check_upstream(&options.upstream)?;
    if !options.listen.ip().is_loopback() {
        return Err(format!(
            "--listen {}: the front listens on a loopback address only",
            options.listen
        ));
    }
    let pki = mcp_harness_fakes::tls::Pki::generate()?;
    let tls = pki
        .server_config(mcp_harness_scenarios::model::Endpoint::Trusted)
        .ok_or("no TLS configuration for the front")?;
    std::fs::write(&options.ca_out, pki.ca_pem())
        .map_err(|e| format!("cannot write the CA file {}: {e}", options.ca_out.display()))?;
    let http = upstream_client(&upstream, options.upstream_ca.as_deref())?;
    let listener = TcpListener::bind(options.listen)
        .await
        .map_err(|e| format!("cannot listen on {}: {e}", options.listen))?;
    let addr = listener
        .local_addr()
        .map_err(|e| format!("cannot read the front's address: {e}"))?;
    let host = match addr.ip() {
        IpAddr::V4(ip) if ip == std::net::Ipv4Addr::LOCALHOST => "localhost".to_owned(),
        IpAddr::V4(ip) => ip.to_string(),
        IpAddr::V6(ip) => format!("[{ip}]"),
    };
    let mut path = upstream.path().to_owned();
    if let Some(query) = upstream.query() {
        path.push('?');
        path.push_str(query);
    }
    let front = Front {
        url: format!("https://{host}:{}{path}", addr.port()),
        ca_file: options.ca_out.clone(),
    };
    let writer = Writer::create(&options.out)?;
    writer.write(Event::Started);
    let ctx = Arc::new(Ctx {
        writer,
        redactor: Redactor::default(),
        faults: options.faults,
        ledger: Ledger::default(),
        upstream,
        http,
    });
    let acceptor = tokio_rustls::TlsAcceptor::from(tls);
    let serve = async move {
        use tokio::signal::unix::{SignalKind, signal};
        let (Ok(mut term), Ok(mut int)) = (
            signal(SignalKind::terminate()),
            signal(SignalKind::interrupt()),
        ) else {
            note("cannot watch for SIGTERM/SIGINT");
            return;
        };
        let mut connections = tokio::task::JoinSet::new();
        loop {
            tokio::select! {
                _ = term.recv() => break,
                _ = int.recv() => break,
                accepted = listener.accept() => {
                    let Ok((tcp, _)) = accepted else {
                        tokio::time::sleep(Duration::from_millis(20)).await;
                        continue;
                    };
                    ctx.writer.write(Event::Connected);
                    connections.spawn(serve_connection(Arc::clone(&ctx), acceptor.clone(), tcp));
                }
                Some(_) = connections.join_next(), if !connections.is_empty() => {}
            }
        }
        connections.abort_all();
        ctx.ledger.flush(&ctx.writer);
        note("stopped; the recording is complete");
    };
    Ok((front, serve))
}

/// The client that forwards to the upstream: no redirects followed (the host sees them), no
/// proxy, HTTP/1.1, the system's roots plus `--upstream-ca`.
fn upstream_client(
    upstream: &reqwest::Url,
    ca: Option<&std::path::Path>,
) -> Result<reqwest::Client, String> {
    let provider = Arc::new(rustls::crypto::ring::default_provider());
    let mut roots = rustls::RootCertStore::empty();
    if upstream.scheme() == "https" {
        roots.add_parsable_certificates(rustls_native_certs::load_native_certs().certs);
    }
    if let Some(ca) = ca {
        use rustls::pki_types::pem::PemObject as _;
        let shown = ca.display();
        let certs = rustls::pki_types::CertificateDer::pem_file_iter(ca)
            .map_err(|e| format!("--upstream-ca {shown}: {e}"))?
            .collect::<Result<Vec<_>, _>>()
            .map_err(|e| format!("--upstream-ca {shown}: {e}"))?;
        if certs.is_empty() {
            return Err(format!("--upstream-ca {shown}: no PEM certificate in it"));
        }
        roots.add_parsable_certificates(certs);
    }
    let tls = rustls::ClientConfig::builder_with_provider(provider)
        .with_safe_default_protocol_versions()
        .map_err(|e| format!("cannot set up TLS: {e}"))?
        .with_root_certificates(roots)
        .with_no_client_auth();
    reqwest::Client::builder()
        .tls_backend_preconfigured(tls)
        .redirect(reqwest::redirect::Policy::none())
        .no_proxy()
        .build()
        .map_err(|e| format!("cannot set up the HTTP client: {e}"))
}

async fn serve_connection(
    ctx: Arc<Ctx>,
    acceptor: tokio_rustls::TlsAcceptor,
    tcp: tokio::net::TcpStream,
) {
    let Ok(Ok(tls)) = tokio::time::timeout(HANDSHAKE_TIMEOUT, acceptor.accept(tcp)).await else {
        return;
    };
    let service = hyper::service::service_fn(move |req| {
        let ctx = Arc::clone(&ctx);
        async move { Ok::<_, std::convert::Infallible>(handle(ctx, req).await) }
    });
    let _ = hyper::server::conn::http1::Builder::new()
        .serve_connection(TokioIo::new(tls), service)
        .await;
}

/// The requests in one body: id (as JSON text) → method and the cursor they carried.
pub(super) type Asked = HashMap<String, (String, Option<Value>)>;

/// Handles a request in a task of its own: a host that gives up on a request (it closes the
/// connection) must not stop the recorder from forwarding it, hearing its status and
/// recording it, as the upstream did see it.
/// `waiting` fails if the host goes away before its answer begins.
async fn handle(ctx: Arc<Ctx>, req: Request<Incoming>) -> Response<Body> {
    let (answered, waiting) = tokio::sync::oneshot::channel();
    let response = tokio::spawn(forward(ctx, req, waiting))
        .await
        .unwrap_or_else(|e| {
            plain(
                StatusCode::BAD_GATEWAY,
                &format!("the recorder failed: {e}"),
            )
        });
    let _ = answered.send(());
    response
}

async fn forward(
    ctx: Arc<Ctx>,
    req: Request<Incoming>,
    waiting: tokio::sync::oneshot::Receiver<()>,
) -> Response<Body> {
    let arrived = ctx.writer.now_ms();
    let (parts, body) = req.into_parts();
    let body = match Limited::new(body, BODY_LIMIT).collect().await {
        Ok(collected) => collected.to_bytes(),
        Err(e) => {
            return plain(
                StatusCode::BAD_REQUEST,
                &format!("cannot read the body: {e}"),
            );
        }
    };
    let headers: Vec<(&str, &str)> = parts
        .headers
        .iter()
        .filter_map(|(k, v)| v.to_str().ok().map(|v| (k.as_str(), v)))
        .collect();
    let recorded_headers = redact::headers(headers.iter().copied());
    let on_endpoint = parts.uri.path() == ctx.upstream.path();
    let (received, asked) = body_messages(&ctx, &body, on_endpoint);
    let method = parts.method.as_str().to_owned();
    let path = parts.uri.path().to_owned();
    // What faults of the request count by: its first message's method, else the verb.
    let key = received
        .iter()
        .find_map(|e| match e {
            Event::Received { message } => message.get("method").and_then(Value::as_str),
            _ => None,
        })
        .unwrap_or(&method)
        .to_owned();
    let mut events = vec![Event::HttpRequest {
        method: method.clone(),
        path: path.clone(),
        headers: recorded_headers,
        status: NO_ANSWER_YET,
        origin: None,
        endpoint: None,
        params: None,
    }];
    events.extend(received);
    let seq = ctx.ledger.arrive(arrived, events);
    let gone = Arc::new(AtomicBool::new(false));
    tokio::spawn(watch_host(
        Arc::clone(&ctx),
        seq,
        asked.keys().cloned().collect(),
        Arc::clone(&gone),
        waiting,
    ));
    let has_session = parts.headers.contains_key("mcp-session-id");
    if let Some((fault, status)) = request_fault(&ctx.faults, &key, has_session) {
        note(&format!("fault {} on {method} {key}", fault.spec));
        ctx.ledger
            .settle(
                &ctx.writer,
                seq,
                status.as_u16(),
                vec![Event::Fault {
                    spec: fault.spec.clone(),
                    id: asked
                        .keys()
                        .next()
                        .and_then(|id| serde_json::from_str(id).ok()),
                }],
            )
            .await;
        return plain(status, "");
    }
    let mut url = ctx.upstream.clone();
    url.set_path(parts.uri.path());
    url.set_query(parts.uri.query());
    let mut forward = ctx.http.request(parts.method.clone(), url);
    for (name, value) in &parts.headers {
        if !NOT_FORWARDED.contains(&name.as_str()) {
            forward = forward.header(name, value);
        }
    }
    let mut sent = std::pin::pin!(forward.body(body).send());
    let answered = tokio::select! {
        answered = &mut sent => answered,
        () = tokio::time::sleep(ANSWER_WAIT) => {
            ctx.ledger.give_up_waiting(&ctx.writer, seq);
            sent.await
        }
    };
    let answer = match answered {
        Ok(answer) => answer,
        Err(e) => {
            note(&format!("the upstream did not answer {method} {path}: {e}"));
            ctx.ledger.settle(&ctx.writer, seq, 502, Vec::new()).await;
            return plain(StatusCode::BAD_GATEWAY, "the upstream did not answer");
        }
    };
    let status = answer.status();
    ctx.ledger
        .settle(&ctx.writer, seq, status.as_u16(), Vec::new())
        .await;
    let mut response = Response::builder().status(status.as_u16());
    for (name, value) in answer.headers() {
        if !NOT_FORWARDED.contains(&name.as_str()) {
            response = response.header(name.as_str(), value.as_bytes());
        }
    }
    let is_sse = answer
        .headers()
        .get(reqwest::header::CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .is_some_and(|v| v.to_ascii_lowercase().starts_with("text/event-stream"));
    let body = if is_sse {
        let (tx, rx) = mpsc::channel(16);
        tokio::spawn(answer::pump_sse(
            Arc::clone(&ctx),
            answer,
            tx,
            Stream { seq, asked, gone },
        ));
        let frames = futures_util::stream::unfold(rx, |mut rx| async move {
            rx.recv().await.map(|item| (item, rx))
        });
        BodyExt::boxed(StreamBody::new(frames))
    } else {
        answer::json_answer(&ctx, answer, Stream { seq, asked, gone }, on_endpoint).await
    };
    response.body(body).unwrap_or_else(|e| {
        plain(
            StatusCode::BAD_GATEWAY,
            &format!("bad upstream answer: {e}"),
        )
    })
}

/// Records `stream_closed` for each request of `seq` if the host goes away before its answer
/// begins (a JSON answer, or an SSE stream's head, still awaited from the upstream).
async fn watch_host(
    ctx: Arc<Ctx>,
    seq: u64,
    ids: Vec<String>,
    gone: Arc<AtomicBool>,
    waiting: tokio::sync::oneshot::Receiver<()>,
) {
    if waiting.await.is_err() {
        answer::closed_by_host(&ctx, seq, &ids, &gone).await;
    }
}

/// The records of a request body, and the requests in it.
/// A body sent to another path than the endpoint is recorded only if it holds JSON-RPC (the
/// deprecated HTTP+SSE transport posts to a URI of its own); an authorization form or a
/// metadata document is no message.
fn body_messages(ctx: &Ctx, body: &[u8], on_endpoint: bool) -> (Vec<Event>, Asked) {
    let mut asked = Asked::new();
    if body.iter().all(u8::is_ascii_whitespace) {
        return (Vec::new(), asked);
    }
    let parsed: Value = match serde_json::from_slice(body) {
        Ok(v) if on_endpoint || is_jsonrpc(&v) => v,
        Ok(_) => return (Vec::new(), asked),
        Err(_) if !on_endpoint => return (Vec::new(), asked),
        Err(e) => {
            let line = redact::raw_line(&String::from_utf8_lossy(body));
            return (
                vec![Event::ReceivedInvalid {
                    line,
                    error: e.to_string(),
                }],
                asked,
            );
        }
    };
    let messages = match parsed {
        Value::Array(items) => items,
        one => vec![one],
    };
    let events = messages
        .into_iter()
        .map(|message| {
            super::note_request(&mut asked, &message);
            Event::Received {
                message: ctx.redactor.client(message),
            }
        })
        .collect();
    (events, asked)
}

/// Whether `v` is a JSON-RPC message or a batch of them.
pub(super) fn is_jsonrpc(v: &Value) -> bool {
    match v {
        Value::Array(items) => items.first().is_some_and(|i| i.get("jsonrpc").is_some()),
        one => one.get("jsonrpc").is_some(),
    }
}

/// A `status` or `session-loss` fault that answers this request instead of the upstream.
fn request_fault<'f>(
    faults: &'f Faults,
    key: &str,
    has_session: bool,
) -> Option<(&'f Fault, StatusCode)> {
    for fault in &faults.0 {
        let status = match fault.kind {
            Kind::Status(status) => StatusCode::from_u16(status).ok(),
            Kind::SessionLoss if has_session => Some(StatusCode::NOT_FOUND),
            _ => None,
        };
        if let Some(status) = status
            && fault.applies(key)
        {
            return Some((fault, status));
        }
    }
    None
}

fn plain(status: StatusCode, text: &str) -> Response<Body> {
    let mut response = Response::new(full(Bytes::from(text.to_owned())));
    *response.status_mut() = status;
    response
}

pub(super) fn full(bytes: Bytes) -> Body {
    Full::new(bytes).map_err(|never| match never {}).boxed()
}
