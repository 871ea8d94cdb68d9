//! The types of a scenario file. Every field's `///` doc becomes its description in the
//! generated JSON Schema (`scenarios/scenario.schema.json`), which editors use to validate
//! and complete case files, so write these docs for case authors.

pub mod era;
pub mod http;
pub mod robust;

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

pub use era::{ClientEra, ModernScript, ServerEra};
pub use http::{
    DeleteMode, Endpoint, GetMode, HttpReply, HttpScript, Redirect, RedirectTarget, ReplyFormat,
};
pub use robust::{Emit, Faults, Then, Truncate};

/// One conformance case: the fake server's script, the client's plan, and what must be observed.
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Scenario {
    /// Path of the JSON Schema for editors (for example `"../scenario.schema.json"`); the harness ignores it.
    #[serde(rename = "$schema", default, skip_serializing_if = "Option::is_none")]
    pub schema: Option<String>,
    /// One line saying which behaviour or fault this case exercises.
    pub description: String,
    /// The requirement this case checks, quoted or paraphrased from its source.
    pub requirement: Requirement,
    /// Transports the case runs on; one trial per transport, named `<case-id>@<transport>`.
    #[serde(default = "default_transports")]
    pub transports: Vec<Transport>,
    /// Protocol version the client is asked to offer (`MCP_HARNESS_PROTOCOL_VERSION`).
    #[serde(default = "default_protocol_version")]
    pub protocol_version: String,
    /// The era the client is asked to speak (`MCP_HARNESS_ERA`); omitted, the variable is
    /// not set and the client speaks the legacy era (the `initialize` handshake).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub client_era: Option<ClientEra>,
    /// Protocol revisions the case applies to. Given, the case runs once per transport per
    /// revision, as trials named `<case-id>@<transport>@<revision>`, with the revision as
    /// `MCP_HARNESS_PROTOCOL_VERSION` (for a dual-era client, a legacy revision is the
    /// fallback version `MCP_HARNESS_LEGACY_PROTOCOL_VERSION` instead) and the fake playing
    /// that revision. Matchers can name the offered version as `{"$same": "revision"}` (and a
    /// dual-era client's fallback version as `{"$same": "legacy_revision"}`).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub revisions: Vec<String>,
    /// Dual-era clients only: the version of the fallback `initialize`
    /// (`MCP_HARNESS_LEGACY_PROTOCOL_VERSION`; default `2025-11-25`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub legacy_protocol_version: Option<String>,
    /// Per-request timeout the client is asked to apply, in milliseconds (`MCP_HARNESS_TIMEOUT_MS`).
    #[serde(default = "default_timeout_ms")]
    pub timeout_ms: u64,
    /// Grace the client is asked to give the server at each shutdown step, in milliseconds
    /// (`MCP_HARNESS_SHUTDOWN_GRACE_MS`; a hint that clients may ignore).
    #[serde(default = "default_shutdown_grace_ms")]
    pub shutdown_grace_ms: u64,
    /// Wall-clock limit of the whole trial in milliseconds. When it passes, the client's process
    /// group is killed and the trial fails with what was seen so far.
    #[serde(default = "default_deadline_ms")]
    pub deadline_ms: u64,
    /// Over HTTP, hand the client a fresh bearer token (`MCP_HARNESS_BEARER_TOKEN`) that the
    /// fake requires on every request (401 without it). Transcripts record only whether the
    /// right token came, never the token.
    #[serde(default)]
    pub bearer_token: bool,
    /// The official conformance suite's scenario with the same meaning (e.g. `initialize`,
    /// `tools_call`); clients get it as `MCP_CONFORMANCE_SCENARIO`, so the suite's existing
    /// conformance clients run this case unmodified. When such a client prints no outcome
    /// lines at all, the case is judged on the wire alone.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub official_scenario: Option<String>,
    /// The fake server's script.
    #[serde(default)]
    pub server: ServerScript,
    /// The steps the client is asked to perform, in order (`MCP_HARNESS_PLAN`).
    pub plan: Vec<Step>,
    /// What must be observed. Every case needs at least one wire or lifecycle expectation, so
    /// that a client which only prints plausible outcome lines cannot pass.
    pub expect: Expectations,
}

fn default_transports() -> Vec<Transport> {
    vec![Transport::Stdio]
}
fn default_protocol_version() -> String {
    "2025-03-26".to_owned()
}
fn default_timeout_ms() -> u64 {
    5_000
}
fn default_shutdown_grace_ms() -> u64 {
    300
}
fn default_deadline_ms() -> u64 {
    10_000
}

/// The requirement a case checks and where it comes from.
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Requirement {
    /// The requirement sentence, in the words of its source or a close paraphrase.
    pub text: String,
    /// Where it comes from: a seed 000 section (`seed 000 § Tools`) or a specification path
    /// (`docs/specification/2025-11-25/basic/lifecycle.mdx § Initialization`).
    pub source: String,
    /// How binding it is; expectations inherit it unless they set their own.
    pub level: Level,
}

/// How binding a check is; decides the trial's grade when it fails.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum Level {
    /// A specification MUST: failing it fails the trial.
    Must,
    /// A specification SHOULD: failing it grades the trial non-strict.
    Should,
    /// The seed 000 client-boundary policy: fails the trial while the boundary profile is on
    /// (the default), non-strict with `--spec-only`.
    Profile,
}

impl Level {
    /// The lower-case name used in reports.
    pub fn as_str(self) -> &'static str {
        match self {
            Level::Must => "must",
            Level::Should => "should",
            Level::Profile => "profile",
        }
    }
}

/// A transport a case can run over.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum Transport {
    /// The client launches the fake as its child and speaks newline-delimited JSON-RPC.
    Stdio,
    /// Streamable HTTP to the HTTPS fake on loopback (`MCP_HARNESS_TRANSPORT=http`); the
    /// script's `http.endpoint` chooses the TLS variant.
    Https,
}

impl Transport {
    /// The name used in trial names and in `MCP_HARNESS_TRANSPORT`.
    pub fn as_str(self) -> &'static str {
        match self {
            Transport::Stdio => "stdio",
            Transport::Https => "https",
        }
    }

    /// The value of `MCP_HARNESS_TRANSPORT`.
    pub fn contract_name(self) -> &'static str {
        match self {
            Transport::Stdio => "stdio",
            Transport::Https => "http",
        }
    }
}

/// How the fake server behaves.
#[derive(Debug, Clone, Default, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ServerScript {
    /// Answers to requests, tried in order; the first rule whose `method` and `params` match
    /// answers. Without a matching rule, `initialize` gets a built-in success (the offered
    /// version if the fake knows it, else `2025-11-25`; capabilities `{"tools":{}}`), `ping`
    /// gets `{}`, and anything else gets JSON-RPC error -32601. Notifications are answered only by a rule
    /// naming their method (a faulty server's response to a notification, with a null id;
    /// over HTTP a 200 with that body instead of 202).
    #[serde(default)]
    pub handlers: Vec<Handler>,
    /// What the fake does when its stdin reaches end of file.
    #[serde(default)]
    pub on_eof: OnEof,
    /// What the fake does when it receives SIGTERM.
    #[serde(default)]
    pub on_sigterm: OnSigterm,
    /// Bytes of log-like noise the fake writes to its stderr at start-up (a chatty server must
    /// not block a client that fails to drain stderr).
    #[serde(default)]
    pub stderr_noise_bytes: u64,
    /// Streamable HTTP behaviour (ignored over stdio).
    #[serde(default)]
    pub http: HttpScript,
    /// The protocol era the fake speaks.
    #[serde(default)]
    pub era: ServerEra,
    /// Settings of a modern or dual-era fake (ignored by a legacy one).
    #[serde(default)]
    pub modern: ModernScript,
}

/// One scripted answer.
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Handler {
    /// The JSON-RPC method this rule answers, e.g. `tools/list`.
    pub method: String,
    /// A matcher the request's `params` must satisfy (see the matcher rules: objects match as
    /// subsets, `{"$absent": true}` matches a missing member; `$capture`/`$same` do not apply
    /// here, since each request is matched on its own). Omit to match any params.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub params: Option<Value>,
    /// How long to wait before answering, in milliseconds.
    #[serde(default)]
    pub delay_ms: u64,
    /// What the fake does with the request.
    pub reply: Reply,
    /// HTTP shape and faults of the answer (ignored over stdio).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub http: Option<HttpReply>,
    /// A hostile server's faults around the reply (junk before it, a cut, a drip, padding,
    /// a duplicate, a stderr flood, an exit after it).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub faults: Option<Faults>,
}

/// What the fake does with a matched request.
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case", deny_unknown_fields)]
pub enum Reply {
    /// Answer with this `result`.
    Result(Value),
    /// Answer with this JSON-RPC `error`.
    Error(RpcError),
    /// Never answer (the request hangs until the client gives up).
    Hang,
    /// Exit at once with this status, without answering (a crash mid-call).
    Exit(i32),
    /// Write this line verbatim instead of an answer (a malformed message).
    RawLine(String),
}

/// A JSON-RPC error object.
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct RpcError {
    /// The integer error code, e.g. -32602.
    pub code: i64,
    /// The error message.
    pub message: String,
    /// Optional extra data.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub data: Option<Value>,
}

/// The fake's reaction to end of file on its stdin.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum OnEof {
    /// Record it and exit with status 0 (a well-behaved server).
    #[default]
    Exit,
    /// Record it and keep running (the client must escalate to SIGTERM).
    Ignore,
}

/// The fake's reaction to SIGTERM.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum OnSigterm {
    /// Record it and exit with status 0.
    #[default]
    Exit,
    /// Record it and keep running (the client must escalate to SIGKILL).
    Ignore,
}

/// One step of the client's plan, as the driver contract defines it.
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
#[serde(tag = "op", rename_all = "snake_case", deny_unknown_fields)]
pub enum Step {
    /// Start the transport and perform the handshake.
    Connect,
    /// List every tool, following pagination cursors.
    ListTools,
    /// Call one tool.
    CallTool {
        /// The tool's name.
        name: String,
        /// The tool's arguments.
        #[serde(default)]
        arguments: Map<String, Value>,
        /// Cancel the call after this many milliseconds.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        cancel_after_ms: Option<u64>,
        /// Modern era: the caller's input handler, mapping an input request's `method`
        /// (`elicitation/create`, `sampling/createMessage`, `roots/list`) to the response
        /// the client sends back for it when the server answers `input_required`.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        input: Option<Map<String, Value>>,
    },
    /// Close the connection and shut the server down.
    Close,
    /// Modern era: send `server/discover` and report its result.
    Discover,
    /// Wait, then report `{}` (lets a cache entry expire).
    Sleep {
        /// How long to wait, in milliseconds.
        ms: u64,
    },
}

impl Step {
    /// The op name, as it appears in the plan and in outcome lines.
    pub fn op(&self) -> &'static str {
        match self {
            Step::Connect => "connect",
            Step::ListTools => "list_tools",
            Step::CallTool { .. } => "call_tool",
            Step::Close => "close",
            Step::Discover => "discover",
            Step::Sleep { .. } => "sleep",
        }
    }
}

/// Everything a trial checks.
#[derive(Debug, Clone, Default, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Expectations {
    /// What particular plan steps must report. Every step must report exactly one outcome line
    /// in any case; steps not listed here are not checked further.
    #[serde(default)]
    pub outcomes: Vec<OutcomeExpectation>,
    /// What the fake must (or must not) have received from the client.
    #[serde(default)]
    pub wire: Vec<WireExpectation>,
    /// How the server process must have been shut down (stdio only).
    #[serde(default)]
    pub lifecycle: Vec<LifecycleExpectation>,
}

/// What one plan step must report. Exactly one of `ok` and `error` is given.
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct OutcomeExpectation {
    /// Index of the plan step, from 0.
    pub step: usize,
    /// The step must succeed, and its `ok` object must satisfy this matcher (`{}` accepts any success).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ok: Option<Value>,
    /// The step must fail with this error.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error: Option<ErrorExpectation>,
    /// Overrides the requirement's level for this check.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub level: Option<Level>,
}

/// The error a step must report.
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ErrorExpectation {
    /// The error kind, from the driver contract's closed vocabulary.
    pub kind: ErrorKind,
    /// The JSON-RPC error code that caused it, when one did.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub code: Option<i64>,
    /// With `http_status`: the HTTP status.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub status: Option<u16>,
    /// Other kinds that are equally right, where the requirement leaves the choice open
    /// (a refused redirect may be `insecure_url` or the unfollowed `http_status`).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub or_kinds: Vec<ErrorKind>,
}

/// The driver contract's closed vocabulary of error kinds.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum ErrorKind {
    /// The negotiated protocol version is empty, missing or not supported.
    UnsupportedVersion,
    /// `initialize` was answered with a JSON-RPC error.
    HandshakeFailed,
    /// A request was answered with a JSON-RPC error (with its `code`).
    ProtocolError,
    /// A tool call returned a result with `isError: true`.
    ToolError,
    /// A listing returned a cursor that was already sent.
    RepeatedCursor,
    /// A listing returned a tool name twice.
    DuplicateToolName,
    /// The request's timeout elapsed.
    Timeout,
    /// The caller cancelled the request.
    Cancelled,
    /// There is no usable connection.
    TransportClosed,
    /// The server's answer is not of the expected shape.
    InvalidResponse,
    /// The URL is not acceptable (plain HTTP to a remote host, or unparsable).
    InsecureUrl,
    /// TLS failed (untrusted or mismatched certificate).
    Tls,
    /// The HTTP status was not a success (with its `status`).
    HttpStatus,
    /// The client does not implement this op.
    UnsupportedOp,
    /// The server asked for an input the caller has no handler for.
    InputUnsupported,
}

impl ErrorKind {
    /// The snake_case name used on the wire of the driver contract.
    pub fn as_str(self) -> &'static str {
        match self {
            ErrorKind::UnsupportedVersion => "unsupported_version",
            ErrorKind::HandshakeFailed => "handshake_failed",
            ErrorKind::ProtocolError => "protocol_error",
            ErrorKind::ToolError => "tool_error",
            ErrorKind::RepeatedCursor => "repeated_cursor",
            ErrorKind::DuplicateToolName => "duplicate_tool_name",
            ErrorKind::Timeout => "timeout",
            ErrorKind::Cancelled => "cancelled",
            ErrorKind::TransportClosed => "transport_closed",
            ErrorKind::InvalidResponse => "invalid_response",
            ErrorKind::InsecureUrl => "insecure_url",
            ErrorKind::Tls => "tls",
            ErrorKind::HttpStatus => "http_status",
            ErrorKind::UnsupportedOp => "unsupported_op",
            ErrorKind::InputUnsupported => "input_unsupported",
        }
    }
}

/// A check on what the fake received from the client. Exactly one of `first`, `sequence`,
/// `sent`, `not_sent` and `every` is given. Matchers may bind values with
/// `{"$capture": "name"}` and compare later ones with `{"$same": "name"}`.
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct WireExpectation {
    /// One line saying what is checked; it names the check in reports.
    pub check: String,
    /// Overrides the requirement's level for this check.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub level: Option<Level>,
    /// What is checked: the JSON-RPC messages (default), or the HTTP requests, each seen as
    /// `{"method", "path", "headers": {lower-case name: value}, "status"}` where `status` is the
    /// fake's answer and an `authorization` header reads `Bearer [valid]` or `[invalid]`; with a
    /// modern or dual fake, a response stream closed before its answer shows among them, in
    /// order, as `{"stream_closed": <request id>}`.
    #[serde(default)]
    pub on: WireStream,
    /// Only items matching this are considered (all, if omitted).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub filter: Option<Value>,
    /// Every item considered matches this (and there is at least one).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub every: Option<Value>,
    /// The very first messages the client sent match these, one for one, in order.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub first: Option<Vec<Value>>,
    /// Messages matching these were sent in this order (others may come between).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sequence: Option<Vec<Value>>,
    /// A message matching this was sent (exactly `count` times, if given).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sent: Option<Value>,
    /// With `sent`: how many matching messages there must be.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub count: Option<usize>,
    /// No message matching this was sent.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub not_sent: Option<Value>,
    /// Check only in trials of these revisions (of the case's `revisions`); all if omitted.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub revisions: Vec<String>,
}

/// What a wire check looks at.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum WireStream {
    /// The JSON-RPC messages the client sent, over any transport.
    #[default]
    Messages,
    /// The HTTP requests the client made (Streamable HTTP only).
    HttpRequests,
}

/// A check on how the stdio server process ended.
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct LifecycleExpectation {
    /// One line saying what is checked; it names the check in reports.
    pub check: String,
    /// Overrides the requirement's level for this check.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub level: Option<Level>,
    /// The server process's lifecycle events, exactly and in order, from its first launch.
    pub events: Vec<LifecycleEvent>,
}

/// Something that happened to the server process.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum LifecycleEvent {
    /// Its stdin reached end of file (the client closed it).
    StdinEof,
    /// It received SIGTERM.
    Sigterm,
    /// It exited by itself.
    Exited,
    /// It was gone without exiting by itself: killed by SIGKILL (or another uncatchable end).
    Killed,
}

impl LifecycleEvent {
    /// The snake_case name used in reports.
    pub fn as_str(self) -> &'static str {
        match self {
            LifecycleEvent::StdinEof => "stdin_eof",
            LifecycleEvent::Sigterm => "sigterm",
            LifecycleEvent::Exited => "exited",
            LifecycleEvent::Killed => "killed",
        }
    }
}
