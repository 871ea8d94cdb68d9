//! The Streamable HTTP part of a scenario: how the HTTPS fake serves its one MCP endpoint
//! (TLS variant, sessions, DELETE and GET), and per-answer HTTP shapes and faults.
//! Everything here is ignored over stdio.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::Value;

/// How the HTTP fake behaves as a whole.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct HttpScript {
    /// Which endpoint the client is given, and with which certificate.
    #[serde(default, skip_serializing_if = "is_default")]
    pub endpoint: Endpoint,
    /// Whether `initialize` answers carry an `Mcp-Session-Id`, which later requests must then
    /// carry (400 without it, 404 with an unknown or expired one).
    #[serde(default = "yes", skip_serializing_if = "is_true")]
    pub sessions: bool,
    /// How the fake answers `DELETE` on the endpoint.
    #[serde(default, skip_serializing_if = "is_default")]
    pub delete: DeleteMode,
    /// How the fake answers `GET` on the endpoint.
    #[serde(default, skip_serializing_if = "is_default")]
    pub get: GetMode,
    /// How requests are answered unless their handler says otherwise.
    #[serde(default, skip_serializing_if = "is_default")]
    pub replies: ReplyFormat,
    /// After this many requests in a session, the session expires: later requests carrying
    /// its id get 404.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub expire_session_after: Option<u32>,
    /// Give every SSE event an id (`<stream>-<n>`, one stream per POST answer and per GET:
    /// `p1`, `g2`, …) and keep each stream's events, so a GET carrying `Last-Event-ID` is
    /// answered with the events after that one on that stream, then the stream goes on
    /// (resumability): a POST stream until its response, then it ends; a GET stream as the
    /// GET stream. Each stream starts with a priming event (the id `<stream>-0`, empty
    /// data). A `Last-Event-ID` the fake does not know opens a new GET stream, from now
    /// (2025-11-25 lets a server replay, never requires it). A replayed message is recorded
    /// as sent once, when first written. Applies to the SSE answers played live: those of
    /// rules with `sends` or `cut_after_events`, and every plain SSE answer (no `faults`,
    /// `split` or `cut`) once any of `event_ids`, `retry_ms`, `keepalive_ms` is set; the
    /// standalone GET stream (`get: stream`).
    #[serde(default, skip_serializing_if = "is_false")]
    pub event_ids: bool,
    /// Start every SSE stream with `retry: N` (in its priming event with `event_ids`, else
    /// alone), how long a client waits before reconnecting; also sent first when a stream is
    /// resumed. Applies to the streams `event_ids` lists, and to the priming event of a
    /// `get: cut` stream (which then lasts longer by 20 ms a byte).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub retry_ms: Option<u64>,
    /// Write an SSE comment (a keep-alive) after every this many milliseconds of silence on
    /// each open stream `event_ids` lists (the GET stream has one every second without it).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub keepalive_ms: Option<u64>,
    /// A `GET` on one of these paths (other than the endpoint, e.g. an icon's) is answered
    /// with this redirect instead of 404. Its target may name `{{canary}}`.
    #[serde(default, skip_serializing_if = "std::collections::BTreeMap::is_empty")]
    pub redirects: std::collections::BTreeMap<String, Redirect>,
    /// Serve the deprecated HTTP+SSE transport (2024-11-05) instead of Streamable HTTP: a
    /// POST to the endpoint is refused (`post_status`, plain text); a GET opens an SSE stream
    /// whose first event is `endpoint`, naming `/messages?session_id=s<n>`; POSTs there
    /// (with that session) are answered 202 and the script's answers go out as `message`
    /// events on that stream. Handlers' `http`, `sends` and `faults` do not apply.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub legacy_sse: Option<LegacySse>,
    /// Write response header names in title case (`Mcp-Session-Id`, `Content-Type`) rather
    /// than lower case: HTTP/1.1 carries names as a server writes them, and clients must
    /// compare them case-insensitively.
    #[serde(default, skip_serializing_if = "is_false")]
    pub title_case_headers: bool,
}

/// The HTTP+SSE (2024-11-05) server a legacy-SSE script plays.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct LegacySse {
    /// The status a POST to the endpoint gets: 405 (the default), 404 or 400, the statuses
    /// after which a client that supports old servers tries the GET.
    #[serde(default = "method_not_allowed")]
    pub post_status: u16,
}

fn method_not_allowed() -> u16 {
    405
}

fn yes() -> bool {
    true
}

fn is_true(b: &bool) -> bool {
    *b
}

fn is_false(b: &bool) -> bool {
    !*b
}

fn is_default<T: Default + PartialEq>(value: &T) -> bool {
    *value == T::default()
}

impl Default for HttpScript {
    /// The same as `"http": {}`: a trusted endpoint with sessions.
    fn default() -> Self {
        HttpScript {
            endpoint: Endpoint::default(),
            sessions: true,
            delete: DeleteMode::default(),
            get: GetMode::default(),
            replies: ReplyFormat::default(),
            expire_session_after: None,
            event_ids: false,
            retry_ms: None,
            keepalive_ms: None,
            redirects: Default::default(),
            legacy_sse: None,
            title_case_headers: false,
        }
    }
}

/// The endpoint the client is handed.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum Endpoint {
    /// `https://localhost:PORT/mcp`, with a certificate from the run's CA (which the client is given).
    #[default]
    Trusted,
    /// `http://127.0.0.1:PORT/mcp`: plain HTTP on loopback, which clients may allow for local tests.
    PlainLoopback,
    /// `https://localhost:PORT/mcp` with a certificate from a second CA the client is not told about.
    UntrustedCa,
    /// `https://localhost:PORT/mcp` with a certificate from the trusted CA for another name.
    WrongName,
    /// `http://mcp-harness.invalid:PORT/mcp`: plain HTTP to a non-loopback host, which must be
    /// refused before any connection (the reserved `.invalid` name never resolves).
    InsecureRemote,
}

/// The fake's answer to `DELETE`.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum DeleteMode {
    /// End the session and answer 200.
    #[default]
    Allow,
    /// Answer 405: the server does not let clients end sessions.
    NotAllowed,
}

/// The fake's answer to `GET`.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum GetMode {
    /// Answer 405: no standalone server-to-client stream.
    #[default]
    NotAllowed,
    /// Open a standalone SSE stream and keep it open: it carries the messages rules send
    /// `via: get`, a keep-alive comment every second (or `keepalive_ms`), and, with
    /// `event_ids`, can be resumed.
    Stream,
    /// Open a standalone SSE stream and cut it after about 750 ms (a priming event with the id
    /// `cut-stream-1` and empty data, a keep-alive comment, written slowly, then the
    /// connection dropped mid-stream); every `GET` is answered so. A client that keeps the
    /// stream opens it again (resuming with `Last-Event-ID`); none re-sends a request.
    Cut,
}

/// The shape of a POST answer.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum ReplyFormat {
    /// One `application/json` body.
    #[default]
    Json,
    /// A `text/event-stream` whose last event is the response.
    Sse,
}

/// HTTP details of one handler's answer (ignored over stdio).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct HttpReply {
    /// The answer's shape, overriding the script's `replies`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub format: Option<ReplyFormat>,
    /// SSE only: JSON-RPC notifications sent as events before the response.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub events_before: Vec<Value>,
    /// SSE only: write the stream in small pieces, splitting events across chunks.
    #[serde(default, skip_serializing_if = "is_false")]
    pub split: bool,
    /// Answer with this HTTP status and a plain-text body instead of the reply; when the reply
    /// is an `error`, the body is that JSON-RPC error without an `id` member (`application/json`), as a
    /// server answers a request it refuses before reading it (an `Origin` it does not allow).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub status: Option<u16>,
    /// Send this `Content-Type` instead of the right one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub content_type: Option<String>,
    /// Cut the body off in the middle and close the connection.
    #[serde(default, skip_serializing_if = "is_false")]
    pub cut: bool,
    /// Answer with a redirect instead of the reply.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub redirect: Option<Redirect>,
    /// Answer as an SSE stream and drop the connection after this many message events of it
    /// (the priming event not counted; 0 drops it right after the priming event), and in any
    /// case before the response, without ending the stream. With `http.event_ids` the rest
    /// of the stream (the events not yet sent, then the response) goes to a GET that resumes
    /// with the last id seen; the request itself is answered only there, so re-sending it is
    /// visible. Not with `faults`, `split` or `cut`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cut_after_events: Option<u32>,
    /// With `cut_after_events` and `http.event_ids`: cut this many of the GETs that resume
    /// the stream again at once, before any event id (only the `retry` field, if any, is
    /// written first), so the client has to resume once more from the id it had.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub cut_resumes: u32,
}

fn is_zero(n: &u32) -> bool {
    *n == 0
}

/// A redirect answering a request. Its named targets use the reserved `.invalid` name, which
/// never resolves: a client that follows gets nowhere, and nothing leaves the machine; a URL
/// target is for isolated cases, whose namespace has nowhere else to go.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Redirect {
    /// The 3xx status, e.g. 301, 302, 307 or 308.
    pub status: u16,
    /// Where the `Location` header points.
    pub to: RedirectTarget,
}

/// Where a scripted redirect points.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum RedirectTarget {
    /// `http://mcp-harness.invalid:PORT/mcp`: a downgrade to plain HTTP on a remote host.
    PlainHttp,
    /// `https://mcp-harness.invalid:PORT/mcp`: another host.
    OtherHost,
    /// Authorization cases: `https://localhost:AS2_PORT/mcp`, another origin of the trial that
    /// records what reaches it (role `as2`), so a client that follows shows whether it
    /// carried the token across. Elsewhere the same as `other_host`.
    OtherOrigin,
    /// Any other text: this URL exactly, e.g. `https://169.254.169.254/latest/meta-data/`
    /// (in a case with `"network": "isolated"`, whose canaries listen on those addresses).
    #[serde(untagged)]
    Url(String),
}

impl RedirectTarget {
    /// The `Location` value for a fake listening on `port`.
    pub fn location(&self, port: u16) -> String {
        match self {
            RedirectTarget::PlainHttp => format!("http://mcp-harness.invalid:{port}/mcp"),
            RedirectTarget::OtherHost | RedirectTarget::OtherOrigin => {
                format!("https://mcp-harness.invalid:{port}/mcp")
            }
            RedirectTarget::Url(url) => url.clone(),
        }
    }
}
