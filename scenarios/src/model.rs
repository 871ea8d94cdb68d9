//! The types of the harness's data. A case file is read as a [`file::CaseFile`] (the shape
//! people write, with defaults, shorthands, fixtures and variants) and resolved by the loader
//! into one [`Scenario`] per variant: the complete, explicit form the runner and the fakes
//! use. Every field's `///` doc becomes its description in the generated JSON Schema
//! (`scenarios/scenario.schema.json`), which editors use to validate and complete case
//! files, so write these docs for case authors.

pub mod auth;
pub mod auth_ssrf;
pub mod canary;
pub mod catalogue;
pub mod check;
pub mod era;
pub mod file;
pub mod host;
pub mod http;
pub mod robust;
pub mod sends;
pub mod servers;
pub mod tasks;
pub mod timing;
pub mod trace;
pub mod traces;

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

pub use catalogue::{Catalogue, Requirement};
pub use check::{
    BrokenBy, CaseCheck, ErrorExpectation, Rule, StepOutcome, WireExpectation, WireRule,
};
pub use era::{ClientEra, ModernScript, ServerEra};
pub use file::{CaseFile, Fixture, Need};
pub use http::{
    DeleteMode, Endpoint, GetMode, HttpReply, HttpScript, LegacySse, Redirect, RedirectTarget,
    ReplyFormat,
};
pub use robust::{Emit, Faults, Then, Truncate};
pub use sends::{Send, SendAt, Via};
pub use tasks::{CancelMode, TaskPhase, TaskScript, TaskStatus};
pub use timing::TimeScale;
pub use trace::TraceContext;

/// The `serverInfo.name` of the fakes' built-in answers (`initialize`, `server/discover`).
pub const FAKE_SERVER_NAME: &str = "mcp-harness-fake";

/// One resolved trial setup: a case file with its defaults filled in, its fixtures merged
/// into the server script, its variant substituted and its requirements looked up. Built by
/// [`crate::load`]; never read from a file as such.
#[derive(Debug, Clone)]
pub struct Scenario {
    /// One line saying which behaviour or fault this case exercises.
    pub description: String,
    /// The case's requirement, from the catalogue.
    pub requirement: Requirement,
    /// Transports the case runs on, in order.
    pub transports: Vec<Transport>,
    /// Protocol version the client is asked to offer (`MCP_HARNESS_PROTOCOL_VERSION`).
    pub protocol_version: String,
    /// The era the client is asked to speak (`MCP_HARNESS_ERA`), if the case names one.
    pub client_era: Option<ClientEra>,
    /// Protocol revisions the case runs at (see [`file::CaseFile::revisions`]).
    pub revisions: Vec<String>,
    /// Dual-era clients only: the version of the fallback `initialize`.
    pub legacy_protocol_version: Option<String>,
    /// Per-request timeout, in milliseconds (`MCP_HARNESS_TIMEOUT_MS`).
    pub timeout_ms: u64,
    /// Grace per shutdown step, in milliseconds (`MCP_HARNESS_SHUTDOWN_GRACE_MS`).
    pub shutdown_grace_ms: u64,
    /// Wall-clock limit of the whole trial, in milliseconds.
    pub deadline_ms: u64,
    /// Over HTTP, hand the client a fresh bearer token the fake requires.
    pub bearer_token: bool,
    /// Whether the client runs in a network namespace of its own (see
    /// [`file::CaseFile::network`]).
    pub network: file::Network,
    /// The official conformance suite's scenario with the same meaning.
    pub official_scenario: Option<String>,
    /// Whether `mcp-harness serve` may play the case for a host (see
    /// [`file::CaseFile::host`]); `None`: derived by [`Scenario::servable`].
    pub host: Option<bool>,
    /// The client's traces are collected and judged (see [`file::CaseFile::traces`]).
    pub traces: Option<traces::Traces>,
    /// What the case asks of a client beyond the contract's minimum.
    pub needs: Vec<Need>,
    /// The fake server's complete script: the case's handlers, then its fixtures' handlers,
    /// then the built-in `echo` tool when the plan calls it.
    pub server: ServerScript,
    /// The extra servers, by name (see [`file::CaseFile::servers`]), each complete.
    pub servers: std::collections::BTreeMap<String, ServerScript>,
    /// The steps the client is asked to perform (`MCP_HARNESS_PLAN`).
    pub plan: Vec<Step>,
    /// For each step of `plan`, the extra server it names (`None`: the main server).
    pub plan_servers: Vec<Option<String>>,
    /// Every check of the case, in file order: step expectations, wire checks, lifecycle checks.
    pub checks: Vec<CaseCheck>,
    /// The factor every duration above was multiplied by (see [`timing`]); 1 as loaded.
    pub time_scale: TimeScale,
}

impl Scenario {
    /// A scenario that only serves `server` (for the fakes' own tests): no plan, no checks.
    pub fn serving(server: ServerScript) -> Scenario {
        Scenario {
            description: "a fake serving a script".into(),
            requirement: Requirement {
                id: "FAKE".into(),
                level: Level::Must,
                transport: None,
                text: "The fake plays its script.".into(),
                source: "fakes".into(),
                revisions: Vec::new(),
                not_observable: None,
            },
            transports: file::default_transports(),
            protocol_version: era::default_protocol_version(None).to_owned(),
            client_era: None,
            revisions: Vec::new(),
            legacy_protocol_version: None,
            timeout_ms: file::DEFAULT_TIMEOUT_MS,
            shutdown_grace_ms: file::DEFAULT_SHUTDOWN_GRACE_MS,
            deadline_ms: file::DEFAULT_DEADLINE_MS,
            bearer_token: false,
            network: file::Network::Host,
            official_scenario: None,
            host: None,
            traces: None,
            needs: Vec::new(),
            server,
            servers: Default::default(),
            plan: Vec::new(),
            plan_servers: Vec::new(),
            checks: Vec::new(),
            time_scale: TimeScale::ONE,
        }
    }
}

/// How binding a requirement is; decides the trial's grade when one of its checks fails.
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
    /// Advice: shown everywhere, never fails a run by default (graded like `should`).
    Advisory,
}

impl Level {
    /// The lower-case name used in reports.
    pub fn as_str(self) -> &'static str {
        match self {
            Level::Must => "must",
            Level::Should => "should",
            Level::Profile => "profile",
            Level::Advisory => "advisory",
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

fn is_default<T: Default + PartialEq>(value: &T) -> bool {
    *value == T::default()
}

/// How the fake server behaves.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ServerScript {
    /// Answers to requests, tried in order; the first rule whose `method` and `params` match
    /// answers. After the case's own rules come its `fixtures`' rules, then the built-in
    /// `echo` tool: a `tools/call` of `echo` (when the plan calls it and no rule names it)
    /// answers `{"content": [{"type": "text", "text": "ok"}]}`. Without a matching rule,
    /// `initialize` gets a built-in success (the offered version if the fake knows it, else
    /// `2025-11-25`; capabilities `{"tools":{}}`), `tools/list` lists the tools the rules
    /// call (when no rule answers `tools/list` at all), `ping` gets `{}`, and anything else
    /// gets JSON-RPC error -32601. Notifications are answered only by a rule naming their
    /// method (a faulty server's response to a notification, with a null id; over HTTP a 200
    /// with that body instead of 202).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub handlers: Vec<Handler>,
    /// What the fake does when its stdin reaches end of file.
    #[serde(default, skip_serializing_if = "is_default")]
    pub on_eof: OnEof,
    /// What the fake does when it receives SIGTERM.
    #[serde(default, skip_serializing_if = "is_default")]
    pub on_sigterm: OnSigterm,
    /// Bytes of log-like noise the fake writes to its stderr at start-up (a chatty server must
    /// not block a client that fails to drain stderr).
    #[serde(default, skip_serializing_if = "is_default")]
    pub stderr_noise_bytes: u64,
    /// stdio only: the command the client is given is a wrapper (`/bin/sh`) that starts the
    /// fake as its own child and waits for it, as `npx` or `uv run` do, so the fake is the
    /// client's grandchild and a signal to the direct child alone does not reach it.
    #[serde(default, skip_serializing_if = "is_default")]
    pub wrapped: bool,
    /// Streamable HTTP behaviour (ignored over stdio).
    #[serde(default, skip_serializing_if = "is_default")]
    pub http: HttpScript,
    /// The protocol era the fake speaks.
    #[serde(default, skip_serializing_if = "is_default")]
    pub era: ServerEra,
    /// Settings of a modern or dual-era fake (ignored by a legacy one).
    #[serde(default, skip_serializing_if = "is_default")]
    pub modern: ModernScript,
    /// Server capabilities declared on top of those the handlers imply (`tools` always;
    /// `resources`, `prompts`, `completions`, `logging` when a handler answers them), merged
    /// member by member into them, e.g. `{"tools": {"listChanged": true}}` or
    /// `{"resources": {"subscribe": true}}`. Declared in `initialize` and `server/discover`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub capabilities: Option<Value>,
    /// The authorization side (HTTPS only, `transports: ["https"]`): the MCP endpoint becomes
    /// a protected resource and the fake also plays its authorization server (see
    /// [`auth`]). `{}` is the common case. The client is then handed
    /// `MCP_HARNESS_AUTH_REDIRECT_URI` and, as the script says, a pre-registered client or a
    /// client metadata document URL.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub auth: Option<auth::AuthScript>,
    /// Tools whose calls the fake runs as tasks, with each task's statuses over time and
    /// outcome (see [`tasks`]). A non-empty list declares the task capability: at 2025-11-25
    /// `{"tasks": {"list": {}, "cancel": {}, "requests": {"tools": {"call": {}}}}}` in
    /// `initialize`, at 2026-07-28 the `io.modelcontextprotocol/tasks` extension in
    /// `server/discover` (`capabilities` still merges on top). The fake then answers the
    /// `tasks/*` methods of the era itself, before any handler.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub tasks: Vec<TaskScript>,
}

/// One scripted answer.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Handler {
    /// The JSON-RPC method this rule answers, e.g. `tools/list`.
    pub method: String,
    /// A matcher the request's `params` must satisfy (see the matcher rules: objects match as
    /// subsets, `{"$absent": true}` matches a missing member; `$capture`/`$same` do not apply
    /// here, since each request is matched on its own). Omit to match any params.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub params: Option<Value>,
    /// How long to wait before answering, in milliseconds, counted from the request's
    /// arrival (the reply also waits for the `sends` before it to be out).
    #[serde(default, skip_serializing_if = "is_default")]
    pub delay_ms: u64,
    /// What the fake does with the request.
    pub reply: Reply,
    /// Answer only the first this many requests the rule matches (at least 1); from then on
    /// the rule is passed over and the next matching rule answers (or the built-in default).
    /// Counted per fake: over HTTP across connections and sessions. E.g. a page that hands
    /// back its own cursor 20 times, then a rule for that cursor with a last page, so a client
    /// that follows a repeated cursor still finishes its listing. Omit to answer every
    /// request; not on a rule for a notification.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub times: Option<u32>,
    /// HTTP shape and faults of the answer (ignored over stdio).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub http: Option<HttpReply>,
    /// A hostile server's faults around the reply (junk before it, a cut, a drip, padding,
    /// a duplicate, a stderr flood, an exit after it).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub faults: Option<Faults>,
    /// Messages the server sends on its own initiative when this rule matches: requests to
    /// the client and notifications, before or after the reply. A rule may name a
    /// notification's method (`notifications/initialized`, `notifications/roots/list_changed`)
    /// with `"reply": "hang"` to send messages when that notification arrives, answering
    /// nothing (over HTTP the notification still gets 202, and the messages travel on the
    /// standalone GET stream). A rule's messages are played in order; a rule whose reply has
    /// `faults` sends them around the faulty reply; messages are not played for a request
    /// inside a JSON-RPC batch.
    ///
    /// 2026-07-28 era: `subscriptions/listen` is answered by the fake itself (a rule may
    /// still name it): the subscription's stream starts with
    /// `notifications/subscriptions/acknowledged` (`_meta`
    /// `io.modelcontextprotocol/subscriptionId` = the request's id, `notifications` = the
    /// filter asked for, or the rule's `result` when it has one), then carries the rule's
    /// `sends` in order (`at` and `via` do not apply), each notification given that
    /// subscription id in `params._meta` unless the message names one itself; the stream
    /// stays open, unanswered, until the client closes it (HTTP, recorded as
    /// `stream_closed`) or sends `notifications/cancelled` for it (stdio: no more messages).
    /// A message of the rule that answers the listen request (`{"jsonrpc": "2.0", "id":
    /// {"$request": "/id"}, "result": {…}}`) ends it gracefully: nothing follows it, and
    /// over HTTP the stream ends. A rule for it that errs, hangs or exits is played as it is.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub sends: Vec<Send>,
}

impl Handler {
    /// The built-in `echo` tool's rule: `tools/call` of `echo` answers the text `ok`.
    pub fn builtin_echo() -> Handler {
        Handler {
            method: "tools/call".into(),
            params: Some(serde_json::json!({"name": "echo"})),
            delay_ms: 0,
            reply: Reply::Result(serde_json::json!({"content": [{"type": "text", "text": "ok"}]})),
            times: None,
            http: None,
            faults: None,
            sends: Vec::new(),
        }
    }
}

/// What the fake does with a matched request.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
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
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
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

/// A server request a client may serve as a task (2025-11-25).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub enum TaskMethod {
    /// `sampling/createMessage`.
    #[serde(rename = "sampling/createMessage")]
    Sampling,
    /// `elicitation/create`.
    #[serde(rename = "elicitation/create")]
    Elicitation,
}

impl TaskMethod {
    /// The method's name.
    pub fn method(self) -> &'static str {
        match self {
            TaskMethod::Sampling => "sampling/createMessage",
            TaskMethod::Elicitation => "elicitation/create",
        }
    }
}

/// One step of the client's plan, as the driver contract defines it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(tag = "op", rename_all = "snake_case", deny_unknown_fields)]
pub enum Step {
    /// Start the transport and perform the handshake.
    Connect {
        /// The client's answers to requests the server sends it, by method
        /// (`roots/list`, `sampling/createMessage`, `elicitation/create`). The client
        /// declares exactly the client capabilities these imply, and no others (`roots`
        /// with `listChanged`, `sampling`, `elicitation`), answers each such request with
        /// the value given (see CLIENTS.md, Server requests), and reports every server
        /// request it received in the next `events` step. Absent: no client capabilities.
        /// In the 2026-07-28 era the same answers serve `input_required` results.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        handlers: Option<Map<String, Value>>,
        /// 2025-11-25: the methods among `handlers` the client also serves as tasks. The
        /// client declares `capabilities.tasks` (`list`, `cancel`, and these in `requests`)
        /// and answers a request of these methods that carries `params.task` with a
        /// CreateTaskResult at once; the handler's answer (after its `delay_ms`) is the
        /// task's result. It then answers `tasks/get`, `tasks/result`, `tasks/list` and
        /// `tasks/cancel` about its tasks (CLIENTS.md, Tasks).
        #[serde(default, skip_serializing_if = "Option::is_none")]
        tasks: Option<Vec<TaskMethod>>,
        /// A W3C trace context the client puts, as given, in the `_meta` of every request
        /// it sends (`traceparent`, `tracestate`, `baggage`; CLIENTS.md, Trace context). A
        /// client that makes a span per request may change the parent id and the flags,
        /// never the trace id. A library without propagation answers `unsupported_op`.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        trace_context: Option<TraceContext>,
    },
    /// List every tool, following pagination cursors.
    ListTools,
    /// Call one tool.
    CallTool {
        /// The tool's name.
        name: String,
        /// The tool's arguments (default `{}`).
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
        /// Ask for progress: the request carries a `progressToken` of the client's choosing
        /// in `params._meta`, and the progress notifications for it are reported by the next
        /// `events` step.
        #[serde(default, skip_serializing_if = "std::ops::Not::not")]
        progress: bool,
        /// With `progress`: restart the call's timeout whenever a progress notification for
        /// it arrives, but give up (`timeout`) once this many milliseconds have passed since
        /// the call was sent, whatever arrived. With `task`: give the whole task up after
        /// this many milliseconds since the call was sent (`tasks/cancel`, then `timeout`).
        /// A client that cannot do this answers `unsupported_op`.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        max_timeout_ms: Option<u64>,
        /// The caller accepts running this call as a task (2025-11-25 tasks, or the
        /// 2026-07-28 tasks extension): an object, whose `ttl` (milliseconds) a legacy
        /// client sends as `params.task.ttl`. Legacy: the call is task-augmented only when the
        /// server declared `tasks.requests.tools.call` and the tool's `execution.taskSupport`
        /// (from the last `list_tools`) is `optional` or `required`; modern: the request
        /// declares the tasks extension in its client capabilities. A task the server creates
        /// is driven to its end (polled, its input requests answered) and the final outcome
        /// reported as a plain call's; `cancel_after_ms` cancels it with `tasks/cancel`, and
        /// `max_timeout_ms` gives the whole task up (`tasks/cancel`, then `timeout`).
        #[serde(default, skip_serializing_if = "Option::is_none")]
        task: Option<Map<String, Value>>,
        /// With `task`: do not drive the task; report `{"task": <the task as received>}` as
        /// soon as the server created it (a plain result is reported as a plain call's).
        #[serde(default, skip_serializing_if = "std::ops::Not::not")]
        background: bool,
    },
    /// One `tasks/get` of the task `task_id`; reports `{"task": <the task as received>}`
    /// (`resultType` may be dropped).
    GetTask {
        /// The task's id, as the server gave it.
        task_id: String,
    },
    /// Cancel the task `task_id` with `tasks/cancel`; reports `{}`.
    CancelTask {
        /// The task's id, as the server gave it.
        task_id: String,
    },
    /// 2025-11-25 tasks: `tasks/result` of the task `task_id` (it blocks until the task
    /// ends), reported as `call_tool` reports a call's outcome.
    TaskResult {
        /// The task's id, as the server gave it.
        task_id: String,
    },
    /// 2025-11-25 tasks: list every task (`tasks/list`), following pagination cursors;
    /// reports `{"tasks": [<each task as received>]}`.
    ListTasks,
    /// Close the connection and shut the server down.
    Close,
    /// Report the tool names the client would expose to a model across every server it is
    /// connected to: `{"tools": [{"name": <exposed>, "server": <its server's name in
    /// MCP_HARNESS_SERVERS>, "tool": <the server's own name for it>}]}`, one entry per tool
    /// of each connected server (listed as the client needs; CLIENTS.md, Many servers). The
    /// names must be distinct; the naming scheme is the client's.
    ExposedTools,
    /// Modern era: send `server/discover` and report its result.
    Discover,
    /// Wait, then report `{}` (lets a cache entry expire).
    Sleep {
        /// How long to wait, in milliseconds.
        ms: u64,
    },
    /// List every resource (`resources/list`), following pagination cursors.
    ListResources,
    /// List every resource template (`resources/templates/list`), following cursors.
    ListResourceTemplates,
    /// Read one resource (`resources/read`).
    ReadResource {
        /// The resource's URI, sent as given.
        uri: String,
    },
    /// List every prompt (`prompts/list`), following pagination cursors.
    ListPrompts,
    /// Get one prompt (`prompts/get`).
    GetPrompt {
        /// The prompt's name.
        name: String,
        /// The prompt's arguments (left out of the request when absent).
        #[serde(default, skip_serializing_if = "Option::is_none")]
        arguments: Option<Map<String, Value>>,
    },
    /// Ask for completions (`completion/complete`); each member is passed as given.
    Complete {
        /// What is being completed: `{"type": "ref/prompt", "name": …}` or
        /// `{"type": "ref/resource", "uri": …}`.
        #[serde(rename = "ref")]
        reference: Value,
        /// The argument being completed: `{"name": …, "value": …}`.
        argument: Value,
        /// Other arguments already chosen, `{"arguments": {…}}` (left out when absent).
        #[serde(default, skip_serializing_if = "Option::is_none")]
        context: Option<Value>,
    },
    /// Send `ping` and report `{}`.
    Ping,
    /// Set the server's log level (`logging/setLevel`).
    SetLoggingLevel {
        /// The level: `debug`, `info`, `notice`, `warning`, `error`, `critical`, `alert` or
        /// `emergency` (any string is passed as given).
        level: String,
    },
    /// Replace the client's roots; a client that declared `roots` sends
    /// `notifications/roots/list_changed`, and answers later `roots/list` requests with
    /// these. Reports `{}`.
    SetRoots {
        /// The new roots, each `{"uri": "file://…", "name": …}`, passed as given.
        roots: Vec<Value>,
    },
    /// Report what the client surfaced to its caller since the previous `events` step (or
    /// since `connect`): server requests it answered, progress, log messages, list changes
    /// and resource updates, in arrival order (CLIENTS.md, Events).
    Events {
        /// Wait until at least this many events have arrived, for at most the request
        /// timeout, before reporting (default 0: report at once). Reporting fewer is not an
        /// error: the checks judge the list.
        #[serde(default, skip_serializing_if = "is_default")]
        min: u32,
    },
    /// Subscribe to one resource's updates (`resources/subscribe`, legacy eras).
    SubscribeResource {
        /// The resource's URI, sent as given.
        uri: String,
    },
    /// End a subscription to one resource's updates (`resources/unsubscribe`, legacy eras).
    UnsubscribeResource {
        /// The resource's URI, sent as given.
        uri: String,
    },
    /// Start these steps at once, each as its own op, without waiting for one to end before
    /// the next starts (two calls whose token expires together, say); when every one has
    /// ended, report `{"steps": [<each step's outcome, in the order given: {"ok": …} or
    /// {"error": {…}}>]}`. Only requests of the open connection (no `connect`, `close`,
    /// `sleep`, `events` or nested `together`), at least two.
    Together {
        /// The steps to run at once.
        steps: Vec<Step>,
    },
    /// 2026-07-28 era: open a `subscriptions/listen` stream with this `notifications`
    /// filter and keep it open until `close`; what it delivers is reported by `events`.
    /// Reports the acknowledged filter: `{"notifications": {…}}`.
    Listen {
        /// The filter, passed as given: `toolsListChanged`, `promptsListChanged`,
        /// `resourcesListChanged` (booleans), `resourceSubscriptions` (URIs).
        notifications: Value,
    },
    /// Fetch the icons the client would render: those of `serverInfo` and of every tool,
    /// prompt and resource the server lists (each listing it declared). Reports
    /// `{"fetched": [src…], "refused": [{"src", "reason"}…]}`: the icons whose bytes it got
    /// (a decoded `data:` URI counts), and the rest with a reason in its own words
    /// (CLIENTS.md, Icons).
    FetchIcons,
}

impl Step {
    /// The driver contract's "the step worked" requirement for this op: what a step that
    /// expects `ok` and names no requirement cites (see [`file::StepExpect::requirement`]).
    /// `connect` cites CONTRACT-10 (it reports the negotiated version and `serverInfo`), the
    /// ops CONTRACT-14 lists (the resources, prompts and completion ops, `ping`,
    /// `set_logging_level`) cite it, `together` CONTRACT-31, and every other op CONTRACT-8 (a successful step
    /// reports its result as the contract says).
    pub fn worked_requirement(&self) -> &'static str {
        match self {
            Step::Connect { .. } => "CONTRACT-10",
            Step::ListResources
            | Step::ListResourceTemplates
            | Step::ReadResource { .. }
            | Step::ListPrompts
            | Step::GetPrompt { .. }
            | Step::Complete { .. }
            | Step::Ping
            | Step::SetLoggingLevel { .. } => "CONTRACT-14",
            Step::ExposedTools => "CONTRACT-30",
            Step::Together { .. } => "CONTRACT-31",
            Step::GetTask { .. }
            | Step::CancelTask { .. }
            | Step::TaskResult { .. }
            | Step::ListTasks => "CONTRACT-8",
            Step::FetchIcons => "CONTRACT-26",
            _ => "CONTRACT-8",
        }
    }

    /// The op name, as it appears in the plan and in outcome lines.
    pub fn op(&self) -> &'static str {
        match self {
            Step::Connect { .. } => "connect",
            Step::ListTools => "list_tools",
            Step::CallTool { .. } => "call_tool",
            Step::Close => "close",
            Step::ExposedTools => "exposed_tools",
            Step::Discover => "discover",
            Step::Sleep { .. } => "sleep",
            Step::ListResources => "list_resources",
            Step::ListResourceTemplates => "list_resource_templates",
            Step::ReadResource { .. } => "read_resource",
            Step::ListPrompts => "list_prompts",
            Step::FetchIcons => "fetch_icons",
            Step::GetPrompt { .. } => "get_prompt",
            Step::Complete { .. } => "complete",
            Step::Ping => "ping",
            Step::SetLoggingLevel { .. } => "set_logging_level",
            Step::SetRoots { .. } => "set_roots",
            Step::Events { .. } => "events",
            Step::SubscribeResource { .. } => "subscribe_resource",
            Step::UnsubscribeResource { .. } => "unsubscribe_resource",
            Step::Listen { .. } => "listen",
            Step::GetTask { .. } => "get_task",
            Step::CancelTask { .. } => "cancel_task",
            Step::TaskResult { .. } => "task_result",
            Step::ListTasks => "list_tasks",
            Step::Together { .. } => "together",
        }
    }

    /// The ops that take no arguments, which a plan may write as a bare string.
    pub const BARE: &'static [Step] = &[
        Step::Connect {
            handlers: None,
            tasks: None,
            trace_context: None,
        },
        Step::Events { min: 0 },
        Step::ListTools,
        Step::Close,
        Step::Discover,
        Step::ListResources,
        Step::ListResourceTemplates,
        Step::ListPrompts,
        Step::Ping,
        Step::ListTasks,
        Step::ExposedTools,
        Step::FetchIcons,
    ];

    /// The step of an op that takes no arguments, by name.
    pub fn bare(op: &str) -> Option<Step> {
        Step::BARE.iter().find(|s| s.op() == op).cloned()
    }

    /// The names of the ops that take no arguments ([`Step::BARE`]).
    pub fn bare_ops() -> Vec<&'static str> {
        Step::BARE.iter().map(Step::op).collect()
    }
}

/// The driver contract's closed vocabulary of error kinds.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, JsonSchema)]
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
    /// A listing of resources, resource templates or prompts returned the same `uri`,
    /// `uriTemplate` or `name` twice.
    DuplicateName,
    /// The step needs a server capability the server did not declare; nothing was sent.
    CapabilityMissing,
    /// A tool's `structuredContent` does not validate against its `outputSchema`, or the
    /// schema cannot be evaluated.
    SchemaMismatch,
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
    /// Authorization could not be obtained or was given up (metadata missing or invalid,
    /// issuer mismatch, S256 not advertised, no registration path, a denied or error
    /// redirect, a `state` or `iss` mismatch, a refused token request, still 401/403 after
    /// the retry limit).
    AuthFailed,
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
            ErrorKind::DuplicateName => "duplicate_name",
            ErrorKind::CapabilityMissing => "capability_missing",
            ErrorKind::SchemaMismatch => "schema_mismatch",
            ErrorKind::Timeout => "timeout",
            ErrorKind::Cancelled => "cancelled",
            ErrorKind::TransportClosed => "transport_closed",
            ErrorKind::InvalidResponse => "invalid_response",
            ErrorKind::InsecureUrl => "insecure_url",
            ErrorKind::Tls => "tls",
            ErrorKind::HttpStatus => "http_status",
            ErrorKind::UnsupportedOp => "unsupported_op",
            ErrorKind::InputUnsupported => "input_unsupported",
            ErrorKind::AuthFailed => "auth_failed",
        }
    }
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
    /// The connections the trial's canary listener received (see [`canary`]), any transport.
    Canary,
    /// What the client printed: each stdout line, then each line of its stderr's tail (the
    /// last 8 KiB), as `{"stream": "stdout"|"stderr", "line": L}`. For values a client must
    /// never print, e.g. `"not_sent": {"line": {"$contains": "secret"}}`.
    ClientOutput,
    /// Both directions, in the order the fake recorded them: `{"from": "client", "message": M}`
    /// for what it received, `{"from": "fake", "message": M}` for what it wrote. The fake's
    /// own messages go out on its clock (a send's `delay_ms`), so ordering a client's message
    /// after one of them judges a delay by the fake's clock, not by the order of the client's
    /// other work (which the scheduler decides).
    Transcript,
    /// The spans the client exported in a traces case (`traces`), in the order received, as
    /// the transcript's `span` events show them: `{"name", "kind", "attributes", "events",
    /// "status", "trace_id", "span_id", …}`, secrets already replaced. For what a trace must
    /// show, e.g. `"sent": {"name": "tools/call book", "attributes": {"gen_ai.tool.name":
    /// "book"}}, "count": 2`.
    Spans,
}

/// Something that happened to the server process.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, JsonSchema)]
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
