//! The rules every trial is held to whatever its case: JSON-RPC base rules on everything the
//! client sent (each line or POST body one message, or before 2025-06-18 a batch of them),
//! and over HTTP the header rules on every request (media types on POSTs; the session id, the
//! protocol version and the bearer token on every request that must carry them).
//!
//! The protocol version a rule depends on is read from the transcript, as the fake saw it:
//! the version an `initialize` offered, then the one its result settled on (per server
//! process); before any `initialize`, the version the trial handed the client.

use std::collections::{BTreeMap, HashMap, HashSet};
use std::ops::Deref;

use serde_json::Value;

use mcp_harness_fakes::batch;
use mcp_harness_fakes::http::{AUTH_VALID, MCP_PATH};
use mcp_harness_scenarios::matcher;
use mcp_harness_scenarios::model::{ClientEra, Transport, era};
use mcp_harness_scenarios::transcript::{Event, Record};

use super::Checker;
use crate::conformance::trial::TrialRun;

/// What the client wrote as one unit: a stdio line or a POST body.
enum Unit<'a> {
    /// One JSON value that is not a batch.
    Single(&'a Value),
    /// A batch, with the protocol version in force when it was sent.
    Batch {
        items: Vec<&'a Value>,
        version: String,
    },
    /// Not JSON.
    Invalid { line: &'a str, error: &'a str },
}

/// The protocol version in force per server process, as the transcript tells it (the schema
/// check reads it too).
pub(super) struct Versions {
    fallback: String,
    by_pid: HashMap<u32, String>,
    /// The `initialize` request still waiting for its result, per server process.
    initializing: HashMap<u32, Value>,
}

impl Versions {
    pub(super) fn new(fallback: String) -> Versions {
        Versions {
            fallback,
            by_pid: HashMap::new(),
            initializing: HashMap::new(),
        }
    }

    /// Follows one record: an `initialize` puts its offered version in force, its result the
    /// version the server settled on.
    pub(super) fn follow(&mut self, r: &Record) {
        match &r.event {
            Event::Received { message } => self.offered(r.pid, message),
            Event::Sent { message } => {
                if let Some(settled) = self.settled(r.pid, message) {
                    self.by_pid.insert(r.pid, settled);
                }
            }
            _ => {}
        }
    }

    /// Puts the version an `initialize` offers in force, if `message` is one.
    fn offered(&mut self, pid: u32, message: &Value) {
        if !is_initialize(message) {
            return;
        }
        if let Some(offered) = message
            .pointer("/params/protocolVersion")
            .and_then(Value::as_str)
        {
            self.by_pid.insert(pid, offered.to_owned());
        }
        if let Some(id) = message.get("id") {
            self.initializing.insert(pid, id.clone());
        }
    }

    /// The version an `initialize` result settles on, if `message` is the result awaited.
    fn settled(&mut self, pid: u32, message: &Value) -> Option<String> {
        let awaited = self.initializing.get(&pid)?;
        if message.get("id") != Some(awaited) || message.get("method").is_some() {
            return None;
        }
        self.initializing.remove(&pid);
        let version = message.pointer("/result/protocolVersion")?.as_str()?;
        Some(version.to_owned())
    }

    /// The version in force for what process `pid` receives next (a modern request names
    /// its own in `_meta`).
    pub(super) fn at(&self, pid: u32, first: Option<&Value>) -> String {
        let meta = first.and_then(|m| era::meta_version(m.get("params")));
        match (self.by_pid.get(&pid), meta) {
            (_, Some(modern)) => modern.to_owned(),
            (Some(version), None) => version.clone(),
            (None, None) => self.fallback.clone(),
        }
    }
}

/// Everything the client wrote to its servers, unit by unit, in order.
fn units<'a>(records: &'a [Record], fallback: String) -> Vec<Unit<'a>> {
    let mut versions = Versions::new(fallback);
    let mut out = Vec::new();
    let mut i = 0;
    while i < records.len() {
        let r = &records[i];
        i += 1;
        if let Some(size) = batch::received_size(&r.event) {
            // The fake records a batch's messages right after its note, in one piece.
            let mut items = Vec::new();
            while items.len() < size
                && let Some(Record {
                    event: Event::Received { message },
                    ..
                }) = records.get(i)
            {
                items.push(message);
                i += 1;
            }
            let version = versions.at(r.pid, items.first().copied());
            for item in &items {
                versions.offered(r.pid, item);
            }
            out.push(Unit::Batch { items, version });
            continue;
        }
        versions.follow(r);
        match &r.event {
            Event::Received { message } => out.push(Unit::Single(message)),
            Event::ReceivedInvalid { line, error } => out.push(Unit::Invalid { line, error }),
            _ => {}
        }
    }
    out
}

pub(super) fn base_rules(c: &mut Checker<'_>, run: &TrialRun) {
    let records: &[Record] = run.records.as_deref().unwrap_or_default();
    let units = units(records, c.case.versions().protocol);
    // stdio: nothing but valid messages on the server's stdin; HTTP: one message per POST.
    let one_message_id = match c.transport {
        Transport::Stdio => "STDIO-02",
        Transport::Https => "HTTP-01",
    };
    c.cite_on(
        "every line or POST body the client sent is one JSON-RPC 2.0 message (before 2025-06-18, or a batch of them)", one_message_id,
        !units.is_empty(),
        units.iter().find_map(unit_problem).map_or(Ok(()), Err));
    // Made only in trials where the client sent a batch: a client that never batches has
    // nothing to be judged on here (tests/rules.rs shows the check failing).
    let batched = units.iter().any(|u| matches!(u, Unit::Batch { .. }));
    let batched_initialize = units.iter().find_map(|u| match u {
        Unit::Batch { items, .. } => items.iter().find(|m| is_initialize(m)),
        _ => None,
    });
    if batched {
        c.cite(
            "initialize is never part of a JSON-RPC batch",
            "JSON-10",
            batched_initialize.map_or(Ok(()), |m| {
                Err((
                    "initialize sent as a message of its own".into(),
                    format!("a batch holding {}", matcher::short(m)),
                ))
            }),
        );
    }
    let mut bad_id: Option<String> = None;
    let mut reused: Option<(String, bool)> = None;
    // A session is one server process (stdio) and, within it, what follows an `initialize`
    // (over HTTP a 404 makes the client start a new session, which may count from 1 again).
    let mut seen: HashSet<(u32, usize, String)> = HashSet::new();
    let mut sessions: HashMap<u32, usize> = HashMap::new();
    // What the id rules had to judge: requests (an id can be reused only by a second one).
    let mut requests = 0;
    // Whether the client spoke 2026-07-28 (a modern request, and never an `initialize`).
    let (mut spoke_modern, mut initialized) = (false, false);
    // The modern era has no sessions: an id only must not be one still outstanding.
    let mut outstanding: HashSet<(u32, String)> = HashSet::new();
    // Over HTTP a request whose POST was refused with an error status is over at once: that
    // exchange ended, and nothing can answer it any more (a client falling back to HTTP+SSE
    // sends it again, to the endpoint URI). The fake records each request before its body.
    let mut refused = false;
    for r in records {
        let message = match &r.event {
            Event::HttpRequest { status, .. } => {
                refused = (400..600).contains(status);
                continue;
            }
            Event::Received { message } => message,
            Event::Sent { message } => {
                if let Some(id) = message.get("id").filter(|_| is_response(message)) {
                    outstanding.remove(&(r.pid, id.to_string()));
                }
                continue;
            }
            // Over HTTP a request whose response stream the client closed is over too: no
            // response can come for it any more. Over stdio `notifications/cancelled` ends
            // nothing: the server may still answer (the text's "not yet received a response").
            Event::StreamClosed { id } => {
                outstanding.remove(&(r.pid, id.to_string()));
                continue;
            }
            _ => continue,
        };
        let (Some(method), Some(id)) = (message.get("method"), message.get("id")) else {
            continue;
        };
        requests += 1;
        let session = sessions.entry(r.pid).or_default();
        if method == "initialize" {
            *session += 1;
        }
        let modern = era::meta_version(message.get("params")).is_some_and(era::is_modern);
        spoke_modern |= modern;
        initialized |= method == "initialize";
        match id {
            Value::String(_) | Value::Number(_) if id.is_string() || id.is_i64() || id.is_u64() => {
                let key = id.to_string();
                let again = match modern {
                    true if refused => outstanding.contains(&(r.pid, key)),
                    true => !outstanding.insert((r.pid, key)),
                    false => !seen.insert((r.pid, *session, key)),
                };
                if again && reused.is_none() {
                    reused = Some((format!("the id {id} used twice"), modern));
                }
            }
            other => {
                bad_id.get_or_insert_with(|| format!("the id {other}"));
            }
        }
    }
    c.cite_on(
        "request ids are strings or integers",
        "JSON-01",
        requests > 0,
        bad_id.map_or(Ok(()), |p| Err(("string or integer ids".into(), p))),
    );
    // Legacy: never twice in a session; 2026-07-28: never the id of a request still open.
    // With none reused, the era the client spoke picks: a client that sent `initialize`
    // spoke the legacy handshake, whatever its era or the version it offered; one that sent
    // a 2026-07-28 request, or was asked for that era, the modern one.
    let modern_era = c.case.scenario.client_era == Some(ClientEra::Modern);
    let (reuse_id, problem) = match reused {
        Some((p, modern)) => (if modern { "JSON-03" } else { "JSON-02" }, Some(p)),
        None if !initialized && (modern_era || spoke_modern) => ("JSON-03", None),
        None => ("JSON-02", None),
    };
    c.cite_on(
        "request ids are never reused in a session",
        reuse_id,
        requests > 1,
        problem.map_or(Ok(()), |p| Err(("ids unique in the session".into(), p))),
    );
    let numbered = run.received().into_iter().find(|m| {
        m.get("id").is_some()
            && m.get("method")
                .and_then(Value::as_str)
                .is_some_and(|n| n.starts_with("notifications/"))
    });
    let notified = run.received().into_iter().any(|m| {
        m.get("method")
            .and_then(Value::as_str)
            .is_some_and(|n| n.starts_with("notifications/"))
    });
    c.cite_on(
        "notifications carry no id",
        "JSON-05",
        notified,
        numbered.map_or(Ok(()), |m| {
            Err(("no `id` member".into(), matcher::short(m)))
        }),
    );
}

/// Why a unit is not a valid MCP message at the version in force, if it is not.
fn unit_problem(unit: &Unit<'_>) -> Option<(String, String)> {
    match unit {
        Unit::Invalid { line, error } => Some((
            "a JSON object per line".into(),
            format!("the line {line:?} ({error})"),
        )),
        Unit::Single(m) if !is_jsonrpc(m) => {
            Some(("a JSON-RPC 2.0 message".into(), matcher::short(m)))
        }
        Unit::Single(_) => None,
        Unit::Batch { items, version } if version.as_str() >= batch::REMOVED_IN => Some((
            format!(
                "one JSON-RPC message, not a batch (batches were removed in {})",
                batch::REMOVED_IN
            ),
            format!("a batch of {} messages at {version}", items.len()),
        )),
        Unit::Batch { items, .. } if items.is_empty() => Some((
            "a batch of one or more messages".into(),
            "an empty batch `[]`".into(),
        )),
        Unit::Batch { items, .. } => {
            if let Some(bad) = items.iter().find(|m| !is_jsonrpc(m)) {
                return Some((
                    "a batch of JSON-RPC 2.0 messages".into(),
                    matcher::short(bad),
                ));
            }
            let responses = items.iter().filter(|m| is_response(m)).count();
            (responses != 0 && responses != items.len()).then(|| {
                (
                    "a batch of requests and notifications, or of responses only".into(),
                    format!("a batch mixing {responses} responses with requests or notifications"),
                )
            })
        }
    }
}

/// The HTTP side of one trial: the requests the fake saw, as the values `http_requests` wire
/// checks match (and, where a modern or dual fake saw a response stream closed before its
/// answer, `{"stream_closed": id}`), together with the trial they come from, which the HTTP
/// rules read as well (the messages each request carried, the token handed to the client).
pub(super) struct HttpRequests<'a> {
    items: Vec<Value>,
    run: &'a TrialRun,
}

impl Deref for HttpRequests<'_> {
    type Target = [Value];

    fn deref(&self) -> &[Value] {
        &self.items
    }
}

/// The HTTP requests of `run`, as wire checks match them.
pub(super) fn http_requests(run: &TrialRun) -> HttpRequests<'_> {
    let items = run
        .records
        .iter()
        .flatten()
        .filter_map(|r| match &r.event {
            Event::HttpRequest {
                method,
                path,
                headers,
                status,
                origin,
                endpoint,
                params,
            } => {
                let mut item = serde_json::json!({
                    "method": method, "path": path, "headers": headers, "status": status,
                });
                if let Some(o) = origin {
                    item["origin"] = Value::from(o.as_str());
                }
                if let Some(e) = endpoint {
                    item["endpoint"] = Value::from(e.as_str());
                }
                if let Some(p) = params {
                    item["params"] = Value::Object(p.clone());
                }
                Some(item)
            }
            Event::StreamClosed { id } => Some(serde_json::json!({"stream_closed": id})),
            Event::Connected => Some(serde_json::json!({"connected": true})),
            _ => None,
        })
        .collect();
    HttpRequests { items, run }
}

pub(super) fn http_rules(c: &mut Checker<'_>, requests: &HttpRequests<'_>) {
    // The always-on rules are the MCP endpoint's: an authorization endpoint's requests (which
    // carry `endpoint`) follow OAuth's rules, which the cases check, and a request to another
    // path of the MCP origin (a 2025-03-26 client's default `/register`, a well-known URL the
    // fake does not serve) is not an MCP message.
    let posts: Vec<&Value> = requests
        .iter()
        .filter(|r| r["method"] == "POST" && r.get("endpoint").is_none() && r["path"] == MCP_PATH)
        .collect();
    let bad_accept = posts.iter().find(|r| {
        let accept = r["headers"]["accept"]
            .as_str()
            .unwrap_or_default()
            .to_ascii_lowercase();
        !(accept.contains("application/json") && accept.contains("text/event-stream"))
    });
    c.cite_on(
        "every POST accepts both application/json and text/event-stream",
        "HTTP-02",
        !posts.is_empty(),
        bad_accept.map_or(Ok(()), |r| {
            Err((
                "Accept: application/json, text/event-stream".into(),
                matcher::short(&r["headers"]),
            ))
        }),
    );
    let bad_type = posts.iter().find(|r| {
        !r["headers"]["content-type"]
            .as_str()
            .unwrap_or_default()
            .to_ascii_lowercase()
            .starts_with("application/json")
    });
    c.cite_on(
        "every POST body is sent as application/json",
        "PROF-ERA-2",
        !posts.is_empty(),
        bad_type.map_or(Ok(()), |r| {
            Err((
                "Content-Type: application/json".into(),
                matcher::short(&r["headers"]),
            ))
        }),
    );
    session_rules(c, requests.run);
    if requests.run.token_given {
        let records = requests.run.records.as_deref().unwrap_or_default();
        let exchanges = exchanges(records);
        let missing = exchanges
            .iter()
            .find(|x| x.header("authorization") != Some(AUTH_VALID));
        c.cite_on(
            "every HTTP request carries the bearer token the client was given",
            "AUTH-08",
            !exchanges.is_empty(),
            missing.map_or(Ok(()), |x| {
                Err((
                    "Authorization: Bearer <the token of MCP_HARNESS_BEARER_TOKEN>".to_owned(),
                    format!(
                        "{} {} with {} (answered {})",
                        x.method,
                        x.path,
                        x.header("authorization")
                            .map_or("no Authorization header".to_owned(), |a| format!(
                                "Authorization: {a}"
                            )),
                        x.status
                    ),
                ))
            }),
        );
    }
}

/// One HTTP request as the transcript has it, with the messages its body held.
struct Exchange<'a> {
    method: &'a str,
    path: &'a str,
    headers: &'a BTreeMap<String, String>,
    status: u16,
    messages: Vec<&'a Value>,
    /// What had been settled by an `initialize` answered with a result before this request:
    /// the version it named, if any (`None`: no `initialize` answered yet in this session).
    settled: Option<Option<String>>,
    /// No `initialize` had been sent before this request, and a POST had been refused 400,
    /// 404 or 405 with none answered with success: where a client looks for an HTTP+SSE
    /// server.
    after_refused_first_post: bool,
}

impl Exchange<'_> {
    fn header(&self, name: &str) -> Option<&str> {
        self.headers.get(name).map(String::as_str)
    }

    fn is_initialize(&self) -> bool {
        self.messages.iter().any(|m| is_initialize(m))
    }

    /// A request the initialization phase allows before the `initialize` answer: a dual-era
    /// client's `server/discover` probe, pings sent before the answer arrived, or the GET
    /// that looks for a deprecated HTTP+SSE server after a refused first POST, before any
    /// `initialize` was sent (it carries no message, and no session exists yet; a GET before
    /// any POST is still judged).
    fn in_initialization_phase(&self) -> bool {
        if self.method == "GET" && self.after_refused_first_post && self.messages.is_empty() {
            return true;
        }
        let all = |name: &str| {
            !self.messages.is_empty()
                && self
                    .messages
                    .iter()
                    .all(|m| m.get("method").and_then(Value::as_str) == Some(name))
        };
        all("server/discover") || (self.settled.is_none() && all("ping"))
    }

    fn describe(&self) -> String {
        let what = match self.messages.as_slice() {
            [one] => one
                .get("method")
                .and_then(Value::as_str)
                .map_or(String::new(), |m| format!(" ({m})")),
            _ => String::new(),
        };
        format!(
            "{} {}{what}, headers {}",
            self.method,
            self.path,
            matcher::short(&serde_json::json!(self.headers))
        )
    }
}

/// The HTTP requests of a transcript in order, each with the messages of its body (the fake
/// records them right after the request, in one piece) and what an earlier `initialize`
/// settled. A new `initialize` starts a new session: nothing is settled until its result.
fn exchanges(records: &[Record]) -> Vec<Exchange<'_>> {
    let mut out: Vec<Exchange<'_>> = Vec::new();
    let mut settled: Option<Option<String>> = None;
    let mut awaited: Option<&Value> = None;
    let mut initialized = false;
    // A POST refused 400/404/405, and no POST answered with success yet.
    let (mut refused, mut answered) = (false, false);
    for r in records {
        match &r.event {
            // Authorization endpoints, and other paths of the MCP origin, are not the MCP
            // endpoint: the session, version and token rules do not judge them.
            Event::HttpRequest {
                endpoint: Some(_), ..
            } => {}
            Event::HttpRequest { path, .. } if path != MCP_PATH => {}
            Event::HttpRequest {
                method,
                path,
                headers,
                status,
                ..
            } => {
                out.push(Exchange {
                    method,
                    path,
                    headers,
                    status: *status,
                    messages: Vec::new(),
                    settled: settled.clone(),
                    after_refused_first_post: !initialized && refused && !answered,
                });
                if method == "POST" {
                    refused |= matches!(*status, 400 | 404 | 405);
                    answered |= (200..300).contains(status);
                }
            }
            Event::Received { message } => {
                if let Some(last) = out.last_mut() {
                    last.messages.push(message);
                    if is_initialize(message) {
                        initialized = true;
                        last.settled = None;
                        settled = None;
                        awaited = message.get("id");
                    }
                }
            }
            Event::Sent { message }
                if awaited.is_some()
                    && message.get("id") == awaited
                    && message.get("result").is_some() =>
            {
                let version = message.pointer("/result/protocolVersion");
                settled = Some(version.and_then(Value::as_str).map(str::to_owned));
                awaited = None;
            }
            _ => {}
        }
    }
    out
}

/// The session id and the protocol version header.
///
/// The session id is judged whatever the order in which requests reached the fake: a
/// request on another connection can arrive after the `initialize` answer although the
/// client sent it before. When the server issued a session id, a request other than the
/// initialization phase's own that lacks it breaks a MUST either way: sent before the client
/// had the id, it came before the initialization phase was over (the phase MUST be the first
/// interaction); sent after, it is a later request without the id (HTTP-06). The phase's own:
/// the `initialize` POST, the `server/discover` probe of a client that asks for the 2026-07-28
/// era first, and pings sent before the answer (the lifecycle allows them).
/// Requests answered 401 are left out: the fake does not read a request it challenges.
///
/// The version header is judged on requests that carry the session id, which the client can
/// only have sent once it had the answer and so the negotiated version; without sessions,
/// on the requests that arrived after the answer.
fn session_rules(c: &mut Checker<'_>, run: &TrialRun) {
    let records = run.records.as_deref().unwrap_or_default();
    let exchanges = exchanges(records);
    // The fake issues a session id with every `initialize` result when its script has sessions.
    let sessions = c.case.scenario.server.http.sessions;
    let issued = sessions && exchanges.iter().any(|x| x.settled.is_some());
    let judged: Vec<&Exchange<'_>> = exchanges
        .iter()
        .filter(|_| issued)
        // A request refused for want of authorization (401) was not read: the client sends
        // it again once authorized, and that one is judged.
        .filter(|x| x.status != 401)
        .filter(|x| !x.is_initialize() && !x.in_initialization_phase())
        .collect();
    let no_session = judged.iter().find(|x| x.header("mcp-session-id").is_none());
    c.cite_on(
        "every HTTP request other than initialize carries the session id the server issued",
        "HTTP-06",
        !judged.is_empty(),
        no_session.map_or(Ok(()), |x| {
            Err((
                "Mcp-Session-Id on every request but initialize (none before initialize is answered)".into(),
                x.describe(),
            ))
        }),
    );
    let later = || {
        exchanges.iter().filter(|x| {
            x.settled.is_some()
                && !x.is_initialize()
                && (!sessions || x.header("mcp-session-id").is_some())
        })
    };
    // The header exists from 2025-06-18 on, and the legacy era ends with 2025-11-25.
    let has_header = |version: &Option<String>| {
        version
            .as_deref()
            .is_some_and(|v| v >= "2025-06-18" && !era::is_modern(v) && era::REVISIONS.contains(&v))
    };
    let versioned: Vec<&Exchange<'_>> = later()
        .filter(|x| x.settled.as_ref().is_some_and(has_header))
        .collect();
    let no_header = versioned
        .iter()
        .find(|x| x.header("mcp-protocol-version").is_none());
    c.cite_on(
        "every HTTP request after initialize carries MCP-Protocol-Version (from 2025-06-18)",
        "HTTP-09a",
        !versioned.is_empty(),
        no_header.map_or(Ok(()), |x| {
            Err((
                "MCP-Protocol-Version on every request after initialize".into(),
                x.describe(),
            ))
        }),
    );
    let other_version = versioned.iter().find(|x| {
        x.header("mcp-protocol-version")
            .is_some_and(|v| Some(v) != x.settled.as_ref().and_then(|s| s.as_deref()))
    });
    c.cite_on(
        "MCP-Protocol-Version names the version negotiated at initialize",
        "HTTP-09b",
        !versioned.is_empty(),
        other_version.map_or(Ok(()), |x| {
            let settled = x.settled.clone().flatten().unwrap_or_default();
            Err((format!("MCP-Protocol-Version: {settled}"), x.describe()))
        }),
    );
}

fn is_initialize(m: &Value) -> bool {
    m.get("method").and_then(Value::as_str) == Some("initialize") && m.get("id").is_some()
}

fn is_response(m: &Value) -> bool {
    m.get("method").is_none() && (m.get("result").is_some() || m.get("error").is_some())
}

/// A request or notification, a result with its id, or an error response: since 2025-11-25
/// an error answering a message whose id could not be read may leave the id out (JSON-RPC
/// 2.0 itself sends `null` there), so an id-less error is judged well formed.
fn is_jsonrpc(m: &Value) -> bool {
    let has = |k: &str| m.get(k).is_some();
    m.get("jsonrpc") == Some(&Value::from("2.0"))
        && (m.get("method").is_some_and(Value::is_string)
            || (has("id") && has("result"))
            || (m.get("error").is_some_and(Value::is_object) && !has("result")))
}
