//! The Streamable HTTP fake: one MCP endpoint (`/mcp`) on `127.0.0.1`, over TLS with one of
//! the run's certificates or over plain HTTP, playing a scenario's script and recording a
//! transcript like the stdio fake.
//!
//! It runs inside the runner's process, on the runner's tokio runtime, many at once: a fake
//! is a listener task owning one task per connection. Handlers and response bodies run
//! inside their connection's task, so [`RunningHttpFake::stop`] ends everything a trial
//! left behind (hanging requests, open streams, half-done handshakes) by aborting those
//! tasks, without waiting on the client.
//!
//! | module | role |
//! |---|---|
//! | `endpoint` | judging a request (a batch too) and recording it with its messages, in one piece |
//! | `reply` | carrying out the judgement: statuses, scripted answers and faults |
//! | `sse` | event framing and paced bodies (split, cut, held open) |
//! | `session` | issued session ids, their expiry |
//! | `live` | streams written over time: rules' messages, the GET stream, resumption |
//! | `headers` | the recorded allow-list, bearer token, media types, version |
//! | `auth` | an authorization case's authorization server(s) and protected resource |
//! | `task_stream` | 2025-11-25 tasks: the `tasks/result` stream, status notifications |
//! | `legacy_sse` | the deprecated HTTP+SSE transport (2024-11-05): its stream and POST URI |

mod auth;
mod endpoint;
pub mod headers;
mod legacy_sse;
mod live;
mod paths;
mod reply;
mod session;
mod sse;
mod task_stream;

use std::io;
use std::net::{Ipv4Addr, SocketAddr};
use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

use hyper_util::rt::{TokioExecutor, TokioIo};
use hyper_util::server::conn::auto;
use hyper_util::service::TowerToHyperService;
use mcp_harness_scenarios::model::Scenario;
use mcp_harness_scenarios::transcript::Event;
use tokio::io::{AsyncRead, AsyncWrite};
use tokio::net::{TcpListener, TcpStream};
use tokio::sync::{Notify, oneshot};
use tokio::task::{JoinHandle, JoinSet};
use tokio_rustls::TlsAcceptor;

use crate::recorder::Recorder;
pub use endpoint::MCP_PATH;
use endpoint::{Conn, Fake};
pub use headers::{AUTH_INVALID, AUTH_VALID};
use session::Sessions;

/// How long a client gets to finish the TLS handshake before its connection is dropped.
const HANDSHAKE_TIMEOUT: Duration = Duration::from_secs(10);

/// Pause after a failed `accept` (for example when out of file descriptors), so the
/// listener does not spin.
const ACCEPT_BACKOFF: Duration = Duration::from_millis(20);

/// What a fake needs to start.
#[derive(Clone)]
pub struct HttpFakeConfig {
    /// The scenario whose `server` script the fake plays.
    pub scenario: Arc<Scenario>,
    /// The transcript file to append records to (created if needed).
    pub transcript: PathBuf,
    /// The TLS config to serve with ([`crate::tls::Pki::server_config`]); `None` for plain HTTP.
    pub tls: Option<Arc<rustls::ServerConfig>>,
    /// The bearer token every request must carry; `None` to require none.
    pub bearer_token: Option<String>,
    /// The protocol revision to play, for a case run at several revisions.
    pub revision: Option<String>,
    /// For a case with `server.auth`: the redirect URI the client is registered with (the
    /// runner's loopback listener). `None` plays no authorization side even if the case has
    /// one (the fakes' own tests).
    pub auth_redirect_uri: Option<String>,
}

/// Written by hand so the bearer token can never reach a log through `{:?}`.
impl std::fmt::Debug for HttpFakeConfig {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("HttpFakeConfig")
            .field("transcript", &self.transcript)
            .field("tls", &self.tls.is_some())
            .field(
                "bearer_token",
                &self.bearer_token.as_ref().map(|_| "[redacted]"),
            )
            .finish_non_exhaustive()
    }
}

/// A fake that is serving. Dropping it stops it too, but without waiting; prefer
/// [`RunningHttpFake::stop`].
#[derive(Debug)]
pub struct RunningHttpFake {
    /// The address it listens on: `127.0.0.1` and an ephemeral port, or the first listener
    /// handed to [`start_on_std`].
    pub addr: SocketAddr,
    stop: Option<oneshot::Sender<()>>,
    listener: JoinHandle<()>,
    /// The authorization side's listeners (their connections end with them).
    auth_listeners: Vec<JoinHandle<()>>,
    fake: Arc<Fake>,
}

/// Opens the transcript, binds `127.0.0.1:0`, records `Started` and starts serving.
/// Must be called within a tokio runtime with IO and time enabled.
pub async fn start(config: HttpFakeConfig) -> io::Result<RunningHttpFake> {
    let listener = TcpListener::bind((Ipv4Addr::LOCALHOST, 0)).await?;
    start_on(config, vec![listener], Vec::new()).await
}

/// [`start`] on listeners bound by the caller (the first one's address is the fake's), e.g.
/// inside a trial's network namespace, where the runner's threads cannot bind; `spare` are
/// listeners on `127.0.0.1:0` there for the authorization origins (bound here when too few).
pub async fn start_on_std(
    config: HttpFakeConfig,
    listeners: Vec<std::net::TcpListener>,
    spare: Vec<std::net::TcpListener>,
) -> io::Result<RunningHttpFake> {
    let tokio_listeners = |ls: Vec<std::net::TcpListener>| {
        ls.into_iter()
            .map(|l| {
                l.set_nonblocking(true)?;
                TcpListener::from_std(l)
            })
            .collect::<io::Result<Vec<_>>>()
    };
    start_on(config, tokio_listeners(listeners)?, tokio_listeners(spare)?).await
}

async fn start_on(
    config: HttpFakeConfig,
    listeners: Vec<TcpListener>,
    spare: Vec<TcpListener>,
) -> io::Result<RunningHttpFake> {
    let recorder = Recorder::open(&config.transcript)?;
    let addr = listeners
        .first()
        .ok_or_else(|| io::Error::other("no listener to serve on"))?
        .local_addr()?;
    let (auth, auth_bound) = match (&config.scenario.server.auth, &config.auth_redirect_uri) {
        (Some(script), Some(redirect)) => {
            let (auth, bound) = auth_side(script, redirect, addr.port(), spare).await?;
            (Some(auth), bound)
        }
        _ => (None, Vec::new()),
    };
    recorder.record(Event::Started);
    let expire_after = config.scenario.server.http.expire_session_after;
    let live = live::Live::new(
        &config.scenario.server.http,
        Duration::from_millis(config.scenario.timeout_ms),
    );
    // A script naming its own origin (an icon on the server's origin) gets it now it is bound.
    let scheme = if config.tls.is_some() {
        "https://localhost"
    } else {
        "http://127.0.0.1"
    };
    let scenario = match config
        .scenario
        .server
        .with_server_origin(&format!("{scheme}:{}", addr.port()))
    {
        Ok(server) if server != config.scenario.server => {
            let mut copy = (*config.scenario).clone();
            copy.server = server;
            Arc::new(copy)
        }
        _ => config.scenario,
    };
    let fake = Arc::new(Fake {
        scenario,
        tally: crate::script::Tally::default(),
        tasks: crate::tasks::Store::default(),
        recorder,
        token: config.bearer_token,
        revision: config.revision,
        sessions: Sessions::new(expire_after),
        negotiated: std::sync::Mutex::new(None),
        port: addr.port(),
        live,
        auth,
    });
    let tls = config.tls.map(TlsAcceptor::from);
    let auth_listeners = auth_bound
        .into_iter()
        .map(|(listener, role)| {
            let router = auth::router(Arc::clone(&fake), role);
            let tls = (role != auth::Role::AsHttp).then(|| tls.clone()).flatten();
            tokio::spawn(auth_accept_loop(listener, router, tls))
        })
        .collect();
    let (stop, stopped) = oneshot::channel();
    let listener = tokio::spawn(accept_loop(listeners, Arc::clone(&fake), tls, stopped));
    Ok(RunningHttpFake {
        addr,
        stop: Some(stop),
        listener,
        auth_listeners,
        fake,
    })
}

/// Binds the authorization side's listeners (loopback, ephemeral ports) and makes its state.
async fn auth_side(
    script: &mcp_harness_scenarios::model::auth::AuthScript,
    redirect: &str,
    mcp: u16,
    mut spare: Vec<TcpListener>,
) -> io::Result<(auth::Auth, Vec<(TcpListener, auth::Role)>)> {
    use mcp_harness_scenarios::model::auth::IssuerOrigin;
    let mut bound = Vec::new();
    let own = match script.issuer.origin {
        IssuerOrigin::Separate => {
            let l = bind_one(&mut spare).await?;
            let port = l.local_addr()?.port();
            bound.push((l, auth::Role::As));
            Some(port)
        }
        IssuerOrigin::Mcp => None,
    };
    let second = bind_one(&mut spare).await?;
    let as2 = second.local_addr()?.port();
    bound.push((second, auth::Role::As2));
    let plain = match script.metadata.plain_http_endpoints {
        true => {
            let l = bind_one(&mut spare).await?;
            let port = l.local_addr()?.port();
            bound.push((l, auth::Role::AsHttp));
            Some(port)
        }
        false => None,
    };
    let ports = auth::Ports {
        mcp,
        auth: own,
        as2,
        plain,
    };
    Ok((
        auth::Auth::new(script.clone(), redirect.to_owned(), ports),
        bound,
    ))
}

/// A listener on `127.0.0.1:0`: one of the caller's `spare` ones (bound in a trial's network
/// namespace), else a new one.
async fn bind_one(spare: &mut Vec<TcpListener>) -> io::Result<TcpListener> {
    match spare.pop() {
        Some(listener) => Ok(listener),
        None => TcpListener::bind((Ipv4Addr::LOCALHOST, 0)).await,
    }
}

/// Serves an authorization origin until aborted (at the fake's stop): its connections are
/// tasks of its own set, which aborting it drops.
async fn auth_accept_loop(listener: TcpListener, router: axum::Router, tls: Option<TlsAcceptor>) {
    let mut connections = JoinSet::new();
    let never = Arc::new(Notify::new());
    loop {
        tokio::select! {
            accepted = listener.accept() => match accepted {
                Ok((tcp, _peer)) => {
                    let service = TowerToHyperService::new(router.clone());
                    connections.spawn(connection(tcp, tls.clone(), service, Arc::clone(&never), false));
                }
                Err(_) => tokio::time::sleep(ACCEPT_BACKOFF).await,
            },
            Some(_) = connections.join_next(), if !connections.is_empty() => {}
        }
    }
}

impl RunningHttpFake {
    /// Stops accepting, aborts every connection (hanging requests and open streams too)
    /// and waits until they are gone. Every record is already on disk: the recorder writes
    /// each one through at once. Returns every secret the authorization side made or
    /// received (none without one), for the runner to redact.
    pub async fn stop(mut self) -> Vec<String> {
        if let Some(stop) = self.stop.take() {
            let _ = stop.send(());
        }
        let _ = (&mut self.listener).await;
        for task in self.auth_listeners.drain(..) {
            task.abort();
            let _ = task.await;
        }
        self.fake.live.stop();
        self.fake
            .auth
            .as_ref()
            .map(auth::Auth::secrets)
            .unwrap_or_default()
    }

    /// The variables an authorization trial's client is handed besides the redirect URI
    /// (pre-registered client, client metadata document URL, local origins); none otherwise.
    pub fn auth_vars(&self) -> Vec<(&'static str, String)> {
        self.fake
            .auth
            .as_ref()
            .map(auth::Auth::vars)
            .unwrap_or_default()
    }
}

impl Drop for RunningHttpFake {
    fn drop(&mut self) {
        // Aborting the listener task drops its set of connection tasks, which aborts them.
        self.listener.abort();
        for task in &self.auth_listeners {
            task.abort();
        }
        self.fake.live.stop();
    }
}

async fn accept_loop(
    listeners: Vec<TcpListener>,
    fake: Arc<Fake>,
    tls: Option<TlsAcceptor>,
    mut stopped: oneshot::Receiver<()>,
) {
    let routes = endpoint::routes();
    let mut connections = JoinSet::new();
    loop {
        tokio::select! {
            // A dropped sender also means stop.
            _ = &mut stopped => break,
            accepted = accept_any(&listeners) => match accepted {
                Ok((tcp, _peer)) => {
                    let conn = Conn { fake: Arc::clone(&fake), kill: Arc::new(Notify::new()) };
                    let service = TowerToHyperService::new(routes.clone().with_state(conn.clone()));
                    fake.recorder.record(Event::Connected);
                    let title_case = fake.scenario.server.http.title_case_headers;
                    connections.spawn(connection(tcp, tls.clone(), service, conn.kill, title_case));
                }
                Err(_) => tokio::time::sleep(ACCEPT_BACKOFF).await,
            },
            // Reap finished connections so the set does not grow with the trial.
            Some(_) = connections.join_next(), if !connections.is_empty() => {}
        }
    }
    drop(listeners);
    connections.shutdown().await;
}

/// The next connection on any of `listeners`.
async fn accept_any(listeners: &[TcpListener]) -> io::Result<(TcpStream, SocketAddr)> {
    std::future::poll_fn(|cx| {
        for listener in listeners {
            if let std::task::Poll::Ready(accepted) = listener.poll_accept(cx) {
                return std::task::Poll::Ready(accepted);
            }
        }
        std::task::Poll::Pending
    })
    .await
}

type Service = TowerToHyperService<axum::Router>;

/// Serves one connection until it ends or the script kills it. A failed or slow TLS
/// handshake just drops the connection (its `Connected` record shows the client tried).
/// `title_case`: write header names as `Mcp-Session-Id`, `Content-Type` (HTTP/1.1 keeps
/// whatever case a server writes; clients must compare names case-insensitively).
async fn connection(
    tcp: TcpStream,
    tls: Option<TlsAcceptor>,
    service: Service,
    kill: Arc<Notify>,
    title_case: bool,
) {
    // Small scripted pieces (split streams) must leave as written.
    let _ = tcp.set_nodelay(true);
    match tls {
        None => serve(tcp, service, &kill, title_case).await,
        Some(acceptor) => {
            if let Ok(Ok(stream)) =
                tokio::time::timeout(HANDSHAKE_TIMEOUT, acceptor.accept(tcp)).await
            {
                serve(stream, service, &kill, title_case).await;
            }
        }
    }
}

async fn serve<S>(stream: S, service: Service, kill: &Notify, title_case: bool)
where
    S: AsyncRead + AsyncWrite + Unpin + Send + 'static,
{
    let builder = auto::Builder::new(TokioExecutor::new()).title_case_headers(title_case);
    let served = builder.serve_connection(TokioIo::new(stream), service);
    tokio::select! {
        _ = served => {}
        // Dropping the connection future closes the socket without an answer.
        () = kill.notified() => {}
    }
}
