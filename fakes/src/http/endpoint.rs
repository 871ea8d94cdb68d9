//! Judging one HTTP request: which status it gets and why, decided before anything is
//! answered, so the `HttpRequest` record can carry the status and come first, followed by
//! the JSON-RPC messages the body held. The answer itself is carried out by the `reply` module.
//!
//! The order of checks: bearer token (401), path (404), method (405), Accept (406), body
//! (400), session (400 missing, 404 unknown or expired), protocol version (400).

use std::future::Future;
use std::sync::{Arc, Mutex, PoisonError};

use axum::Router;
use axum::body::{Body, Bytes};
use axum::extract::{Request, State};
use axum::http::request::Parts;
use axum::http::{HeaderMap, Method};
use axum::response::Response;
use axum::routing::any;
use mcp_harness_scenarios::model::{DeleteMode, GetMode, Scenario, ServerEra};
use mcp_harness_scenarios::transcript::Event;
use serde_json::Value;
use tokio::sync::Notify;

use super::headers::{self, SESSION};
use super::live::Live;
use super::reply::{self, Rejection, Verdict};
use super::session::Sessions;
use crate::batch::{self, INVALID_REQUEST};
use crate::jsonrpc::{self, Incoming, PARSE_ERROR};
use crate::modern::{self, Decision};
use crate::recorder::Recorder;
use crate::script;
use crate::stdio::keep_start;

/// The one MCP endpoint.
pub const MCP_PATH: &str = "/mcp";

/// The largest request body the fake reads.
const MAX_BODY: usize = 8 * 1024 * 1024;

/// How much of a body that is not JSON goes into the transcript.
const INVALID_BODY_KEEP: usize = 1024;

/// The state every request of one fake shares.
pub struct Fake {
    /// The scenario whose script is played.
    pub scenario: Arc<Scenario>,
    /// How often the script's rules with `times` have answered (across connections and
    /// sessions).
    pub tally: script::Tally,
    /// The tasks the fake created (across connections and sessions).
    pub tasks: crate::tasks::Store,
    /// Where the transcript goes.
    pub recorder: Recorder,
    /// The bearer token every request must carry, if any.
    pub token: Option<String>,
    /// The protocol revision played, if the case runs at several.
    pub revision: Option<String>,
    /// The sessions issued so far.
    pub sessions: Sessions,
    /// The version the last `initialize` answered with a result settled on (batches are
    /// accepted below 2025-06-18 only).
    pub negotiated: Mutex<Option<String>>,
    /// The port the fake listens on (for the `Location` of scripted redirects).
    pub port: u16,
    /// The streams it writes over time, and the rules' messages on them.
    pub live: Live,
    /// An authorization trial's authorization side (`server.auth`), if the case has one.
    pub auth: Option<super::auth::Auth>,
}

/// Written by hand so the bearer token can never reach a log through `{:?}`.
impl std::fmt::Debug for Fake {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Fake")
            .field("token", &self.token.as_ref().map(|_| "[redacted]"))
            .finish_non_exhaustive()
    }
}

/// The state of one connection's requests: the fake, and a way to drop the connection
/// without answering (a scripted crash).
#[derive(Debug, Clone)]
pub struct Conn {
    /// The fake.
    pub fake: Arc<Fake>,
    /// Notified to make the connection's task drop the connection at once.
    pub kill: Arc<Notify>,
}

/// The router: the MCP endpoint, and 404 everywhere else.
pub fn routes() -> Router<Conn> {
    Router::new()
        .route(MCP_PATH, any(on_endpoint))
        .route(super::legacy_sse::POST_PATH, any(on_legacy_post))
        .fallback(elsewhere)
}

async fn on_endpoint(State(conn): State<Conn>, request: Request) -> Response {
    handle(conn, request, true).await
}

/// The HTTP+SSE transport's POST URI: served only by a script with `http.legacy_sse`.
async fn on_legacy_post(State(conn): State<Conn>, request: Request) -> Response {
    match conn.fake.scenario.server.http.legacy_sse.is_some() {
        true => super::legacy_sse::post(conn, request).await,
        false => elsewhere(State(conn), request).await,
    }
}

async fn elsewhere(State(conn): State<Conn>, request: Request) -> Response {
    let (parts, body) = request.into_parts();
    if let Some(response) = super::paths::scripted(&conn.fake, &parts) {
        return response;
    }
    let request = Request::from_parts(parts, body);
    // An authorization trial's MCP origin also serves PRM and, for some cases, the
    // authorization server's paths.
    let request = match conn.fake.auth.is_some() {
        true => match super::auth::mcp_origin_request(&conn.fake, request).await {
            Ok(response) => return response,
            Err(request) => request,
        },
        false => request,
    };
    handle(conn, request, false).await
}

/// A POST body, as far as it could be read.
#[derive(Debug)]
enum Parsed {
    /// One JSON value that is not an array.
    Single(Value),
    /// A JSON array (a batch: see [`batch`]).
    Batch(Vec<Value>),
    /// Not JSON, or longer than the fake reads.
    Invalid { line: String, error: String },
    /// The body never arrived whole: the connection closed mid-body (a client killed at the
    /// deadline, or one that gave up). Nothing was sent that could be judged as a message,
    /// so nothing is recorded as received.
    Cut,
}

async fn handle(conn: Conn, request: Request, on_endpoint: bool) -> Response {
    let (parts, body) = request.into_parts();
    let parsed = match parts.method {
        Method::POST => Some(read_body(body).await),
        _ => None,
    };
    let fake = &conn.fake;
    // Labelled before judging, which counts the token's use.
    let auth_label = fake
        .auth
        .as_ref()
        .map(|a| a.authorization_label(&parts.headers));
    let proof_label = fake
        .auth
        .as_ref()
        .and_then(|a| a.proof_label(&parts.headers, parts.method.as_str()));
    let verdict = fake.judge(&parts, parsed.as_ref(), on_endpoint);
    // The client's responses to requests the fake sent, which rules may be waiting for.
    let messages: &[Value] = match &parsed {
        Some(Parsed::Single(message)) => std::slice::from_ref(message),
        Some(Parsed::Batch(messages)) => messages,
        _ => &[],
    };
    let responses: Vec<Value> = messages
        .iter()
        .filter(|m| jsonrpc::is_response(m))
        .cloned()
        .collect();
    // The same, whole, for the task engine (an answered input request).
    let answers: Vec<Value> = match fake.scenario.server.tasks.is_empty() {
        true => Vec::new(),
        false => messages
            .iter()
            .filter(|m| jsonrpc::is_response(m))
            .cloned()
            .collect(),
    };
    let mut recorded = headers::recorded(&parts.headers, fake.token.as_deref());
    if let Some(label) = auth_label {
        match label {
            Some(label) => recorded.insert("authorization".into(), label),
            None => recorded.remove("authorization"),
        };
    }
    if let Some(label) = proof_label {
        recorded.insert("dpop".into(), label);
    }
    let request = Event::HttpRequest {
        method: parts.method.as_str().to_owned(),
        path: parts.uri.path().to_owned(),
        headers: recorded,
        status: verdict.status(),
        origin: fake.auth.as_ref().map(|_| "mcp".to_owned()),
        endpoint: None,
        params: fake
            .auth
            .as_ref()
            .and_then(|a| a.labelled_query(parts.uri.query())),
    };
    // The request and what its body held, with no other request's records in between. A
    // request the protected resource challenged (401/403 of an authorization trial) was
    // refused before its body was read: its message was not received, and a client retrying
    // it after authorizing sends the same request again, not a second one with the same id.
    // A request to another path is answered 404 unread: its body is no MCP message (a
    // 2025-03-26 client's default `/register` after its discovery was refused, say).
    let challenged = matches!(verdict, Verdict::Challenge { .. });
    let body = match parsed {
        _ if challenged || !on_endpoint => Vec::new(),
        Some(Parsed::Single(message)) => vec![Event::Received { message }],
        Some(Parsed::Batch(messages)) => batch::received_records(&messages),
        Some(Parsed::Invalid { line, error }) => vec![Event::ReceivedInvalid { line, error }],
        Some(Parsed::Cut) | None => Vec::new(),
    };
    // A refusal decided before any script runs (a session, a header, a media type) is
    // recorded in the same piece: whatever else the fake records meanwhile comes before or
    // after both.
    let refusal = match &verdict {
        Verdict::Reject(rejection) => Some(Event::Sent {
            message: rejection.body(),
        }),
        _ => None,
    };
    // Buffered: the answer's first record written through (its `Sent`) takes them along,
    // and whatever is still buffered is written before this request waits for anything (a
    // delay, a hang) and before its response is handed over.
    fake.recorder
        .buffer_all(std::iter::once(request).chain(body).chain(refusal));
    if !responses.is_empty() {
        // Recorded first, so what a waiting rule sends next comes after them.
        fake.recorder.flush();
        for message in &answers {
            fake.tasks.arrived(&fake.scenario.server, message);
        }
        for response in &responses {
            fake.live.awaited.arrived(response);
        }
    }
    let recorder = &fake.recorder;
    let mut perform = std::pin::pin!(reply::perform(&conn, verdict));
    let response = std::future::poll_fn(|cx| {
        let polled = perform.as_mut().poll(cx);
        if polled.is_pending() {
            recorder.flush();
        }
        polled
    })
    .await;
    recorder.flush();
    response
}

async fn read_body(body: Body) -> Parsed {
    let bytes: Bytes = match axum::body::to_bytes(body, MAX_BODY).await {
        Ok(bytes) => bytes,
        Err(e) if exceeds_limit(&e) => {
            return Parsed::Invalid {
                line: String::new(),
                error: format!("the body is longer than the {MAX_BODY} bytes the fake reads"),
            };
        }
        Err(_) => return Parsed::Cut,
    };
    let parsed = std::str::from_utf8(&bytes)
        .map_err(|e| format!("invalid UTF-8: {e}"))
        .and_then(|text| serde_json::from_str::<Value>(text).map_err(|e| e.to_string()));
    match parsed {
        Ok(Value::Array(items)) => Parsed::Batch(items),
        Ok(message) => Parsed::Single(message),
        Err(error) => Parsed::Invalid {
            line: keep_start(&String::from_utf8_lossy(&bytes), INVALID_BODY_KEEP),
            error,
        },
    }
}

/// Whether reading a body failed on the fake's length limit (the client sent too much), as
/// opposed to the connection closing before the body was whole.
fn exceeds_limit(error: &axum::Error) -> bool {
    let mut cause: Option<&(dyn std::error::Error + 'static)> = Some(error);
    while let Some(e) = cause {
        if e.is::<http_body_util::LengthLimitError>() {
            return true;
        }
        cause = e.source();
    }
    false
}

/// The verdict playing `answer` to the request `message` (kept when the rule sends
/// messages, for their `$request` pointers).
fn answer_verdict(
    id: &Value,
    initialize: bool,
    answer: script::Answer,
    message: &Value,
) -> Verdict {
    let trigger = (!answer.sends.is_empty() || answer.listen.is_some()).then(|| message.clone());
    Verdict::Answer {
        id: id.clone(),
        initialize,
        answer: Box::new(answer),
        trigger,
    }
}

impl Fake {
    /// Decides the answer to a request without carrying it out.
    fn judge(&self, parts: &Parts, parsed: Option<&Parsed>, on_endpoint: bool) -> Verdict {
        let headers = &parts.headers;
        if let Some(token) = &self.token
            && !headers::bearer_matches(headers, token)
        {
            return Verdict::Unauthorized;
        }
        if let Some(auth) = &self.auth
            && on_endpoint
        {
            let message = match parsed {
                Some(Parsed::Single(message)) => Some(message),
                _ => None,
            };
            if let Some((status, header)) =
                auth.admit(&parts.headers, parts.method.as_str(), message)
            {
                // The nonce goes with the challenge that asks for it.
                let nonce = auth
                    .resource_nonce()
                    .filter(|_| header.contains("use_dpop_nonce"));
                return Verdict::Challenge {
                    status,
                    header,
                    nonce,
                };
            }
        }
        if !on_endpoint {
            return Verdict::Plain {
                status: 404,
                text: "Not Found: the MCP endpoint is /mcp",
                allow: None,
            };
        }
        if let Some(legacy) = &self.scenario.server.http.legacy_sse {
            return match super::legacy_sse::judge(legacy, &parts.method) {
                None => Verdict::LegacyStream,
                Some((status, text, allow)) => Verdict::Plain {
                    status,
                    text,
                    allow: Some(allow),
                },
            };
        }
        match (&parts.method, parsed) {
            (&Method::POST, Some(parsed)) => self.judge_post(headers, parsed),
            (&Method::GET, _) => self.judge_get(headers),
            (&Method::DELETE, _) => self.judge_delete(headers),
            _ => self.not_allowed(),
        }
    }

    fn judge_post(&self, headers: &HeaderMap, parsed: &Parsed) -> Verdict {
        // A POST's Content-Type is not refused: no revision of the specification sets it, so
        // a missing or other one only fails the profile's always-on check (PROF-ERA-2), never
        // the trial's later steps.
        if !headers::accepts_all(headers, &["application/json", "text/event-stream"]) {
            return Rejection::new(
                406,
                "Not Acceptable: Accept must list application/json and text/event-stream",
            )
            .into();
        }
        let message = match parsed {
            Parsed::Single(message) => message,
            Parsed::Batch(items) => return self.judge_batch(headers, items),
            Parsed::Invalid { .. } | Parsed::Cut => {
                return Rejection::coded(400, PARSE_ERROR, "Parse error").into();
            }
        };
        let incoming = jsonrpc::classify(message);
        if let Some(verdict) = self.judge_modern(headers, message, &incoming) {
            return verdict;
        }
        if let Incoming::Request {
            id,
            method: "initialize",
            params,
        } = incoming
        {
            let answer = script::choose_at(
                &self.scenario.server,
                &self.tally,
                self.revision.as_deref(),
                "initialize",
                params,
            );
            return answer_verdict(id, true, answer, message);
        }
        if let Err(refused) = self.admit(headers) {
            return refused.into();
        }
        match incoming {
            Incoming::Request { id, method, params } => {
                let version = self.negotiated().or_else(|| self.revision.clone());
                let script = &self.scenario.server;
                if let Some(answer) = self
                    .tasks
                    .legacy(script, version.as_deref(), method, params)
                {
                    return answer_verdict(id, false, answer, message);
                }
                let answer = script::choose_at(
                    &self.scenario.server,
                    &self.tally,
                    self.revision.as_deref(),
                    method,
                    params,
                );
                answer_verdict(id, false, answer, message)
            }
            // A script may answer a notification on purpose (a faulty server): 200, null id;
            // or send messages when it arrives.
            Incoming::Notification => self.judge_notification(message),
            Incoming::Other if jsonrpc::is_response(message) => Verdict::Accepted,
            Incoming::Other => Rejection::coded(
                400,
                INVALID_REQUEST,
                "Invalid Request: not a JSON-RPC request, notification or response",
            )
            .into(),
        }
    }

    /// A batch: refused as a whole where [`batch::refused`] says so (400), else admitted like
    /// any request after `initialize`, then 202 when it holds no request, else one batched
    /// answer.
    fn judge_batch(&self, headers: &HeaderMap, items: &[Value]) -> Verdict {
        let version = self.negotiated().or_else(|| self.revision.clone());
        if let Some(why) = batch::refused(items, self.scenario.server.era, version.as_deref()) {
            return Rejection::coded(400, INVALID_REQUEST, why).into();
        }
        if let Err(refused) = self.admit(headers) {
            return refused.into();
        }
        let revision = self.revision.as_deref();
        let planned = batch::plan(items, |method, params| {
            script::choose_at(&self.scenario.server, &self.tally, revision, method, params)
        });
        match planned.is_empty() {
            true => Verdict::Accepted,
            false => Verdict::Batch(planned),
        }
    }

    /// The version the last `initialize` answered with a result settled on.
    pub fn negotiated(&self) -> Option<String> {
        self.negotiated
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .clone()
    }

    /// Notes the version an `initialize` result settles on (`None` when it names none).
    pub fn settle(&self, result: &Value) {
        let version = result.get("protocolVersion").and_then(Value::as_str);
        *self
            .negotiated
            .lock()
            .unwrap_or_else(PoisonError::into_inner) = version.map(str::to_owned);
    }

    /// A modern fake's POSTs, and a dual fake's modern requests: no session, the `_meta`
    /// and header checks, built-in modern answers. `None` leaves the POST to the legacy rules.
    fn judge_modern(
        &self,
        headers: &HeaderMap,
        message: &Value,
        incoming: &Incoming<'_>,
    ) -> Option<Verdict> {
        let script = &self.scenario.server;
        let (id, method, params) = match *incoming {
            Incoming::Request { id, method, params } => (id, method, params),
            _ if script.era != ServerEra::Modern => return None,
            Incoming::Notification => return Some(self.judge_notification(message)),
            Incoming::Other if jsonrpc::is_response(message) => return Some(Verdict::Accepted),
            Incoming::Other => {
                return Some(
                    Rejection::coded(
                        400,
                        INVALID_REQUEST,
                        "Invalid Request: not a JSON-RPC request or notification",
                    )
                    .into(),
                );
            }
        };
        if !modern::is_modern(script, method, params) {
            return None;
        }
        let header = |name: &str| headers::single(headers, name).map(str::to_owned);
        let revision = self.revision.as_deref();
        Some(
            match modern::decide(
                script,
                &self.tally,
                &self.tasks,
                revision,
                method,
                params,
                Some(&header),
            ) {
                Decision::Answer(answer) => answer_verdict(id, false, *answer, message),
                Decision::Refuse(refusal) => Verdict::Refuse {
                    id: id.clone(),
                    status: refusal.status,
                    error: refusal.error,
                },
            },
        )
    }

    fn judge_get(&self, headers: &HeaderMap) -> Verdict {
        if self.scenario.server.era == ServerEra::Modern
            || self.scenario.server.http.get == GetMode::NotAllowed
        {
            return self.not_allowed();
        }
        if let Err(refused) = self.admit(headers) {
            return refused.into();
        }
        if !headers::accepts_all(headers, &["text/event-stream"]) {
            return Rejection::new(406, "Not Acceptable: Accept must list text/event-stream")
                .into();
        }
        Verdict::Stream {
            cut: self.scenario.server.http.get == GetMode::Cut,
            resume: headers::single(headers, "last-event-id").map(str::to_owned),
        }
    }

    /// A notification: accepted (202), unless a rule names its method: then its messages
    /// are sent, and a rule that does not hang answers it (a faulty server).
    fn judge_notification(&self, message: &Value) -> Verdict {
        let answer = jsonrpc::notification_method(message).and_then(|m| {
            script::choose_for_notification(&self.scenario.server, m, message.get("params"))
        });
        match answer {
            None => Verdict::Accepted,
            Some(answer) if answer.sends.is_empty() => Verdict::Answer {
                id: Value::Null,
                initialize: false,
                answer: Box::new(answer),
                trigger: None,
            },
            Some(answer) => Verdict::Notified {
                answer: Box::new(answer),
                trigger: message.clone(),
            },
        }
    }

    fn judge_delete(&self, headers: &HeaderMap) -> Verdict {
        let http = &self.scenario.server.http;
        let modern = self.scenario.server.era == ServerEra::Modern;
        if modern || http.delete == DeleteMode::NotAllowed || !http.sessions {
            return self.not_allowed();
        }
        if let Err(refused) = self.admit(headers) {
            return refused.into();
        }
        if let Some(id) = headers::single(headers, SESSION) {
            self.sessions.close(id);
        }
        Verdict::Plain {
            status: 200,
            text: "session ended",
            allow: None,
        }
    }

    /// The checks every request after `initialize` passes: its session (when the script
    /// has sessions), counted against expiry, and its protocol version header.
    fn admit(&self, headers: &HeaderMap) -> Result<(), Rejection> {
        if self.scenario.server.http.sessions {
            self.sessions
                .admit(headers::single(headers, SESSION))
                .map_err(|r| Rejection::coded(r.status(), r.code(), r.message()))?;
        }
        if !headers::version_acceptable_at(headers, self.revision.as_deref()) {
            return Err(Rejection::new(
                400,
                "Bad Request: Unsupported protocol version",
            ));
        }
        Ok(())
    }

    /// 405, listing the methods the script does serve.
    fn not_allowed(&self) -> Verdict {
        let http = &self.scenario.server.http;
        if self.scenario.server.era == ServerEra::Modern {
            // No GET stream and no sessions to delete in the modern era.
            return Verdict::Plain {
                status: 405,
                text: "Method Not Allowed",
                allow: Some("POST"),
            };
        }
        let allow = match (http.get, http.delete == DeleteMode::Allow && http.sessions) {
            (GetMode::Stream | GetMode::Cut, true) => "GET, POST, DELETE",
            (GetMode::Stream | GetMode::Cut, false) => "GET, POST",
            (GetMode::NotAllowed, true) => "POST, DELETE",
            (GetMode::NotAllowed, false) => "POST",
        };
        Verdict::Plain {
            status: 405,
            text: "Method Not Allowed",
            allow: Some(allow),
        }
    }
}
