//! The OTLP receiver fake: a loopback OTLP/HTTP endpoint that takes a client's trace and
//! metric exports during a trial (CLIENTS.md § Traces) and hands them back normalised.
//!
//! It runs on a thread of its own with a current-thread tokio runtime and hyper's HTTP/1
//! server: a trial that asks for traces starts one in well under a millisecond, and nothing
//! of it is shared with the HTTPS fakes' runtime. Decoding uses the official protocol
//! definitions (`opentelemetry-proto`): prost for `application/x-protobuf`, their serde
//! form for OTLP/JSON.

pub mod export;
pub mod normalise;

use std::convert::Infallible;
use std::io;
use std::net::{Ipv4Addr, SocketAddr, TcpListener as StdListener};
use std::sync::{Arc, Mutex};
use std::thread::{self, JoinHandle};
use std::time::{Duration, Instant};

use http_body_util::{BodyExt as _, Full, Limited};
use hyper::body::{Bytes, Incoming};
use hyper::header::{CONTENT_ENCODING, CONTENT_TYPE};
use hyper::{Request, Response};
use hyper_util::rt::TokioIo;
use serde_json::Value;
use tokio::sync::oneshot;
use tokio::task::JoinSet;

use export::Head;

/// What a receiver collected.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Collected {
    /// Every span, normalised, in the order the exports were taken.
    pub spans: Vec<Value>,
    /// Every metric data point, normalised.
    pub metrics: Vec<Value>,
    /// The exports refused: method, path and reason, never the body.
    pub rejected: Vec<String>,
}

/// A running receiver; [`Receiver::finish`] stops it.
pub struct Receiver {
    addr: SocketAddr,
    collected: Arc<Mutex<Collected>>,
    stop: Option<oneshot::Sender<Duration>>,
    thread: Option<JoinHandle<()>>,
}

impl Receiver {
    /// Binds `127.0.0.1:0` and starts taking exports.
    pub fn start() -> io::Result<Receiver> {
        Receiver::on(StdListener::bind((Ipv4Addr::LOCALHOST, 0))?)
    }

    /// Takes exports on a listener the caller bound (a loopback one inside a trial's
    /// network namespace).
    pub fn on(listener: StdListener) -> io::Result<Receiver> {
        listener.set_nonblocking(true)?;
        let addr = listener.local_addr()?;
        // A second handle on the same socket: what is still in its backlog when the receiver
        // is told to stop is accepted from it without waiting for the runtime to notice.
        let backlog = listener.try_clone()?;
        let runtime = tokio::runtime::Builder::new_current_thread()
            .enable_io()
            .enable_time()
            .build()?;
        let collected = Arc::new(Mutex::new(Collected::default()));
        let (stop, stopped) = oneshot::channel();
        let thread = {
            let collected = Arc::clone(&collected);
            thread::Builder::new()
                .name("otlp-receiver".into())
                .spawn(move || {
                    runtime.block_on(serve(listener, backlog, collected, stopped));
                })?
        };
        Ok(Receiver {
            addr,
            collected,
            stop: Some(stop),
            thread: Some(thread),
        })
    }

    /// The base URL to hand a client as `OTEL_EXPORTER_OTLP_ENDPOINT`: `http://127.0.0.1:PORT`.
    pub fn endpoint(&self) -> String {
        format!("http://{}", self.addr)
    }

    /// The address it listens on.
    pub fn addr(&self) -> SocketAddr {
        self.addr
    }

    /// Stops taking exports and returns what was collected. Every connection already made
    /// (accepted or still in the backlog) is served to its end, for at most `grace`: a
    /// client that has exited has closed its connections, so this is quick unless a process
    /// of it lingers with one open.
    pub fn finish(mut self, grace: Duration) -> Collected {
        self.stop_within(grace);
        let collected = self.collected.lock().map(|c| c.clone());
        collected.unwrap_or_default()
    }

    fn stop_within(&mut self, grace: Duration) {
        if let Some(stop) = self.stop.take() {
            let _ = stop.send(grace);
        }
        if let Some(thread) = self.thread.take() {
            let _ = thread.join();
        }
    }
}

impl Drop for Receiver {
    fn drop(&mut self) {
        self.stop_within(Duration::ZERO);
    }
}

/// Accepts and serves connections until told to stop, then serves what was already
/// connected until every connection has ended or the grace has passed.
async fn serve(
    listener: StdListener,
    backlog: StdListener,
    collected: Arc<Mutex<Collected>>,
    mut stopped: oneshot::Receiver<Duration>,
) {
    let Ok(listener) = tokio::net::TcpListener::from_std(listener) else {
        return;
    };
    let mut conns = JoinSet::new();
    let serve_one = |conns: &mut JoinSet<()>, stream: tokio::net::TcpStream| {
        let collected = Arc::clone(&collected);
        conns.spawn(connection(stream, collected));
    };
    let deadline = loop {
        tokio::select! {
            accepted = listener.accept() => match accepted {
                Ok((stream, _)) => serve_one(&mut conns, stream),
                // Out of descriptors, say: wait a little rather than spin.
                Err(_) => tokio::time::sleep(Duration::from_millis(10)).await,
            },
            Some(_) = conns.join_next(), if !conns.is_empty() => {}
            grace = &mut stopped => {
                break Instant::now() + grace.unwrap_or_default();
            }
        }
    };
    // Connections the client made before it exited that the runtime has not seen yet.
    while let Ok((stream, _)) = backlog.accept() {
        if stream.set_nonblocking(true).is_ok()
            && let Ok(stream) = tokio::net::TcpStream::from_std(stream)
        {
            serve_one(&mut conns, stream);
        }
    }
    let until = tokio::time::Instant::from_std(deadline);
    while !conns.is_empty() {
        tokio::select! {
            _ = conns.join_next() => {}
            _ = tokio::time::sleep_until(until) => break,
        }
    }
    conns.abort_all();
}

/// One connection, HTTP/1.1 with keep-alive (what OTLP exporters use). Half-closed
/// connections are served: an export whose sender exited without waiting for the answer is
/// still taken.
async fn connection(stream: tokio::net::TcpStream, collected: Arc<Mutex<Collected>>) {
    let service = hyper::service::service_fn(move |req| {
        let collected = Arc::clone(&collected);
        async move { Ok::<_, Infallible>(answer(req, &collected).await) }
    });
    let _ = hyper::server::conn::http1::Builder::new()
        .half_close(true)
        .serve_connection(TokioIo::new(stream), service)
        .await;
}

async fn answer(req: Request<Incoming>, collected: &Mutex<Collected>) -> Response<Full<Bytes>> {
    let (parts, body) = req.into_parts();
    let header = |name| parts.headers.get(name).and_then(|v| v.to_str().ok());
    let head = Head {
        method: parts.method.as_str(),
        path: parts.uri.path(),
        content_type: header(CONTENT_TYPE),
        content_encoding: header(CONTENT_ENCODING),
    };
    let note = |rejected: String| {
        if let Ok(mut c) = collected.lock() {
            c.rejected.push(rejected);
        }
    };
    if let Some((answer, rejected)) = export::refuse_head(&head) {
        rejected.map(note);
        return respond(answer);
    }
    let body = match Limited::new(body, export::BODY_CAP).collect().await {
        Ok(body) => body.to_bytes(),
        Err(e) if e.is::<http_body_util::LengthLimitError>() => {
            let (answer, rejected) = export::too_large(&head);
            note(rejected);
            return respond(answer);
        }
        Err(_) => {
            note(format!(
                "{} {}: the body was cut short",
                head.method, head.path
            ));
            return respond(export::Answer {
                status: 400,
                content_type: "text/plain; charset=utf-8",
                body: b"the body was cut short".to_vec(),
            });
        }
    };
    let (answer, taken) = export::take(&head, &body);
    if let Ok(mut c) = collected.lock() {
        c.spans.extend(taken.spans);
        c.metrics.extend(taken.metrics);
        c.rejected.extend(taken.rejected);
    }
    respond(answer)
}

fn respond(answer: export::Answer) -> Response<Full<Bytes>> {
    let mut response = Response::new(Full::new(Bytes::from(answer.body)));
    *response.status_mut() =
        hyper::StatusCode::from_u16(answer.status).unwrap_or(hyper::StatusCode::BAD_REQUEST);
    if let Ok(value) = hyper::header::HeaderValue::from_str(answer.content_type) {
        response.headers_mut().insert(CONTENT_TYPE, value);
    }
    response
}
