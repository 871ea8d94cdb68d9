//! The Streamable HTTP transport (revisions 2025-03-26 and later): every message is its own
//! POST to one endpoint, and the answer to a request comes back as one JSON body or as an SSE
//! stream.
//!
//! Why it is shaped this way:
//! - **One queue, in order.** [`Transport::send`](super::Transport::send) is synchronous, so
//!   messages go through a queue served by one dispatcher task. Notifications and our answers
//!   to server requests are POSTed and their (202) reply awaited before the next message starts,
//!   so `notifications/initialized` reaches the server before any later request. Requests run
//!   as their own tasks, at once, so several can be in flight (each on a connection of its
//!   own, in whatever order they reach the server) and a slow one never holds up a
//!   `notifications/cancelled`. A message queued after requests waits until their answers
//!   begin (at most [`HEAD_START`] each), so that with a prompt server a notification never
//!   reaches it ahead of a request sent before it.
//! - **Flush is a queue item too.** `connect` queues [`Item::Flush`] after
//!   `notifications/initialized` and waits for it: the dispatcher answers it only once every
//!   message before it has gone out, so the notification's POST has been answered (bounded by
//!   the request timeout) and the handshake is complete on the server's side when `connect`
//!   returns.
//! - **The server stream has its own pool.** The standalone GET stream runs on a second
//!   `reqwest::Client` with a connection pool of its own (same TLS configuration), so the
//!   long-lived GET never takes the idle connection a POST was about to reuse. Opening it
//!   costs a connection and maybe a TLS handshake, so it lets running requests go first:
//!   `Shared::requests_done` waits until no request is running, at most [`HEAD_START`].
//! - **Abort is a queue item too.** When a waiter gives up (timeout or cancel), the session asks
//!   for an abort; because it travels through the same queue, it always finds the request's task
//!   and drops it (closing that HTTP exchange) before the `notifications/cancelled` queued after
//!   it is POSTed.
//! - **Sessions.** The `Mcp-Session-Id` of the `initialize` answer is sent on every later
//!   request (POST, GET, DELETE), and `MCP-Protocol-Version` once the version is negotiated.
//!   When a request that carried the session id gets 404, that request fails with
//!   `http_status` 404, the session id is forgotten, and the session is marked lost: the client
//!   then runs a fresh handshake (`initialize` without a session id, then
//!   `notifications/initialized`) before its next request. Requests already in flight are not
//!   retried.
//! - **Authorization.** Every request (POST, GET, DELETE) carries `Authorization: Bearer`:
//!   the caller's fixed token, or the OAuth client's (`crate::auth`), asked for before each
//!   send. With the OAuth client, a 401 or 403 answer is handed to it first
//!   ([`Shared::send_authorized`]): it may obtain a token (or a wider one) and have the same
//!   request built and sent again, at most once per cause, or fail it `auth_failed`. The
//!   standalone GET stream never starts a refresh or an authorization itself. The token goes
//!   to the MCP URL only (cross-origin redirects are refused, below), never into a URL.
//! - **Close.** Stop taking messages, let the queue drain (bounded by the grace period),
//!   drop the requests still running, `DELETE` the session (405 means the server does not allow
//!   it, which is fine), then stop the server stream. Idempotent.
//!
//! - **Old servers.** A first POST refused 400, 404 or 405 (without a modern JSON-RPC error
//!   body) leads to the GET that looks for a deprecated HTTP+SSE server (2024-11-05); when
//!   its stream opens with an `endpoint` event, every message goes to that URI from then on
//!   and the server's come on that stream (`legacy_sse`).
//!
//! The URL policy, TLS set-up and error classification live in `security`; the exchanges
//! themselves (POST replies, the standalone GET stream) in `exchange`.

mod exchange;
mod legacy_sse;
mod modern;
pub(crate) mod security;

use std::future::Future;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::Duration;

use reqwest::header::{self, HeaderMap, HeaderName, HeaderValue};
use reqwest::{RequestBuilder, Response, StatusCode, Url};
use serde_json::Value;
use tokio::sync::oneshot::error::TryRecvError;
use tokio::sync::{Notify, mpsc, oneshot};
use tokio::task::{AbortHandle, JoinHandle, JoinSet};
use tokio::time::Instant;

use crate::auth::{Budget, Decision, OAuth, Secret};
use crate::era::param_headers::ParamHeaders;
use crate::error::Error;
use crate::options::{ClientOptions, HttpOptions};
use crate::router::Router;
use crate::seams::Seams;
use crate::seams::wire::Wire;

const SESSION_ID: HeaderName = HeaderName::from_static("mcp-session-id");
const PROTOCOL_VERSION: HeaderName = HeaderName::from_static("mcp-protocol-version");

/// How long a message waits for an earlier request's answer to begin before it is POSTed.
const HEAD_START: Duration = Duration::from_millis(100);

/// Work for the dispatcher, in the order it must happen.
enum Item {
    /// A request of ours: POSTed in its own task, which delivers the answer.
    Request {
        id: i64,
        method: String,
        body: String,
        /// Modern era: the request-metadata headers (`Mcp-Method`, `Mcp-Name`).
        mirror: HeaderMap,
    },
    /// A notification or an answer to a server request: POSTed, the reply awaited.
    Message(String),
    /// Drop the task carrying request `id`.
    Abort(i64),
    /// (Re)open the standalone GET stream.
    Listen,
    /// Everything queued before has gone out: answer the sender.
    Flush(oneshot::Sender<()>),
}

/// What the dispatcher, the request tasks and the stream task share.
struct Shared {
    /// The POSTs and the DELETE.
    http: reqwest::Client,
    /// The standalone GET stream, on a connection pool of its own (see `security`).
    stream_http: reqwest::Client,
    url: Url,
    /// How requests are authorized (a fixed bearer token, or the OAuth client).
    auth: Authorization,
    /// Where a deliberate defect may bend this connection (see `seams/`).
    seams: Seams,
    request_timeout: Duration,
    /// The cap on a JSON body or an SSE event, in bytes.
    max_message_bytes: usize,
    router: Arc<Router>,
    session_id: Mutex<Option<HeaderValue>>,
    protocol_version: Mutex<Option<HeaderValue>>,
    session_lost: AtomicBool,
    /// Speaking the 2026-07-28 era (see [`HttpTransport::set_modern`]).
    modern: AtomicBool,
    /// The listed tools' `x-mcp-header` annotations (modern era).
    param_headers: ParamHeaders,
    /// The deprecated HTTP+SSE transport's POST URI, once the client fell back to it
    /// (see `legacy_sse`).
    sse_endpoint: Mutex<Option<Url>>,
    /// Whether a refused first POST may lead to the HTTP+SSE fallback (not for a
    /// modern-only client).
    sse_fallback: bool,
    /// Whether a POST was answered with success yet (only the first POST may fall back).
    answered: AtomicBool,
    /// The dispatcher's queue; `None` once closing.
    queue: Mutex<Option<mpsc::UnboundedSender<Item>>>,
    /// The standalone stream task (or the HTTP+SSE stream's reader), if one runs.
    listener: Mutex<Option<AbortHandle>>,
    /// Request tasks running (see [`Busy`]), and the signal that the count fell to zero.
    busy: AtomicUsize,
    idle: Notify,
}

/// How MCP requests are authorized.
enum Authorization {
    None,
    /// The caller's bearer token: `Bearer …`, marked sensitive.
    Static(HeaderValue),
    /// The OAuth client, which gives the bearer and judges 401 and 403 answers.
    OAuth(Box<OAuth>),
}

/// One running request task, counted in [`Shared::busy`] for as long as it lives (dropping an
/// aborted task drops it too).
pub(super) struct Busy(Arc<Shared>);

impl Busy {
    fn new(shared: &Arc<Shared>) -> Self {
        shared.busy.fetch_add(1, Ordering::AcqRel);
        Busy(Arc::clone(shared))
    }
}

impl Drop for Busy {
    fn drop(&mut self) {
        if self.0.busy.fetch_sub(1, Ordering::AcqRel) == 1 {
            self.0.idle.notify_waiters();
        }
    }
}

fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    // Every critical section is a plain read or write, so a poisoned lock is still consistent.
    m.lock().unwrap_or_else(|p| p.into_inner())
}

impl Shared {
    fn enqueue(&self, item: Item) -> Result<(), Error> {
        match lock(&self.queue).as_ref() {
            Some(tx) => tx
                .send(item)
                .map_err(|_| Error::closed("the connection is closed")),
            None => Err(Error::closed("the connection is closed")),
        }
    }

    /// Adds the session and version headers to a request (`initialize` gets neither); the
    /// authorization is added when it is sent ([`Shared::send_authorized`]).
    fn decorate(&self, mut request: RequestBuilder, initialize: bool) -> RequestBuilder {
        if initialize {
            return request;
        }
        if let Some(id) = lock(&self.session_id).clone() {
            request = request.header(SESSION_ID, id);
        }
        if let Some(version) = lock(&self.protocol_version).clone() {
            request = request.header(PROTOCOL_VERSION, version);
        }
        request
    }

    /// A POST of one JSON-RPC message.
    /// Over the HTTP+SSE transport it goes to the endpoint URI, with no Streamable HTTP
    /// header (that transport had neither sessions headers nor a version header).
    fn post(&self, body: String, initialize: bool) -> RequestBuilder {
        let sse = legacy_sse::post_url(self);
        let request = self
            .http
            .post(sse.clone().unwrap_or_else(|| self.url.clone()))
            .header(header::CONTENT_TYPE, "application/json")
            .header(header::ACCEPT, "application/json, text/event-stream")
            .body(body);
        match sse {
            Some(_) => request,
            None => self.decorate(request, initialize),
        }
    }

    /// Whether the client speaks the HTTP+SSE transport (it fell back to it).
    fn on_sse(&self) -> bool {
        lock(&self.sse_endpoint).is_some()
    }

    /// Sends the request `build` makes with the current authorization, and returns the answer
    /// with the session id the request carried. With the OAuth client, a 401 or 403 answer is
    /// handed to it first: it may obtain a token (or a wider one) and have the request built
    /// and sent again (see [`crate::auth`] for the limits), or fail it.
    async fn send_authorized(
        &self,
        build: &(dyn Fn() -> RequestBuilder + Sync),
        what: &str,
        mut budget: Budget,
    ) -> Result<(Response, Option<HeaderValue>), Error> {
        loop {
            let mut request = build();
            let (sent, token) = match &self.auth {
                Authorization::None => (None, None),
                Authorization::Static(value) => (Some(value.clone()), None),
                Authorization::OAuth(oauth) => match oauth.bearer(&budget).await {
                    Some(bearer) => (Some(bearer.header), Some(bearer.token)),
                    None => (None, None),
                },
            };
            // A DPoP-bound token goes with a fresh proof for this very request (RFC 9449 §7).
            let proved = match (&self.auth, &sent, &token) {
                (Authorization::OAuth(oauth), Some(header), Some(token)) => {
                    Some((&**oauth, header.clone(), token.clone()))
                }
                _ => None,
            };
            if let Some(value) = &sent {
                request = request.header(header::AUTHORIZATION, value.clone());
            }
            let (reply, session) = self.send(request, token.as_ref(), proved);
            let mut reply = reply.await.map_err(|e| security::send_error(&e, what))?;
            let location = reply.headers().get(header::LOCATION);
            let location = location.and_then(|l| l.to_str().ok());
            let status = reply.status().as_u16();
            if let Some(to) = sent.as_ref().and_then(|_| {
                self.seams
                    .auth_redirect_with_token(status, location, reply.url())
            }) {
                // Only under a defect: the request again, token and all, wherever it points.
                let mut again = build();
                if let Some(value) = &sent {
                    again = again.header(header::AUTHORIZATION, value.clone());
                }
                let (client, built) = again.build_split();
                let mut built = built.map_err(|e| security::send_error(&e, what))?;
                *built.url_mut() = to;
                reply = client
                    .execute(built)
                    .await
                    .map_err(|e| security::send_error(&e, what))?;
            }
            let Authorization::OAuth(oauth) = &self.auth else {
                return Ok((reply, session));
            };
            let status = reply.status().as_u16();
            match oauth
                .answer(status, reply.headers(), sent.as_ref(), &mut budget)
                .await
            {
                Decision::Pass => return Ok((reply, session)),
                Decision::Retry => continue,
                Decision::Fail(e) => return Err(e),
            }
        }
    }

    /// Sends `request` as built, through the seam on what is sent; also returns the session id
    /// it carried, if any. `token`: the access token it carries (for a defect's URL).
    fn send(
        &self,
        request: RequestBuilder,
        token: Option<&Secret>,
        proved: Option<(&OAuth, HeaderValue, Secret)>,
    ) -> (
        impl Future<Output = reqwest::Result<Response>> + use<>,
        Option<HeaderValue>,
    ) {
        // Executed by the client that made the builder (POST pool or stream pool).
        let (http, built) = request.build_split();
        let built = built.map(|mut request| {
            if let Some((oauth, header, token)) = &proved
                && let Some(proof) =
                    oauth.dpop_proof(request.method().as_str(), request.url(), header, token)
            {
                request
                    .headers_mut()
                    .insert(crate::auth::dpop::HEADER, proof);
            }
            self.seams.http_request(&mut request);
            if let Some(token) = token {
                self.seams
                    .auth_token_in_url(request.url_mut(), token.expose());
            }
            request
        });
        let session = built
            .as_ref()
            .ok()
            .and_then(|r| r.headers().get(SESSION_ID).cloned());
        (async move { http.execute(built?).await }, session)
    }

    /// Keeps the session id of an `initialize` answer (or forgets the old one if none came).
    fn keep_session_id(&self, headers: &HeaderMap) {
        *lock(&self.session_id) = headers.get(SESSION_ID).cloned();
    }

    /// Fails on a non-success status. A 404 to a request that carried the current session id
    /// means the server ended the session: forget it, and owe a new handshake.
    fn check_status(
        &self,
        status: StatusCode,
        sent_session: Option<&HeaderValue>,
        what: &str,
    ) -> Result<(), Error> {
        if status.is_success() {
            return Ok(());
        }
        let mut message = format!("the server answered HTTP {status} to {what}");
        if status == StatusCode::NOT_FOUND && sent_session.is_some() {
            let mut current = lock(&self.session_id);
            if current.as_ref() == sent_session {
                *current = None;
                self.session_lost.store(true, Ordering::Relaxed);
            }
            message.push_str(
                "; the session has ended, and a new one is started before the next request",
            );
        }
        Err(Error::http_status(status.as_u16(), message))
    }

    /// Forgets the session id and owes a new handshake before the next request.
    fn forget_session(&self) {
        lock(&self.session_id).take();
        self.session_lost.store(true, Ordering::Relaxed);
    }

    /// Waits, at most `limit`, until no request is running. Opening the standalone stream
    /// costs a connection and its TLS handshake; done while a request's answer is awaited, that
    /// work would delay the answer, so the stream lets requests already queued go first.
    async fn requests_done(&self, limit: Duration) {
        // Requests queued just after the stream's start get their turn to begin.
        tokio::task::yield_now().await;
        let deadline = Instant::now() + limit;
        loop {
            let idle = self.idle.notified();
            if self.busy.load(Ordering::Acquire) == 0 {
                return;
            }
            if tokio::time::timeout_at(deadline, idle).await.is_err() {
                return;
            }
        }
    }

    /// (Re)starts the standalone stream task, stopping any previous one.
    fn restart_listener(self: &Arc<Self>) {
        let task = tokio::spawn(exchange::listen(Arc::clone(self)));
        if let Some(old) = lock(&self.listener).replace(task.abort_handle()) {
            old.abort();
        }
    }

    fn stop_listener(&self) {
        if let Some(task) = lock(&self.listener).take() {
            task.abort();
        }
    }
}

/// A Streamable HTTP connection to one MCP endpoint.
pub(crate) struct HttpTransport {
    shared: Arc<Shared>,
    listen: bool,
    dispatcher: tokio::sync::Mutex<Option<JoinHandle<()>>>,
}

impl HttpTransport {
    /// Checks the URL, sets up TLS and starts the dispatcher. Nothing is sent yet: the first
    /// traffic is the `initialize` POST.
    pub(crate) fn connect(
        url: &str,
        http: &HttpOptions,
        options: &ClientOptions,
        router: Arc<Router>,
    ) -> Result<Self, Error> {
        let seams = options.seams();
        let url = seams.server_url(url, security::check_url)?;
        let (client, stream_client) = security::http_clients(&url, &http.ca_files, &seams)?;
        let auth = match (&http.auth, &http.bearer_token) {
            (Some(auth), _) => {
                let policy =
                    security::DestinationPolicy::new(&url, &http.local_origins).with_seams(seams);
                let net = crate::auth::Net {
                    client: security::auth_client(&http.ca_files, &seams, &policy)?,
                    policy,
                    seams,
                    timeout: options.request_timeout,
                    protocol_version: HeaderValue::from_str(&options.protocol_version)
                        .ok()
                        .filter(|_| seams.metadata_version_header()),
                };
                Authorization::OAuth(Box::new(OAuth::new(url.clone(), auth.clone(), net)?))
            }
            (None, Some(token)) => {
                let mut value = HeaderValue::try_from(format!("Bearer {}", token.secret()))
                    .map_err(|_| {
                        Error::closed("the bearer token holds characters not allowed in a header")
                    })?;
                value.set_sensitive(true);
                Authorization::Static(value)
            }
            (None, None) => Authorization::None,
        };
        let (tx, rx) = mpsc::unbounded_channel();
        let shared = Arc::new(Shared {
            http: client,
            stream_http: stream_client,
            url,
            auth,
            seams,
            request_timeout: options.request_timeout,
            max_message_bytes: options.max_message_bytes,
            router,
            session_id: Mutex::new(None),
            protocol_version: Mutex::new(None),
            session_lost: AtomicBool::new(false),
            modern: AtomicBool::new(options.era != crate::era::Era::Legacy),
            param_headers: ParamHeaders::default(),
            sse_endpoint: Mutex::new(None),
            sse_fallback: options.era != crate::era::Era::Modern,
            answered: AtomicBool::new(false),
            queue: Mutex::new(Some(tx)),
            listener: Mutex::new(None),
            busy: AtomicUsize::new(0),
            idle: Notify::new(),
        });
        let dispatcher = tokio::spawn(dispatch(Arc::clone(&shared), rx));
        Ok(HttpTransport {
            shared,
            listen: http.listen,
            dispatcher: tokio::sync::Mutex::new(Some(dispatcher)),
        })
    }

    pub(crate) fn send(&self, message: &Value) -> Result<(), Error> {
        let body = serde_json::to_string(message).unwrap_or_default();
        let method = message.get("method").and_then(Value::as_str);
        let item = match (method, message.get("id").and_then(Value::as_i64)) {
            (Some(method), Some(id)) => Item::Request {
                id,
                method: method.to_owned(),
                body,
                mirror: match self.is_modern() {
                    true => modern::mirrored_headers(
                        message,
                        &self.shared.param_headers,
                        &self.shared.seams,
                    ),
                    false => HeaderMap::new(),
                },
            },
            _ => Item::Message(body),
        };
        self.shared.enqueue(item)
    }

    pub(crate) fn abort(&self, id: i64) {
        // Once closing, every request task is being dropped anyway.
        let _ = self.shared.enqueue(Item::Abort(id));
    }

    pub(crate) fn set_protocol_version(&self, version: Option<&str>) {
        let value = version.and_then(|v| HeaderValue::from_str(v).ok());
        *lock(&self.shared.protocol_version) = value;
    }

    /// See [`Transport::set_modern`](super::Transport::set_modern).
    pub(crate) fn set_modern(&self, modern: bool) {
        self.shared.modern.store(modern, Ordering::Relaxed);
    }

    pub(crate) fn is_modern(&self) -> bool {
        self.shared.modern.load(Ordering::Relaxed)
    }

    /// See [`Transport::span_facts`](super::Transport::span_facts).
    pub(crate) fn span_facts(&self) -> crate::telemetry::spans::Facts {
        let url = &self.shared.url;
        let mut facts = crate::telemetry::spans::Facts {
            transport: "tcp",
            session_id: lock(&self.shared.session_id)
                .as_ref()
                .and_then(|v| v.to_str().ok())
                .map(str::to_owned),
            server: url
                .host_str()
                .zip(url.port_or_known_default())
                .map(|(host, port)| (host.to_owned(), port)),
            ..Default::default()
        };
        if let Authorization::OAuth(oauth) = &self.shared.auth
            && let Some(tokens) = oauth.held()
        {
            facts.scopes = Some(tokens.scopes);
            facts.issuer = tokens.issuer;
        }
        facts
    }

    /// See [`Transport::held_token`](super::Transport::held_token).
    #[cfg(feature = "defects")]
    pub(crate) fn held_token(&self) -> Option<String> {
        match &self.shared.auth {
            Authorization::OAuth(oauth) => oauth.held().map(|t| t.access.expose().to_owned()),
            Authorization::Static(value) => value
                .to_str()
                .ok()
                .map(|v| v.trim_start_matches("Bearer ").to_owned()),
            Authorization::None => None,
        }
    }

    /// See [`Transport::auth_context`](super::Transport::auth_context).
    pub(crate) fn auth_context(&self) -> Option<u64> {
        match &self.shared.auth {
            Authorization::OAuth(oauth) => oauth.generation(),
            Authorization::None | Authorization::Static(_) => None,
        }
    }

    /// See [`Transport::param_headers`](super::Transport::param_headers).
    pub(crate) fn param_headers(&self) -> Option<&ParamHeaders> {
        self.is_modern().then_some(&self.shared.param_headers)
    }

    /// See [`Transport::flush`](super::Transport::flush).
    pub(crate) async fn flush(&self) {
        let (done, flushed) = oneshot::channel();
        if self.shared.enqueue(Item::Flush(done)).is_ok() {
            // An error means the dispatcher is gone, so nothing is left to wait for.
            let _ = flushed.await;
        }
    }

    pub(crate) fn listen(&self) {
        // The modern era has no standalone GET stream.
        if !self.is_modern() {
            self.open_server_stream();
        }
    }

    pub(crate) fn open_server_stream(&self) {
        if self.listen {
            let _ = self.shared.enqueue(Item::Listen);
        }
    }

    pub(crate) fn take_session_lost(&self) -> bool {
        self.shared.session_lost.swap(false, Ordering::Relaxed)
    }

    pub(crate) async fn shutdown(&self, grace: Duration, seams: &Seams) {
        let Some(mut dispatcher) = self.dispatcher.lock().await.take() else {
            return;
        };
        lock(&self.shared.queue).take();
        // The dispatcher drains what is queued, then drops the running requests on exit.
        if tokio::time::timeout(grace, &mut dispatcher).await.is_err() {
            dispatcher.abort();
        }
        let has_session = lock(&self.shared.session_id).is_some();
        if seams.delete_on_close(has_session) {
            exchange::delete_session(&self.shared, grace).await;
        }
        lock(&self.shared.session_id).take();
        self.shared.stop_listener();
    }

    #[cfg(feature = "defects")]
    pub(crate) async fn abandon(&self) {
        if let Some(dispatcher) = self.dispatcher.lock().await.take() {
            lock(&self.shared.queue).take();
            dispatcher.abort();
            self.shared.stop_listener();
        }
    }
}

/// Serves the queue in order; see the module doc. Dropping the task set on exit aborts every
/// request still running.
async fn dispatch(shared: Arc<Shared>, mut rx: mpsc::UnboundedReceiver<Item>) {
    let mut running = JoinSet::new();
    let mut by_id: Vec<(i64, AbortHandle)> = Vec::new();
    let mut starting = HeadStarts::default();
    while let Some(item) = rx.recv().await {
        while running.try_join_next().is_some() {}
        by_id.retain(|(_, task)| !task.is_finished());
        starting.forget_begun();
        match item {
            Item::Request {
                id,
                method,
                body,
                mirror,
            } => {
                let (begun, answer_begins) = oneshot::channel();
                let busy = Busy::new(&shared);
                let task = exchange::request(busy, id, method, body, mirror, begun);
                by_id.push((id, running.spawn(task)));
                starting.push(answer_begins);
            }
            Item::Message(body) => {
                starting.wait().await;
                exchange::post_message(&shared, body).await;
            }
            Item::Abort(id) => by_id.retain(|(task_id, task)| {
                if *task_id == id {
                    task.abort();
                }
                *task_id != id
            }),
            // Over HTTP+SSE the one stream is already open, and carries everything.
            Item::Listen if shared.on_sse() => {}
            Item::Listen => {
                starting.wait().await;
                shared.restart_listener();
            }
            Item::Flush(done) => drop(done.send(())),
        }
    }
}

/// Requests whose answers have not begun yet, each with the end of its head start. Requests
/// do not wait for one another (several go out at once, on connections of their own); a
/// message queued after them waits for their answers to begin, so it never overtakes them.
#[derive(Default)]
struct HeadStarts(Vec<(Instant, oneshot::Receiver<()>)>);

impl HeadStarts {
    fn push(&mut self, answer_begins: oneshot::Receiver<()>) {
        self.0.push((Instant::now() + HEAD_START, answer_begins));
    }

    /// Drops the requests whose answers have begun (their task dropped the sender).
    fn forget_begun(&mut self) {
        self.0
            .retain_mut(|(_, begun)| matches!(begun.try_recv(), Err(TryRecvError::Empty)));
    }

    /// Waits until every earlier request's answer has begun or its head start is over.
    async fn wait(&mut self) {
        for (until, begun) in self.0.drain(..) {
            let _ = tokio::time::timeout_at(until, begun).await;
        }
    }
}
