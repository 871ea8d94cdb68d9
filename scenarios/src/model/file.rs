//! The shape of a case file, as people write it: defaults left out (both transports, the
//! era's protocol version, the usual timeouts), argument-less plan steps as bare strings,
//! each step's expectation on the step it judges, shared `fixtures` and the built-in `echo`
//! tool instead of copied handlers, and `variants` for a family of cases that differ in a
//! few values. `cargo xtask fmt-cases` writes every file in one canonical shape.

use std::borrow::Cow;
use std::collections::BTreeMap;

use schemars::{JsonSchema, Schema, SchemaGenerator, json_schema};
use serde::de::Error as _;
use serde::{Deserialize, Deserializer, Serialize, Serializer};
use serde_json::{Map, Value};

use super::check::{ErrorExpectation, StepOutcome};
use super::era::ClientEra;
use super::{ErrorKind, Handler, LifecycleEvent, ServerScript, Step, Transport};

mod wire;
pub use wire::{RawWireCheck, WireCheck};

// The named time budgets. Every duration of a resolved case is either stated by its file or
// one of these, and the runner multiplies all of them by one factor (`model::timing`), so
// case authors write durations for an idle machine and keep their relations, never absolute
// margins for a slow one.

/// Default per-request timeout, in milliseconds: the budget of one request the client makes.
pub const DEFAULT_TIMEOUT_MS: u64 = 5_000;
/// Default grace per shutdown step, in milliseconds: the budget of each step of a shutdown.
pub const DEFAULT_SHUTDOWN_GRACE_MS: u64 = 300;
/// Default trial deadline, in milliseconds: the budget of a whole trial, start to exit.
pub const DEFAULT_DEADLINE_MS: u64 = 10_000;

/// Both transports, stdio first: the default of `transports`.
pub fn default_transports() -> Vec<Transport> {
    vec![Transport::Stdio, Transport::Https]
}

fn is_both(t: &[Transport]) -> bool {
    t == default_transports().as_slice()
}
fn default_timeout_ms() -> u64 {
    DEFAULT_TIMEOUT_MS
}
fn is_default_timeout(n: &u64) -> bool {
    *n == DEFAULT_TIMEOUT_MS
}
fn default_shutdown_grace_ms() -> u64 {
    DEFAULT_SHUTDOWN_GRACE_MS
}
fn is_default_grace(n: &u64) -> bool {
    *n == DEFAULT_SHUTDOWN_GRACE_MS
}
fn default_deadline_ms() -> u64 {
    DEFAULT_DEADLINE_MS
}
fn is_default_deadline(n: &u64) -> bool {
    *n == DEFAULT_DEADLINE_MS
}
fn is_false(b: &bool) -> bool {
    !*b
}
fn is_default_server(s: &ServerScript) -> bool {
    *s == ServerScript::default()
}

/// One conformance case: the fake server's script, the client's plan with what each step
/// must report, and what must be seen on the wire and of the server process.
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct CaseFile {
    /// Path of the JSON Schema for editors (for example `"../scenario.schema.json"`); the harness ignores it.
    #[serde(rename = "$schema", default, skip_serializing_if = "Option::is_none")]
    pub schema: Option<String>,
    /// One line saying which behaviour or fault this case exercises.
    pub description: String,
    /// The id of the requirement this case checks, from the catalogue
    /// `scenarios/requirements.json`. Every check of the case cites it unless the check names
    /// its own; a check's level is its requirement's.
    pub requirement: String,
    /// Transports the case runs on; one trial per transport, named `<case-id>@<transport>`.
    /// Default: both, `["stdio", "https"]`; write it only for a transport-specific case.
    #[serde(default = "default_transports", skip_serializing_if = "is_both")]
    pub transports: Vec<Transport>,
    /// Protocol version the client is asked to offer (`MCP_HARNESS_PROTOCOL_VERSION`).
    /// Default: the era's, `2025-03-26` for the legacy era (no `client_era`) and `2026-07-28`
    /// for a modern or dual-era client.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub protocol_version: Option<String>,
    /// The era the client is asked to speak (`MCP_HARNESS_ERA`); omitted, the variable is
    /// not set and the client speaks the legacy era (the `initialize` handshake).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub client_era: Option<ClientEra>,
    /// Dual-era clients only: the version of the fallback `initialize`
    /// (`MCP_HARNESS_LEGACY_PROTOCOL_VERSION`; default `2025-11-25`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub legacy_protocol_version: Option<String>,
    /// Protocol revisions the case applies to. Given, the case runs once per transport per
    /// revision, as trials named `<case-id>@<transport>@<revision>`, with the revision as
    /// `MCP_HARNESS_PROTOCOL_VERSION` (for a dual-era client, a legacy revision is the
    /// fallback version `MCP_HARNESS_LEGACY_PROTOCOL_VERSION` instead) and the fake playing
    /// that revision. Matchers can name the offered version as `{"$same": "revision"}` (and a
    /// dual-era client's fallback version as `{"$same": "legacy_revision"}`).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub revisions: Vec<String>,
    /// A family of cases in one file: a map from variant name to the values (an object) that
    /// replace each `{"$var": "<name>"}` anywhere in the file. Variant `V` of `area/file.json`
    /// is the case `area/file-V`, with trials named after it. Works beside `revisions`.
    #[serde(default, skip_serializing_if = "Map::is_empty")]
    pub variants: Map<String, Value>,
    /// Per-request timeout the client is asked to apply, in milliseconds
    /// (`MCP_HARNESS_TIMEOUT_MS`; default 5000).
    #[serde(
        default = "default_timeout_ms",
        skip_serializing_if = "is_default_timeout"
    )]
    pub timeout_ms: u64,
    /// Grace the client is asked to give the server at each shutdown step, in milliseconds
    /// (`MCP_HARNESS_SHUTDOWN_GRACE_MS`, a hint that clients may ignore; default 300).
    #[serde(
        default = "default_shutdown_grace_ms",
        skip_serializing_if = "is_default_grace"
    )]
    pub shutdown_grace_ms: u64,
    /// Wall-clock limit of the whole trial in milliseconds (default 10000). When it passes,
    /// the client's process group is killed and the trial fails with what was seen so far,
    /// at `must` (CONTRACT-3) whatever the case's level. So the loader asks it to cover a
    /// correct but slow client: at least the plan's budget, one `timeout_ms` (for starting,
    /// the answered steps and closing) plus, for each step that may end by its timeout (its
    /// `error` accepts `timeout`) or its cancel, that bound (`timeout_ms`, `max_timeout_ms`
    /// with progress, `cancel_after_ms` when shorter), plus every `sleep`.
    #[serde(
        default = "default_deadline_ms",
        skip_serializing_if = "is_default_deadline"
    )]
    pub deadline_ms: u64,
    /// An admitted gap of the deadline lint: why a client that misses only one of this case's
    /// `should`, `profile` or `advisory` checks can loop (follow a repeated cursor, step up
    /// again) or wait (for an answer that never comes) until the trial deadline, where the always-on deadline check fails it at
    /// `must` (CONTRACT-3), and why the case cannot end the loop itself. Without it the loader
    /// rejects such a case: a case bounds the loop in its script instead (pages that end, a
    /// step that accepts `timeout` with the deadline well past it), so a failed check keeps
    /// its own level. Remove it once the fakes can end the loop; the loader also rejects it on
    /// a case with no such loop.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub unbounded_loop: Option<String>,
    /// Over HTTP, hand the client a fresh bearer token (`MCP_HARNESS_BEARER_TOKEN`) that the
    /// fake requires on every request (401 without it). Transcripts record only whether the
    /// right token came, never the token.
    #[serde(default, skip_serializing_if = "is_false")]
    pub bearer_token: bool,
    /// Where the client's network is. `host` (the default): the runner's own. `isolated`: the
    /// trial runs the client inside a network namespace the runner makes for it (https only),
    /// where private (10.0.0.1, 172.16.0.1, 192.168.0.1), loopback-alias (127.0.0.2),
    /// link-local (169.254.1.1), cloud-metadata (169.254.169.254) and IPv6 ULA (fd00::1)
    /// addresses exist only as aliases on the namespace's own loopback, each with a canary
    /// listener on ports 80, 443 and 8443 that a wire check `on: "canary"` sees
    /// (`{"connected": true, "address": "10.0.0.1:443", …}`), and the HTTPS fake listens on
    /// port 8443 of `localhost` and of 203.0.113.10 (a public-looking address) there. Names resolve through a DNS fake
    /// there (`/etc/hosts` is kept): `public.test` is 203.0.113.10, `private.test` 10.0.0.1,
    /// `metadata.test` 169.254.169.254, and `rebind.test` is 203.0.113.10 the first time it is
    /// asked for and 169.254.169.254 from then on (DNS rebinding); the run's certificate is
    /// valid for all four. Where the runner cannot make a namespace (no privilege), the trial
    /// is graded `unimplemented` with that reason and the client is never run outside one.
    #[serde(default, skip_serializing_if = "is_default_network")]
    pub network: Network,
    /// The official conformance suite's scenario with the same meaning (e.g. `initialize`,
    /// `tools_call`); clients get it as `MCP_CONFORMANCE_SCENARIO`, so the suite's existing
    /// conformance clients run this case unmodified (with `MCP_CONFORMANCE_CONTEXT` where a
    /// pre-registered client gives it data). When no stdout line is a JSON object with a
    /// `step` or an `op`, the client's stdout is its log and the case is judged on the wire
    /// alone.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub official_scenario: Option<String>,
    /// Whether `mcp-harness serve` may play this case for a host that connects on its own
    /// (host mode: no plan is handed to it; the case's wire and lifecycle checks are judged
    /// once the host has done every step of the plan). `true`: servable; `false`: not;
    /// absent: derived. A case is derived servable when it has a wire check (not
    /// `on: "client_output"`) or a lifecycle check citing no `CONTRACT-*` requirement (the
    /// contract binds no host), needs nothing only a driver can be told
    /// (no `server.auth`, `bearer_token`, isolated `network`, `needs` or `client_era`), and
    /// every step is a request a host makes of its own accord: `connect` without options,
    /// the listings, `call_tool` with only a name and arguments, `read_resource`,
    /// `get_prompt`, `complete`, `ping`, `close`; and no step expects only a `timeout` (the
    /// host's own timer is not the case's). A host need not show a step the plan expects a
    /// client to fail without sending: those after a `connect` that must fail, and one whose
    /// main expected error is `capability_missing`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub host: Option<bool>,
    /// Ask the client for its OpenTelemetry traces (CLIENTS.md § Traces): the trial starts a
    /// loopback OTLP/HTTP receiver and hands the client `MCP_HARNESS_TRACES=1` with the
    /// standard `OTEL_EXPORTER_OTLP_*` variables pointing at it. The spans it exports go into
    /// the transcript and the report beside the wire messages, and the always-on span checks
    /// (`ADV-OTEL-*`, and `CONTRACT-33`: no secret in a span) judge them. Never servable by
    /// `mcp-harness serve`, whatever `host` says: a host is not told to trace.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub traces: Option<super::traces::Traces>,
    /// What the case asks of a client beyond the contract's minimum. `choose_version`: the
    /// client offers the version it is told (`MCP_HARNESS_PROTOCOL_VERSION`), where the case
    /// depends on it (a made-up version, say). A client whose adapter declares that it cannot
    /// (`"limits"` on its connect line, see CLIENTS.md) is graded `unimplemented` on such a
    /// case instead of `fail`. `choose_elicitation_modes`: the client declares only the
    /// elicitation modes its handler answers (form alone, say), where the case depends on it
    /// (a request in a mode the client left out). `modern_only`: the client, asked for the
    /// modern era, never falls back to `initialize`, where the case depends on it (a legacy
    /// server that a modern-only client must refuse). `dual_fallback`: the client, asked for
    /// the dual era, falls back to `initialize` where the server is a legacy one.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub needs: Vec<Need>,
    /// Shared pieces of the fake's script, by name: `scenarios/fixtures/<name>.json`. Their
    /// handlers are tried after the case's own, in the order listed.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub fixtures: Vec<String>,
    /// The fake server's script.
    #[serde(default, skip_serializing_if = "is_default_server")]
    pub server: ServerScript,
    /// Extra servers the client is given beside the main one (`server`), by name: each a
    /// whole script played by a fake of its own on the trial's transport (over stdio its own
    /// argv and transcript, over https its own endpoint). The client gets them all in
    /// `MCP_HARNESS_SERVERS`, the main one as `main`; a step or a wire check names one with
    /// `server`. Names are lower-case letters, digits, `-` and `_`, and not `main`. Fixtures
    /// and `needs` apply to the main server only; the built-in `echo` is added to an extra
    /// server whose steps call it.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub servers: BTreeMap<String, ServerScript>,
    /// The steps the client is asked to perform, in order (`MCP_HARNESS_PLAN`). A step
    /// without arguments and without an expectation is written as its op alone: `"connect"`.
    pub plan: Vec<PlanStep>,
    /// What the fake must (or must not) have received from the client. Every case needs at
    /// least one wire check other than `not_sent` or one lifecycle check, so that a client
    /// which only prints plausible outcome lines cannot pass.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub wire: Vec<WireCheck>,
    /// How the stdio server process must have been shut down (stdio-only cases).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub lifecycle: Vec<LifecycleCheck>,
}

/// Where a trial's client runs, network-wise (see [`CaseFile::network`]).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum Network {
    /// The runner's own network (loopback fakes).
    #[default]
    Host,
    /// A network namespace made for the trial, with canary aliases and a DNS fake.
    Isolated,
}

fn is_default_network(n: &Network) -> bool {
    *n == Network::Host
}

/// One plan step, with what it must report. Either an op without arguments as a string
/// (`"connect"`, `"list_tools"`, `"ping"`, …), or an object with `op`, the op's
/// arguments and, when the step is checked, its expectation beside them: `ok` or `error`,
/// an optional `requirement` and `broken_by`.
#[derive(Debug, Clone, PartialEq)]
pub struct PlanStep {
    /// The step.
    pub step: Step,
    /// The server the step is about: a name of the case's `servers`; `None`: the main one.
    pub server: Option<String>,
    /// What the step must report, if it is checked.
    pub expect: Option<StepExpect>,
}

/// The member of a step object naming the server the step is about (`servers`).
const SERVER_KEY: &str = "server";

/// The members of a step object that belong to its expectation.
const EXPECT_KEYS: [&str; 5] = ["ok", "error", "requirement", "when", "broken_by"];

impl<'de> Deserialize<'de> for PlanStep {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let value = Value::deserialize(d)?;
        let mut map = match value {
            Value::String(op) => {
                return Step::bare(&op)
                    .map(|step| PlanStep {
                        step,
                        server: None,
                        expect: None,
                    })
                    .ok_or_else(|| {
                        D::Error::custom(format!(
                            "{op:?} is not an op without arguments; expected one of {:?} or an object with `op`",
                            Step::bare_ops()
                        ))
                    });
            }
            Value::Object(map) => map,
            other => {
                return Err(D::Error::custom(format!(
                    "expected an op name or an object with `op`, found {other}"
                )));
            }
        };
        let mut expect = Map::new();
        for key in EXPECT_KEYS {
            if let Some(v) = map.remove(key) {
                expect.insert(key.into(), v);
            }
        }
        let server = match map.remove(SERVER_KEY) {
            None => None,
            Some(Value::String(name)) => Some(name),
            Some(other) => {
                return Err(D::Error::custom(format!(
                    "`server` is {other}; expected the name of one of the case's `servers`"
                )));
            }
        };
        let step = serde_json::from_value::<Step>(Value::Object(map)).map_err(D::Error::custom)?;
        let expect = match expect.is_empty() {
            true => None,
            false => Some(
                serde_json::from_value::<StepExpect>(Value::Object(expect))
                    .map_err(D::Error::custom)?,
            ),
        };
        Ok(PlanStep {
            step,
            server,
            expect,
        })
    }
}

impl Serialize for PlanStep {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let mut step = serde_json::to_value(&self.step).map_err(serde::ser::Error::custom)?;
        let Some(map) = step.as_object_mut() else {
            return Err(serde::ser::Error::custom("a step serializes as an object"));
        };
        if map
            .get("arguments")
            .is_some_and(|a| a.as_object().is_some_and(Map::is_empty))
        {
            map.remove("arguments");
        }
        if let Some(server) = &self.server {
            map.insert(SERVER_KEY.into(), Value::from(server.as_str()));
        }
        match &self.expect {
            None if map.len() == 1 => return s.serialize_str(self.step.op()),
            None => {}
            Some(e) => {
                let e = serde_json::to_value(e).map_err(serde::ser::Error::custom)?;
                if let Value::Object(members) = e {
                    map.extend(members);
                }
            }
        }
        step.serialize(s)
    }
}

impl JsonSchema for PlanStep {
    fn schema_name() -> Cow<'static, str> {
        "PlanStep".into()
    }

    fn json_schema(generator: &mut SchemaGenerator) -> Schema {
        let expect = RawStepExpect::json_schema(generator).to_value();
        let mut members = expect.get("properties").cloned().unwrap_or_default();
        if let Some(members) = members.as_object_mut() {
            members.insert(
                SERVER_KEY.into(),
                serde_json::json!({
                    "type": "string",
                    "description": "The server this step is about: a name of the case's `servers` (each extra server is its own connection). Omitted: the main server."
                }),
            );
        }
        let mut step = Step::json_schema(generator).to_value();
        // Each op's object form may also carry its expectation.
        if let Some(branches) = step.get_mut("oneOf").and_then(Value::as_array_mut) {
            for branch in branches {
                if let (Some(props), Some(extra)) = (
                    branch.get_mut("properties").and_then(Value::as_object_mut),
                    members.as_object(),
                ) {
                    props.extend(extra.clone());
                }
            }
        }
        json_schema!({
            "description": "One plan step: an op without arguments as a string, or an object with `op`, its arguments and, when the step is checked, `ok` or `error` with `broken_by` (and optionally `requirement` and `when`).",
            "anyOf": [
                {
                    "type": "string",
                    "enum": Step::bare_ops(),
                    "description": "An op without arguments, unchecked."
                },
                step
            ]
        })
    }
}

/// What one plan step must report: `ok`, `error`, or both (either is right), with the broken clients
/// that must fail this check.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(try_from = "RawStepExpect", into = "RawStepExpect")]
#[schemars(with = "RawStepExpect")]
pub struct StepExpect {
    /// What it must report.
    pub outcome: StepOutcome,
    /// The requirement this check cites, when the step names one; else see
    /// [`StepExpect::cited`].
    pub requirement: Option<String>,
    /// A matcher: the check binds only once the client sent a message matching it.
    pub when: Option<Value>,
    /// The broken clients that must fail this check.
    pub broken_by: Vec<String>,
}

/// What one plan step must report: `ok`, `error`, or both where the requirement leaves the
/// choice open (either report is then right).
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields, rename = "StepExpect")]
pub struct RawStepExpect {
    /// The step must succeed, and its `ok` object must satisfy this matcher (`{}` accepts any
    /// success). `{"$fake": "serverInfo"}` stands for the fakes' `serverInfo`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    ok: Option<Value>,
    /// The step must fail with this error: a kind (`"timeout"`), a list of kinds that are
    /// equally right where the requirement leaves the choice open
    /// (`["insecure_url", "http_status"]`), or `{"kind", "code", "status"}`, where `code` and
    /// `status` bind only the first kind listed (the others are accepted whatever they carry).
    /// Given with `ok`, either report is right: for what the requirement leaves open between
    /// going on and refusing.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    error: Option<ErrorSpec>,
    /// The id of the requirement this check cites. Without it a step that expects `ok`
    /// alone is taken for a setup step, not the case's subject, and cites the driver
    /// contract's "the step worked" requirement for its op: CONTRACT-10 for `connect`,
    /// CONTRACT-14 for the resources, prompts and completion ops, `ping` and
    /// `set_logging_level`, CONTRACT-8 for the others. A step that expects `error` (or
    /// either) cites the case's requirement. A step whose success is what the case is about
    /// names its requirement here, the case's own included.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    requirement: Option<String>,
    /// A matcher over the messages the fake received: the check binds only once the client
    /// sent one that matches. For a report about an exchange a client may never start (the
    /// error answering a second page's cursor, from a client that never asks for it), so the
    /// step is not judged for what did not happen; another check judges that.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    when: Option<Value>,
    /// The deliberately broken clients that must fail this check: a `--defect` of the
    /// reference driver or a double of `runner/tests/doubles.json`, optionally suffixed
    /// `@stdio`/`@https` and `@<revision>`/`@<variant>` to pick the trial (default: the case's
    /// first trial where the check is made, stdio before https, first revision and variant),
    /// or `@<transport>@*` for every revision and variant on that transport.
    #[serde(default)]
    broken_by: Vec<String>,
}

impl StepExpect {
    /// The id of the requirement this step's check cites: the one it names, else for a
    /// step expecting `ok` alone the contract's "the step worked" requirement for `step`'s
    /// op ([`Step::worked_requirement`]), else `None`: the case's requirement.
    pub fn cited(&self, step: &Step) -> Option<&str> {
        match (&self.requirement, &self.outcome) {
            (Some(id), _) => Some(id),
            (None, StepOutcome::Ok(_)) => Some(step.worked_requirement()),
            (None, _) => None,
        }
    }
}

impl TryFrom<RawStepExpect> for StepExpect {
    type Error = String;

    fn try_from(raw: RawStepExpect) -> Result<Self, String> {
        let outcome = match (raw.ok, raw.error) {
            (Some(ok), None) => StepOutcome::Ok(ok),
            (None, Some(e)) => StepOutcome::Error(e.0),
            (Some(ok), Some(e)) => StepOutcome::Either { ok, error: e.0 },
            (None, None) => return Err("expected `ok`, `error` or both".into()),
        };
        Ok(StepExpect {
            outcome,
            requirement: raw.requirement,
            when: raw.when,
            broken_by: raw.broken_by,
        })
    }
}

impl From<StepExpect> for RawStepExpect {
    fn from(e: StepExpect) -> Self {
        let (ok, error) = match e.outcome {
            StepOutcome::Ok(ok) => (Some(ok), None),
            StepOutcome::Error(e) => (None, Some(ErrorSpec(e))),
            StepOutcome::Either { ok, error } => (Some(ok), Some(ErrorSpec(error))),
        };
        RawStepExpect {
            ok,
            error,
            requirement: e.requirement,
            when: e.when,
            broken_by: e.broken_by,
        }
    }
}

/// The error a step must report: a kind, a list of equally right kinds, or
/// `{"kind": kind or kinds, "code": JSON-RPC code, "status": HTTP status}`; with several
/// kinds, `code` and `status` bind only the first.
#[derive(Debug, Clone, PartialEq)]
pub struct ErrorSpec(pub ErrorExpectation);

#[derive(Deserialize, Serialize, JsonSchema)]
#[serde(untagged)]
enum OneOrMany {
    One(ErrorKind),
    Many(Vec<ErrorKind>),
}

#[derive(Deserialize, Serialize, JsonSchema)]
#[serde(deny_unknown_fields)]
struct ErrorObject {
    /// The error kind, from the driver contract's closed vocabulary, or a list of kinds that
    /// are equally right.
    kind: OneOrMany,
    /// The JSON-RPC error code that caused it, when one did. With several kinds, it binds
    /// only the first kind listed: a report of another listed kind passes whatever its code.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    code: Option<i64>,
    /// With `http_status`: the HTTP status. With several kinds, it binds only the first kind
    /// listed (`{"kind": ["http_status", "transport_closed"], "status": 500}`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    status: Option<u16>,
}

/// The error a step must report.
#[derive(JsonSchema)]
#[serde(untagged)]
#[allow(dead_code)]
enum ErrorSpecShape {
    /// One kind, e.g. `"timeout"`.
    Kind(ErrorKind),
    /// Kinds that are equally right, e.g. `["insecure_url", "http_status"]`.
    Kinds(Vec<ErrorKind>),
    /// A kind (or kinds) with the JSON-RPC `code` and/or HTTP `status` that must come with it
    /// (with several kinds, with the first one only).
    Full(ErrorObject),
}

impl JsonSchema for ErrorSpec {
    fn schema_name() -> Cow<'static, str> {
        "ErrorSpec".into()
    }
    fn json_schema(generator: &mut SchemaGenerator) -> Schema {
        ErrorSpecShape::json_schema(generator)
    }
}

impl<'de> Deserialize<'de> for ErrorSpec {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let value = Value::deserialize(d)?;
        let kinds = |v: Value| -> Result<Vec<ErrorKind>, D::Error> {
            let kinds = match serde_json::from_value::<OneOrMany>(v.clone()) {
                Ok(OneOrMany::One(k)) => vec![k],
                Ok(OneOrMany::Many(ks)) => ks,
                Err(_) => {
                    return Err(D::Error::custom(format!(
                        "{v} is not an error kind of the driver contract (e.g. \"timeout\", \"protocol_error\") or a list of them"
                    )));
                }
            };
            if kinds.is_empty() {
                return Err(D::Error::custom("expected at least one error kind"));
            }
            Ok(kinds)
        };
        match value {
            Value::Object(_) => {
                let o: ErrorObject = serde_json::from_value(value).map_err(D::Error::custom)?;
                let kinds = kinds(serde_json::to_value(&o.kind).map_err(D::Error::custom)?)?;
                Ok(ErrorSpec(ErrorExpectation {
                    kinds,
                    code: o.code,
                    status: o.status,
                }))
            }
            other => Ok(ErrorSpec(ErrorExpectation {
                kinds: kinds(other)?,
                code: None,
                status: None,
            })),
        }
    }
}

impl Serialize for ErrorSpec {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let e = &self.0;
        let kind = match e.kinds.as_slice() {
            [one] => OneOrMany::One(*one),
            many => OneOrMany::Many(many.to_vec()),
        };
        if e.code.is_none() && e.status.is_none() {
            return kind.serialize(s);
        }
        ErrorObject {
            kind,
            code: e.code,
            status: e.status,
        }
        .serialize(s)
    }
}

/// A check on how the stdio server process ended.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct LifecycleCheck {
    /// One line saying what is checked; it names the check in reports.
    pub check: String,
    /// The server process's lifecycle events, exactly and in order, from its first launch.
    pub events: Vec<LifecycleEvent>,
    /// The id of the requirement this check cites, if not the case's.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub requirement: Option<String>,
    /// The deliberately broken clients that must fail this check (see a step's `broken_by`).
    #[serde(default)]
    pub broken_by: Vec<String>,
}

/// A shared piece of a fake server's script (`scenarios/fixtures/<name>.json`), for servers
/// many cases reuse; a case lists it in `fixtures`, and its handlers are tried after the
/// case's own.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Fixture {
    /// Path of the JSON Schema for editors (`"../fixture.schema.json"`); ignored.
    #[serde(rename = "$schema", default, skip_serializing_if = "Option::is_none")]
    pub schema: Option<String>,
    /// One line saying what this piece of server does.
    pub description: String,
    /// Its answers, as a case's `server.handlers`.
    pub handlers: Vec<Handler>,
}

/// An ability a case depends on that a real library may lack.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum Need {
    /// Offering exactly the protocol version `MCP_HARNESS_PROTOCOL_VERSION` names.
    ChooseVersion,
    /// Declaring only the elicitation modes the `connect` handlers answer (a library may
    /// declare every mode it supports whenever it is given an elicitation handler).
    ChooseElicitationModes,
    /// Speaking 2026-07-28 without ever falling back to `initialize` (`MCP_HARNESS_ERA`
    /// `modern`): a library that always probes and falls back runs modern trials as `dual`,
    /// which a modern server cannot tell apart, except where the case is about a modern-only
    /// client meeting a legacy server.
    ModernOnly,
    /// Falling back from a 2026-07-28 probe to `initialize` (`MCP_HARNESS_ERA` `dual`) when
    /// the server is a legacy one: a library that speaks only 2026-07-28 connects as modern
    /// and declares the limit, so the dual cases against a modern server are judged and
    /// those that need the fallback grade `unimplemented`.
    DualFallback,
    /// Running a tool call as a task (the 2025-11-25 tasks or the 2026-07-28 extension): a
    /// library without tasks can only call a tool plainly, even one whose
    /// `execution.taskSupport` is `required`. The kits declare it for an adapter without
    /// their `tasks` feature.
    Tasks,
}

impl Need {
    /// The name used in case files and in an adapter's `limits`.
    pub fn as_str(self) -> &'static str {
        match self {
            Need::ChooseVersion => "choose_version",
            Need::ChooseElicitationModes => "choose_elicitation_modes",
            Need::ModernOnly => "modern_only",
            Need::DualFallback => "dual_fallback",
            Need::Tasks => "tasks",
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_bare_op_reads_back_as_the_string_it_is_written_as() {
        for op in Step::bare_ops() {
            let step: PlanStep = serde_json::from_value(Value::from(op)).unwrap();
            assert_eq!(step.step.op(), op);
            assert_eq!(serde_json::to_value(&step).unwrap(), Value::from(op));
        }
        let err = serde_json::from_value::<PlanStep>(Value::from("read_resource")).unwrap_err();
        assert!(
            err.to_string().contains("not an op without arguments"),
            "{err}"
        );
    }

    #[test]
    fn ops_with_arguments_keep_them() {
        let step: PlanStep = serde_json::from_value(serde_json::json!({
            "op": "complete",
            "ref": {"type": "ref/prompt", "name": "p"},
            "argument": {"name": "a", "value": "x"},
            "ok": {"values": ["xy"]},
            "broken_by": ["do-nothing"]
        }))
        .unwrap();
        assert!(matches!(step.step, Step::Complete { context: None, .. }));
        let back = serde_json::to_value(&step).unwrap();
        assert_eq!(back["ref"]["name"], "p");
        assert_eq!(back["ok"]["values"][0], "xy");
    }
}
