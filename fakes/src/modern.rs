//! The modern (2026-07-28) era of a fake, transport-independent: which era serves a request
//! (a dual fake serves both), the per-request checks a modern server makes before any
//! handler runs (`_meta` present, version supported, HTTP headers matching the body), and the
//! built-in modern answers (`server/discover`, `resultType`, cache hints).
//!
//! Refusals carry the HTTP status the transport uses (400, or 404 for an unknown method), so
//! the stdio fake and the HTTP fake refuse the same requests with the same JSON-RPC errors.

pub mod params;

use mcp_harness_scenarios::model::era::{self, meta};
use mcp_harness_scenarios::model::{Reply, RpcError, ServerEra, ServerScript};
use serde_json::{Value, json};

use crate::jsonrpc::METHOD_NOT_FOUND;
use crate::script::{self, Answer, SERVER_NAME};

/// JSON-RPC code for invalid params (a request without the required `_meta`).
pub const INVALID_PARAMS: i64 = -32602;
/// JSON-RPC code for HTTP headers that do not match the body (HeaderMismatch).
pub const HEADER_MISMATCH: i64 = -32020;
/// JSON-RPC code for an unsupported protocol version (UnsupportedProtocolVersion).
pub const UNSUPPORTED_VERSION: i64 = -32022;

/// The `_meta` member naming the subscription a message belongs to: the id of the
/// `subscriptions/listen` request that opened it.
pub const SUBSCRIPTION_ID: &str = "io.modelcontextprotocol/subscriptionId";

/// The methods whose `Mcp-Name` header mirrors a body field, and that field.
const NAMED: [(&str, &str); 6] = [
    ("tools/call", "name"),
    ("prompts/get", "name"),
    ("resources/read", "uri"),
    ("tasks/get", "taskId"),
    ("tasks/update", "taskId"),
    ("tasks/cancel", "taskId"),
];

/// Reads an HTTP request header by its lower-case name.
pub type HeaderReader<'a> = &'a dyn Fn(&str) -> Option<String>;

/// A request the fake refuses before any handler sees it.
#[derive(Debug, Clone)]
pub struct Refusal {
    /// The HTTP status of the refusal (the stdio fake ignores it).
    pub status: u16,
    /// The JSON-RPC error, answered with the request's id.
    pub error: RpcError,
}

/// What the fake does with a request.
#[derive(Debug, Clone)]
pub enum Decision {
    /// Play this answer (a handler's, or a built-in one).
    Answer(Box<Answer>),
    /// Refuse it with this error.
    Refuse(Refusal),
}

/// Whether a request is served by the modern era: always by a modern fake, never by a legacy
/// one; by a dual fake when it is `server/discover` or carries a `_meta` protocol version.
pub fn is_modern(script: &ServerScript, method: &str, params: Option<&Value>) -> bool {
    match script.era {
        ServerEra::Legacy => false,
        ServerEra::Modern => true,
        ServerEra::Dual => method == "server/discover" || era::meta_version(params).is_some(),
    }
}

/// Decides the answer to a request. `header` reads an HTTP request header (lower-case
/// name); over stdio it is `None` and no header is checked. A modern request the task
/// engine answers (`tasks`, after the checks) goes no further; a legacy one is left to the
/// transport, which knows the version in force (see [`crate::tasks::Store::legacy`]).
pub fn decide(
    script: &ServerScript,
    tally: &script::Tally,
    tasks: &crate::tasks::Store,
    revision: Option<&str>,
    method: &str,
    params: Option<&Value>,
    header: Option<HeaderReader<'_>>,
) -> Decision {
    if !is_modern(script, method, params) {
        return Decision::Answer(Box::new(script::choose_at(
            script, tally, revision, method, params,
        )));
    }
    if let Err(refusal) = admit(script, method, params, header) {
        return Decision::Refuse(refusal);
    }
    if let Some(answer) = tasks.modern(script, method, params) {
        return Decision::Answer(Box::new(answer));
    }
    let mut answer = script::choose_at(script, tally, revision, method, params);
    let handled = script.handlers.iter().any(|h| h.method == method);
    if method == "subscriptions/listen" {
        // Built in: acknowledged with the filter asked for, or the one a rule's result
        // gives; a rule that errs, hangs or exits is played as it is.
        let filter = match (&answer.reply, handled) {
            (_, false) => Some(
                params
                    .and_then(|p| p.get("notifications"))
                    .cloned()
                    .unwrap_or_else(|| json!({})),
            ),
            (Reply::Result(result), true) => Some(result.clone()),
            _ => None,
        };
        if let Some(filter) = filter {
            answer.reply = Reply::Hang;
            answer.listen = Some(filter);
            return Decision::Answer(Box::new(answer));
        }
    }
    if !handled {
        answer.reply = match method {
            "server/discover" => Reply::Result(discover_result(script)),
            "tools/list" => answer.reply,
            _ => {
                return Decision::Refuse(Refusal {
                    status: 404,
                    error: RpcError {
                        code: METHOD_NOT_FOUND,
                        message: "Method not found".into(),
                        data: None,
                    },
                });
            }
        };
    }
    if let Reply::Result(Value::Object(result)) = &mut answer.reply {
        if script.modern.add_result_type && !result.contains_key("resultType") {
            result.insert("resultType".into(), "complete".into());
        }
        // A cacheable result must carry its hints; a built-in listing is never fresh.
        if method == "tools/list" && !handled {
            result.insert("ttlMs".into(), 0.into());
            result.insert("cacheScope".into(), "public".into());
        }
    }
    Decision::Answer(Box::new(answer))
}

/// The checks a modern server makes on every request before serving it.
fn admit(
    script: &ServerScript,
    method: &str,
    params: Option<&Value>,
    header: Option<HeaderReader<'_>>,
) -> Result<(), Refusal> {
    if method == "initialize" {
        // No handshake in this era: `initialize` is just a method the server does not have.
        return Err(Refusal {
            status: 404,
            error: RpcError {
                code: METHOD_NOT_FOUND,
                message: "Method not found".into(),
                data: None,
            },
        });
    }
    let meta = params.and_then(|p| p.get("_meta"));
    let version = meta.and_then(|m| m.get(meta::PROTOCOL_VERSION));
    let capabilities = meta.and_then(|m| m.get(meta::CLIENT_CAPABILITIES));
    let (Some(Value::String(version)), Some(Value::Object(_))) = (version, capabilities) else {
        return Err(bad_request(
            INVALID_PARAMS,
            format!(
                "Invalid params: _meta must carry {} and {}",
                meta::PROTOCOL_VERSION,
                meta::CLIENT_CAPABILITIES
            ),
            None,
        ));
    };
    let supported = &script.modern.supported_versions;
    if !supported.contains(version) {
        return Err(bad_request(
            UNSUPPORTED_VERSION,
            "Unsupported protocol version".into(),
            Some(json!({"supported": supported, "requested": version})),
        ));
    }
    match header {
        Some(header) if script.modern.check_headers => {
            check_headers(script, header, method, params, version)
        }
        _ => Ok(()),
    }
}

/// The request metadata headers must be there and say what the body says: the version and
/// method as they are, `Mcp-Name` and a `tools/call`'s `Mcp-Param-*` after decoding the base64
/// sentinel (see [`params`]).
fn check_headers(
    script: &ServerScript,
    header: HeaderReader<'_>,
    method: &str,
    params: Option<&Value>,
    version: &str,
) -> Result<(), Refusal> {
    let wanted = vec![
        ("mcp-protocol-version", version.to_owned()),
        ("mcp-method", method.to_owned()),
    ];
    let named = NAMED.iter().find(|(m, _)| *m == method);
    let name = named.and_then(|(_, field)| params?.get(*field)?.as_str());
    for (header_name, value) in wanted {
        let got = header(header_name);
        if got.as_deref() != Some(value.as_str()) {
            return Err(mismatch(header_name, Some(value), got));
        }
    }
    if let Some(name) = name {
        // A name or uri outside the safe set comes as the base64 sentinel: decoded first.
        let got = header("mcp-name");
        if got.as_deref().and_then(params::decoded).as_deref() != Some(name) {
            return Err(mismatch("mcp-name", Some(name.to_owned()), got));
        }
    }
    if method == "tools/call"
        && let Some(tool) = name
    {
        let enforced = params::enforced(script, tool);
        let arguments = params.and_then(|p| p.get("arguments"));
        if let Err((header_name, expected, got)) = params::check(&enforced, arguments, header) {
            return Err(mismatch(&header_name, expected, got));
        }
    }
    Ok(())
}

/// A `HeaderMismatch` refusal: `expected` `None` means the header should be absent.
fn mismatch(name: &str, expected: Option<String>, got: Option<String>) -> Refusal {
    let wanted = match &expected {
        Some(value) => format!("must be {value:?}"),
        None => "must be absent".to_owned(),
    };
    bad_request(
        HEADER_MISMATCH,
        format!("Header mismatch: {name} {wanted}"),
        Some(json!({"header": name, "expected": expected, "actual": got})),
    )
}

fn bad_request(code: i64, message: String, data: Option<Value>) -> Refusal {
    Refusal {
        status: 400,
        error: RpcError {
            code,
            message,
            data,
        },
    }
}

/// The first message of a subscription: `notifications/subscriptions/acknowledged` for the
/// `subscriptions/listen` request `id`, with the `filter` the server honours.
pub fn acknowledgement(id: &Value, filter: &Value) -> Value {
    json!({
        "jsonrpc": "2.0",
        "method": "notifications/subscriptions/acknowledged",
        "params": {"_meta": {SUBSCRIPTION_ID: id}, "notifications": filter},
    })
}

/// A notification sent on the subscription `id`: `message` with `params._meta` naming it,
/// unless the script names a subscription itself (a foreign one, on purpose).
pub fn on_subscription(mut message: Value, id: &Value) -> Value {
    let is_notification = message.get("method").is_some() && message.get("id").is_none();
    let Some(object) = message.as_object_mut().filter(|_| is_notification) else {
        return message;
    };
    let params = object.entry("params").or_insert_with(|| json!({}));
    if let Some(params) = params.as_object_mut() {
        let meta = params.entry("_meta").or_insert_with(|| json!({}));
        if let Some(meta) = meta.as_object_mut() {
            meta.entry(SUBSCRIPTION_ID).or_insert_with(|| id.clone());
        }
    }
    message
}

/// The built-in `server/discover` result: the supported versions, tools (and the tasks
/// extension, for a script with tasks), no caching, and the server's name in the result's
/// `_meta`.
pub fn discover_result(script: &ServerScript) -> Value {
    let mut capabilities = crate::script::capabilities(script, None);
    if !script.tasks.is_empty() {
        // Under the script's own: declared ones merge on top of what the script implies.
        let mut derived = json!({"extensions": {crate::tasks::EXTENSION: {}}});
        crate::script::merge(&mut derived, &capabilities);
        capabilities = derived;
    }
    json!({
        "supportedVersions": script.modern.supported_versions,
        "capabilities": capabilities,
        "ttlMs": 0,
        "cacheScope": "public",
        "_meta": {
            meta::SERVER_INFO: {"name": SERVER_NAME, "version": env!("CARGO_PKG_VERSION")},
        },
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use mcp_harness_scenarios::model::Handler;

    fn modern(handlers: Vec<Handler>) -> ServerScript {
        ServerScript {
            handlers,
            era: ServerEra::Modern,
            ..ServerScript::default()
        }
    }

    fn meta(version: &str) -> Value {
        json!({"_meta": {meta::PROTOCOL_VERSION: version, meta::CLIENT_CAPABILITIES: {}}})
    }

    fn refusal(d: Decision) -> Refusal {
        match d {
            Decision::Refuse(r) => r,
            Decision::Answer(a) => panic!("expected a refusal, got {a:?}"),
        }
    }

    fn result(d: Decision) -> Value {
        match d {
            Decision::Answer(answer) => match answer.reply {
                Reply::Result(v) => v,
                other => panic!("expected a result, got {other:?}"),
            },
            other => panic!("expected a result, got {other:?}"),
        }
    }

    #[test]
    fn a_modern_fake_refuses_initialize_and_requests_without_meta() {
        let script = modern(Vec::new());
        let init = refusal(decide(
            &script,
            &script::Tally::default(),
            &crate::tasks::Store::default(),
            None,
            "initialize",
            Some(&json!({})),
            None,
        ));
        assert_eq!((init.status, init.error.code), (404, METHOD_NOT_FOUND));
        let bare = refusal(decide(
            &script,
            &script::Tally::default(),
            &crate::tasks::Store::default(),
            None,
            "tools/list",
            None,
            None,
        ));
        assert_eq!((bare.status, bare.error.code), (400, INVALID_PARAMS));
        let old = refusal(decide(
            &script,
            &script::Tally::default(),
            &crate::tasks::Store::default(),
            None,
            "tools/list",
            Some(&meta("2025-11-25")),
            None,
        ));
        assert_eq!(old.error.code, UNSUPPORTED_VERSION);
        assert_eq!(old.error.data.unwrap()["supported"], json!(["2026-07-28"]));
    }

    #[test]
    fn built_in_answers_carry_result_type_and_cache_hints() {
        let script = modern(Vec::new());
        let found = result(decide(
            &script,
            &script::Tally::default(),
            &crate::tasks::Store::default(),
            None,
            "server/discover",
            Some(&meta("2026-07-28")),
            None,
        ));
        assert_eq!(found["resultType"], "complete");
        assert_eq!(found["supportedVersions"], json!(["2026-07-28"]));
        let listed = result(decide(
            &script,
            &script::Tally::default(),
            &crate::tasks::Store::default(),
            None,
            "tools/list",
            Some(&meta("2026-07-28")),
            None,
        ));
        assert_eq!(listed["ttlMs"], 0);
        let unknown = refusal(decide(
            &script,
            &script::Tally::default(),
            &crate::tasks::Store::default(),
            None,
            "nope",
            Some(&meta("2026-07-28")),
            None,
        ));
        assert_eq!(unknown.status, 404);
    }

    #[test]
    fn headers_must_mirror_the_body() {
        let script = modern(Vec::new());
        let params = json!({"name": "echo", "_meta": {meta::PROTOCOL_VERSION: "2026-07-28", meta::CLIENT_CAPABILITIES: {}}});
        let good = |name: &str| match name {
            "mcp-protocol-version" => Some("2026-07-28".to_owned()),
            "mcp-method" => Some("tools/call".to_owned()),
            "mcp-name" => Some("echo".to_owned()),
            _ => None,
        };
        assert!(admit(&script, "tools/call", Some(&params), Some(&good)).is_ok());
        let nameless = |name: &str| good(name).filter(|_| name != "mcp-name");
        let refused = admit(&script, "tools/call", Some(&params), Some(&nameless)).unwrap_err();
        assert_eq!(refused.error.code, HEADER_MISMATCH);
    }

    #[test]
    fn an_encoded_name_is_decoded_before_comparing() {
        let script = modern(Vec::new());
        let params = json!({"uri": "file:///café", "_meta": {meta::PROTOCOL_VERSION: "2026-07-28", meta::CLIENT_CAPABILITIES: {}}});
        let with = |mcp_name: &'static str| {
            move |name: &str| match name {
                "mcp-protocol-version" => Some("2026-07-28".to_owned()),
                "mcp-method" => Some("resources/read".to_owned()),
                "mcp-name" => Some(mcp_name.to_owned()),
                _ => None,
            }
        };
        let encoded = with("=?base64?ZmlsZTovLy9jYWbDqQ==?=");
        assert!(admit(&script, "resources/read", Some(&params), Some(&encoded)).is_ok());
        let plain = with("file:///caf");
        assert!(admit(&script, "resources/read", Some(&params), Some(&plain)).is_err());
        let literal = json!({"name": "=?base64?x?=", "_meta": params["_meta"].clone()});
        let raw = |name: &str| match name {
            "mcp-method" => Some("tools/call".to_owned()),
            "mcp-name" => Some("=?base64?x?=".to_owned()),
            other => with("")(other),
        };
        assert!(admit(&script, "tools/call", Some(&literal), Some(&raw)).is_err());
    }

    #[test]
    fn discover_declares_the_scripts_capabilities_too() {
        let script = ServerScript {
            capabilities: Some(json!({"tools": {"listChanged": true}})),
            ..modern(Vec::new())
        };
        let found = result(decide(
            &script,
            &script::Tally::default(),
            &crate::tasks::Store::default(),
            None,
            "server/discover",
            Some(&meta("2026-07-28")),
            None,
        ));
        assert_eq!(
            found["capabilities"],
            json!({"tools": {"listChanged": true}})
        );
    }

    #[test]
    fn listen_is_built_in_and_a_rules_result_is_the_acknowledged_filter() {
        let mut params = meta("2026-07-28");
        params["notifications"] = json!({"toolsListChanged": true});
        let answer = |script: &ServerScript| match decide(
            script,
            &script::Tally::default(),
            &crate::tasks::Store::default(),
            None,
            "subscriptions/listen",
            Some(&params),
            None,
        ) {
            Decision::Answer(a) => *a,
            Decision::Refuse(r) => panic!("refused: {r:?}"),
        };
        let built_in = answer(&modern(Vec::new()));
        assert!(matches!(built_in.reply, Reply::Hang));
        assert_eq!(built_in.listen, Some(json!({"toolsListChanged": true})));
        let mut rule = Handler::builtin_echo();
        rule.method = "subscriptions/listen".into();
        rule.params = None;
        rule.reply = Reply::Result(json!({}));
        assert_eq!(answer(&modern(vec![rule.clone()])).listen, Some(json!({})));
        rule.reply = Reply::Hang;
        assert_eq!(answer(&modern(vec![rule])).listen, None);
        let id = json!(4);
        let ack = acknowledgement(&id, &json!({}));
        assert_eq!(ack["params"]["_meta"][SUBSCRIPTION_ID], 4);
        let note = json!({"jsonrpc": "2.0", "method": "notifications/tools/list_changed"});
        assert_eq!(
            on_subscription(note, &id)["params"]["_meta"][SUBSCRIPTION_ID],
            4
        );
        let foreign =
            json!({"jsonrpc": "2.0", "method": "x", "params": {"_meta": {SUBSCRIPTION_ID: 9}}});
        assert_eq!(
            on_subscription(foreign, &id)["params"]["_meta"][SUBSCRIPTION_ID],
            9
        );
    }

    #[test]
    fn a_dual_fake_serves_each_request_in_its_era() {
        let script = ServerScript {
            era: ServerEra::Dual,
            ..ServerScript::default()
        };
        let init = result(decide(
            &script,
            &script::Tally::default(),
            &crate::tasks::Store::default(),
            None,
            "initialize",
            Some(&json!({"protocolVersion": "2025-06-18"})),
            None,
        ));
        assert_eq!(init["protocolVersion"], "2025-06-18");
        let found = result(decide(
            &script,
            &script::Tally::default(),
            &crate::tasks::Store::default(),
            None,
            "server/discover",
            Some(&meta("2026-07-28")),
            None,
        ));
        assert_eq!(found["resultType"], "complete");
    }
}
