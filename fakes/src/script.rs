//! Choosing what the fake does with a request: the scenario's first matching handler, or a
//! built-in default. Pure and transport-independent, so the stdio fake and an HTTP fake play
//! the same script the same way.

use mcp_harness_scenarios::matcher::{self, Captures};
use std::collections::HashMap;
use std::sync::{Mutex, PoisonError};

use mcp_harness_scenarios::model::{
    Faults, Handler, HttpReply, Reply, RpcError, Send, ServerScript,
};
use serde_json::{Value, json};

use crate::jsonrpc::METHOD_NOT_FOUND;

/// Protocol versions the fake's built-in `initialize` answer echoes back when offered.
pub const KNOWN_VERSIONS: [&str; 4] = ["2024-11-05", "2025-03-26", "2025-06-18", "2025-11-25"];

/// The version the built-in `initialize` answer offers when the client's is unknown.
pub const FALLBACK_VERSION: &str = "2025-11-25";

/// The `serverInfo.name` of the built-in `initialize` answer (what `{"$fake": "serverInfo"}`
/// matches in a case).
pub const SERVER_NAME: &str = mcp_harness_scenarios::model::FAKE_SERVER_NAME;

/// What to do with one request.
#[derive(Debug, Clone)]
pub struct Answer {
    /// Wait this long before acting, in milliseconds.
    pub delay_ms: u64,
    /// Then do this.
    pub reply: Reply,
    /// The handler's HTTP shape and faults, if it gave any (ignored over stdio).
    pub http: Option<HttpReply>,
    /// The handler's hostile-server faults, if it gave any.
    pub faults: Option<Faults>,
    /// The messages the handler sends on its own initiative, around the reply.
    pub sends: Vec<Send>,
    /// The built-in `subscriptions/listen` answer (2026-07-28), with the filter it
    /// acknowledges: `notifications/subscriptions/acknowledged`, then the rule's messages on
    /// the subscription's stream, which stays open (see [`crate::modern`]).
    pub listen: Option<Value>,
    /// What the task engine asks of the transport besides the reply: wait for a task's
    /// outcome (the reply is then a placeholder), or send a task's status notifications
    /// after it (see [`crate::tasks`]).
    pub task: Option<crate::tasks::Work>,
}

impl Answer {
    /// An answer with nothing but `reply`.
    pub fn reply(reply: Reply) -> Answer {
        Answer {
            delay_ms: 0,
            reply,
            http: None,
            faults: None,
            sends: Vec::new(),
            listen: None,
            task: None,
        }
    }
}

/// How many requests each rule with `times` has answered: the fake's only memory of its
/// script. One per fake (shared by every connection and session of an HTTP fake), so a rule
/// answers at most `times` requests in the whole trial.
#[derive(Debug, Default)]
pub struct Tally(Mutex<HashMap<usize, u32>>);

impl Tally {
    /// Takes the first rule `accepts` matches whose `times` is not spent, and counts it:
    /// under one lock, so two requests at once can never both take a rule's last answer.
    fn take<'a>(
        &self,
        handlers: &'a [Handler],
        accepts: impl Fn(&Handler) -> bool,
    ) -> Option<&'a Handler> {
        let mut used = self.0.lock().unwrap_or_else(PoisonError::into_inner);
        let (i, h) = handlers.iter().enumerate().find(|(i, h)| {
            h.times
                .is_none_or(|n| used.get(i).copied().unwrap_or(0) < n)
                && accepts(h)
        })?;
        if h.times.is_some() {
            *used.entry(i).or_insert(0) += 1;
        }
        Some(h)
    }
}

/// Picks the answer to a request: the first handler whose `method` is equal and whose
/// `params` matcher (if any) accepts the request's params (missing params count as `{}`),
/// else the built-in default for the method. Uses a fresh [`Tally`]: for one request alone.
pub fn choose(script: &ServerScript, method: &str, params: Option<&Value>) -> Answer {
    choose_at(script, &Tally::default(), None, method, params)
}

/// [`choose`] for a fake playing protocol `revision` (a case's revision dimension): the
/// built-in `initialize` answer then knows only the versions up to that revision. A rule
/// with `times` is passed over once `tally` counts that many answers from it; the rule that
/// answers is counted there.
pub fn choose_at(
    script: &ServerScript,
    tally: &Tally,
    revision: Option<&str>,
    method: &str,
    params: Option<&Value>,
) -> Answer {
    let empty = json!({});
    let actual = params.unwrap_or(&empty);
    let handler = tally.take(&script.handlers, |h| {
        h.method == method
            && h.params
                .as_ref()
                .is_none_or(|m| matcher::matches(m, actual, &mut Captures::new()).is_ok())
    });
    match handler {
        Some(h) => Answer {
            delay_ms: h.delay_ms,
            reply: count_up_cursor(h.reply.clone(), actual),
            http: h.http.clone(),
            faults: h.faults.clone(),
            sends: h.sends.clone(),
            listen: None,
            task: None,
        },
        // Only for scripts that do not list tools themselves: there, an unmatched cursor is
        // an error, not a fresh listing.
        None if method == "tools/list" && !script.handlers.iter().any(|h| h.method == method) => {
            Answer::reply(Reply::Result(json!({ "tools": scripted_tools(script) })))
        }
        None => Answer::reply(default_reply_at(script, revision, method, actual)),
    }
}

/// Pages that never end: a handler's result whose `nextCursor` is `{"$next_cursor": P}`
/// is answered with the cursor `P<n+1>`, where `P<n>` is the request's cursor (`n` is 0 when
/// the request has none, or one not of that form). Every page names a cursor never sent
/// before, so a listing ends only when the client stops it (the page-cap cases).
fn count_up_cursor(reply: Reply, params: &Value) -> Reply {
    let Reply::Result(mut result) = reply else {
        return reply;
    };
    let prefix = result
        .get("nextCursor")
        .and_then(|c| c.get("$next_cursor"))
        .and_then(Value::as_str)
        .map(str::to_owned);
    if let Some(prefix) = prefix {
        let n = params
            .get("cursor")
            .and_then(Value::as_str)
            .and_then(|c| c.strip_prefix(prefix.as_str()))
            .and_then(|n| n.parse::<u64>().ok())
            .unwrap_or(0);
        result["nextCursor"] = Value::String(format!("{prefix}{}", n.saturating_add(1)));
    }
    Reply::Result(result)
}

/// The answer to a notification: only a handler naming its method gives one (a faulty
/// server answering what must not be answered); otherwise `None`, as notifications are
/// never answered. (A notification's rule has no `times`: the loader refuses it.)
pub fn choose_for_notification(
    script: &ServerScript,
    method: &str,
    params: Option<&Value>,
) -> Option<Answer> {
    script
        .handlers
        .iter()
        .any(|h| h.method == method)
        .then(|| choose(script, method, params))
}

/// The capabilities the built-in `initialize` and `server/discover` answers declare: `tools`
/// always, and each other server feature the script has a handler for (`resources` for
/// `resources/*`, `prompts` for `prompts/*`, `completions` for `completion/complete`,
/// `logging` for `logging/setLevel`). A case about an undeclared capability simply scripts
/// no handler for it. At `version` 2024-11-05, which had completion requests but no
/// `completions` capability, none is declared for them. The script's own `capabilities` are
/// then merged in, member by member (objects merged recursively, anything else replaced).
pub fn capabilities(script: &ServerScript, version: Option<&str>) -> Value {
    let mut derived = derived_capabilities(script, version);
    if let Some(declared) = &script.capabilities {
        merge(&mut derived, declared);
    }
    derived
}

/// Merges `extra` into `into`: members of two objects recursively, anything else replaced.
pub(crate) fn merge(into: &mut Value, extra: &Value) {
    match (into, extra) {
        (Value::Object(into), Value::Object(extra)) => {
            for (key, value) in extra {
                match into.get_mut(key) {
                    Some(slot) => merge(slot, value),
                    None => {
                        into.insert(key.clone(), value.clone());
                    }
                }
            }
        }
        (into, extra) => *into = extra.clone(),
    }
}

/// The capabilities the script implies, before its own `capabilities` are merged in; tasks
/// (at 2025-11-25 and later) included.
fn derived_capabilities(script: &ServerScript, version: Option<&str>) -> Value {
    let mut declared = serde_json::Map::new();
    declared.insert("tools".into(), json!({}));
    if !script.tasks.is_empty() && version.is_some_and(|v| v >= crate::tasks::FIRST_REVISION) {
        declared.insert("tasks".into(), crate::tasks::legacy_capability());
    }
    for handler in &script.handlers {
        let feature = match handler.method.split('/').next() {
            Some("resources") => "resources",
            Some("prompts") => "prompts",
            Some("completion") if version == Some("2024-11-05") => continue,
            Some("completion") => "completions",
            Some("logging") => "logging",
            _ => continue,
        };
        declared.entry(feature).or_insert_with(|| json!({}));
    }
    Value::Object(declared)
}

/// The tools a script can call, for the built-in `tools/list` answer: every name that a
/// `tools/call` handler matches, in order, once each, then each task's tool (with
/// `execution.taskSupport` `optional` when a handler answers it too, else `required`). A client may list tools before calling
/// one (to learn its output schema), and a fake that advertises tools must then know them.
fn scripted_tools(script: &ServerScript) -> Vec<Value> {
    let mut names: Vec<&str> = Vec::new();
    for handler in script.handlers.iter().filter(|h| h.method == "tools/call") {
        let name = handler
            .params
            .as_ref()
            .and_then(|p| p.get("name"))
            .and_then(Value::as_str);
        if let Some(name) = name.filter(|n| !names.contains(n)) {
            names.push(name);
        }
    }
    let mut tools: Vec<Value> = names
        .into_iter()
        .map(|name| json!({"name": name, "inputSchema": {"type": "object"}}))
        .collect();
    // A task's tool: one a handler also answers may be called either way; one only the
    // task engine answers must be called as a task (a plain call gets the default -32601,
    // what the 2025-11-25 text asks of a server then).
    for task in &script.tasks {
        let listed = tools.iter_mut().find(|t| t["name"] == task.tool.as_str());
        let (tool, support) = match listed {
            Some(tool) => (tool, "optional"),
            None => {
                tools.push(json!({"name": task.tool, "inputSchema": {"type": "object"}}));
                (tools.last_mut().expect("just pushed"), "required")
            }
        };
        tool["execution"] = json!({ "taskSupport": support });
    }
    tools
}

/// The built-in answer to a method no handler covers, for a script with no handlers.
pub fn default_reply(method: &str, params: &Value) -> Reply {
    default_reply_at(&ServerScript::default(), None, method, params)
}

/// The legacy versions a fake playing `revision` knows: those up to it (all without one).
pub fn known_versions(revision: Option<&str>) -> Vec<&'static str> {
    KNOWN_VERSIONS
        .into_iter()
        .filter(|v| revision.is_none_or(|r| *v <= r))
        .collect()
}

/// The built-in answer to a method `script` has no handler for, as a fake playing `revision`:
/// an offered version newer than the revision is answered with the revision itself, and
/// `initialize` declares the script's [`capabilities`].
pub fn default_reply_at(
    script: &ServerScript,
    revision: Option<&str>,
    method: &str,
    params: &Value,
) -> Reply {
    match method {
        "initialize" => {
            let known = known_versions(revision);
            let fallback = match revision {
                Some(rev) if KNOWN_VERSIONS.contains(&rev) => rev,
                _ => FALLBACK_VERSION,
            };
            let offered = params.get("protocolVersion").and_then(Value::as_str);
            let version = offered.filter(|v| known.contains(v)).unwrap_or(fallback);
            Reply::Result(json!({
                "protocolVersion": version,
                "capabilities": capabilities(script, Some(version)),
                "serverInfo": {"name": SERVER_NAME, "version": env!("CARGO_PKG_VERSION")},
            }))
        }
        "ping" => Reply::Result(json!({})),
        _ => Reply::Error(RpcError {
            code: METHOD_NOT_FOUND,
            message: "Method not found".into(),
            data: None,
        }),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn handler(method: &str, params: Option<Value>, reply: Reply) -> Handler {
        Handler {
            method: method.into(),
            params,
            delay_ms: 0,
            reply,
            times: None,
            http: None,
            faults: None,
            sends: Vec::new(),
        }
    }

    #[test]
    fn declared_capabilities_merge_into_the_derived_ones() {
        let script = ServerScript {
            handlers: vec![handler(
                "resources/read",
                None,
                Reply::Result(json!({"contents": []})),
            )],
            capabilities: Some(json!({
                "tools": {"listChanged": true},
                "resources": {"subscribe": true},
                "experimental": {"x": {}}
            })),
            ..ServerScript::default()
        };
        assert_eq!(
            capabilities(&script, None),
            json!({
                "tools": {"listChanged": true},
                "resources": {"subscribe": true},
                "experimental": {"x": {}}
            })
        );
    }

    fn result_of(answer: &Answer) -> &Value {
        match &answer.reply {
            Reply::Result(v) => v,
            other => panic!("expected a result, got {other:?}"),
        }
    }

    #[test]
    fn first_matching_handler_wins() {
        let script = ServerScript {
            handlers: vec![
                handler("tools/list", None, Reply::Result(json!({"n": 1}))),
                handler("tools/list", None, Reply::Result(json!({"n": 2}))),
            ],
            ..ServerScript::default()
        };
        assert_eq!(
            result_of(&choose(&script, "tools/list", None)),
            &json!({"n": 1})
        );
    }

    #[test]
    fn params_matcher_selects_the_handler() {
        let mut paged = handler(
            "tools/list",
            Some(json!({"cursor": "p2"})),
            Reply::Result(json!({"page": 2})),
        );
        paged.delay_ms = 30;
        let first = handler(
            "tools/list",
            Some(json!({"cursor": {"$absent": true}})),
            Reply::Result(json!({"page": 1})),
        );
        let script = ServerScript {
            handlers: vec![paged, first, handler("tools/call", None, Reply::Hang)],
            ..ServerScript::default()
        };
        let second = choose(&script, "tools/list", Some(&json!({"cursor": "p2"})));
        assert_eq!(result_of(&second), &json!({"page": 2}));
        assert_eq!(second.delay_ms, 30);
        // Missing params count as `{}`, which `$absent` accepts.
        assert_eq!(
            result_of(&choose(&script, "tools/list", None)),
            &json!({"page": 1})
        );
        // No handler accepts this cursor: the default for an unknown method applies.
        let other = choose(&script, "tools/list", Some(&json!({"cursor": "zz"})));
        assert!(matches!(other.reply, Reply::Error(ref e) if e.code == METHOD_NOT_FOUND));
        assert!(matches!(
            choose(&script, "tools/call", None).reply,
            Reply::Hang
        ));
    }

    #[test]
    fn initialize_declares_tools_and_each_scripted_feature() {
        let script = ServerScript {
            handlers: vec![
                handler(
                    "resources/read",
                    None,
                    Reply::Result(json!({"contents": []})),
                ),
                handler(
                    "resources/list",
                    None,
                    Reply::Result(json!({"resources": []})),
                ),
                handler("completion/complete", None, Reply::Result(json!({}))),
            ],
            ..ServerScript::default()
        };
        let init = choose(
            &script,
            "initialize",
            Some(&json!({"protocolVersion": "2025-11-25"})),
        );
        assert_eq!(
            result_of(&init)["capabilities"],
            json!({"tools": {}, "resources": {}, "completions": {}})
        );
        // 2024-11-05 had completion requests but no capability to declare for them.
        let old = choose(
            &script,
            "initialize",
            Some(&json!({"protocolVersion": "2024-11-05"})),
        );
        assert_eq!(
            result_of(&old)["capabilities"],
            json!({"tools": {}, "resources": {}})
        );
    }

    #[test]
    fn next_cursor_counts_up_from_the_requests_cursor() {
        let endless = handler(
            "prompts/list",
            None,
            Reply::Result(json!({"prompts": [], "nextCursor": {"$next_cursor": "p"}})),
        );
        let script = ServerScript {
            handlers: vec![endless],
            ..ServerScript::default()
        };
        let next = |params: Option<Value>| {
            result_of(&choose(&script, "prompts/list", params.as_ref()))["nextCursor"].clone()
        };
        assert_eq!(next(None), json!("p1"));
        assert_eq!(next(Some(json!({"cursor": "p1"}))), json!("p2"));
        assert_eq!(next(Some(json!({"cursor": "p41"}))), json!("p42"));
        assert_eq!(next(Some(json!({"cursor": "other"}))), json!("p1"));
    }

    #[test]
    fn a_rule_with_times_gives_way_once_spent() {
        let mut repeated = handler(
            "tools/list",
            Some(json!({"cursor": "A"})),
            Reply::Result(json!({"tools": [], "nextCursor": "A"})),
        );
        repeated.times = Some(2);
        let last = handler(
            "tools/list",
            Some(json!({"cursor": "A"})),
            Reply::Result(json!({"tools": []})),
        );
        let script = ServerScript {
            handlers: vec![repeated, last],
            ..ServerScript::default()
        };
        let tally = Tally::default();
        let next = |params: Value| {
            let answer = choose_at(&script, &tally, None, "tools/list", Some(&params));
            result_of(&answer).get("nextCursor").cloned()
        };
        // A request the rule does not match is not counted against it.
        let other = choose_at(
            &script,
            &tally,
            None,
            "tools/list",
            Some(&json!({"cursor": "B"})),
        );
        assert!(matches!(other.reply, Reply::Error(_)));
        assert_eq!(next(json!({"cursor": "A"})), Some(json!("A")));
        assert_eq!(next(json!({"cursor": "A"})), Some(json!("A")));
        assert_eq!(next(json!({"cursor": "A"})), None);
        assert_eq!(next(json!({"cursor": "A"})), None);
        // Another fake (a fresh tally) starts counting again.
        assert_eq!(
            result_of(&choose(
                &script,
                "tools/list",
                Some(&json!({"cursor": "A"}))
            ))["nextCursor"],
            json!("A")
        );
    }

    #[test]
    fn a_spent_rule_with_nothing_after_it_leaves_the_default() {
        let mut once = handler("prompts/list", None, Reply::Result(json!({"prompts": []})));
        once.times = Some(1);
        let script = ServerScript {
            handlers: vec![once],
            ..ServerScript::default()
        };
        let tally = Tally::default();
        let first = choose_at(&script, &tally, None, "prompts/list", None);
        assert_eq!(result_of(&first), &json!({"prompts": []}));
        let second = choose_at(&script, &tally, None, "prompts/list", None);
        assert!(matches!(second.reply, Reply::Error(ref e) if e.code == METHOD_NOT_FOUND));
    }

    #[test]
    fn requests_at_once_never_share_a_rules_last_answer() {
        let mut limited = handler("ping", None, Reply::Result(json!({"first": true})));
        limited.times = Some(5);
        let script = ServerScript {
            handlers: vec![limited],
            ..ServerScript::default()
        };
        let tally = Tally::default();
        let firsts: usize = std::thread::scope(|scope| {
            let workers: Vec<_> = (0..8)
                .map(|_| {
                    scope.spawn(|| {
                        (0..10)
                            .filter(|_| {
                                let answer = choose_at(&script, &tally, None, "ping", None);
                                result_of(&answer).get("first").is_some()
                            })
                            .count()
                    })
                })
                .collect();
            workers.into_iter().map(|w| w.join().unwrap()).sum()
        });
        assert_eq!(firsts, 5);
    }

    #[test]
    fn tools_list_defaults_to_the_scripted_tools() {
        let script = ServerScript {
            handlers: vec![
                handler("tools/call", Some(json!({"name": "echo"})), Reply::Hang),
                handler("tools/call", Some(json!({"name": "slow"})), Reply::Hang),
                handler("tools/call", Some(json!({"name": "echo"})), Reply::Hang),
                handler("tools/call", None, Reply::Hang),
            ],
            ..ServerScript::default()
        };
        let names: Vec<Value> = result_of(&choose(&script, "tools/list", None))["tools"]
            .as_array()
            .unwrap()
            .iter()
            .map(|t| t["name"].clone())
            .collect();
        assert_eq!(names, vec![json!("echo"), json!("slow")]);
    }

    #[test]
    fn defaults_for_initialize_ping_and_unknown_methods() {
        let script = ServerScript::default();
        let init = choose(
            &script,
            "initialize",
            Some(&json!({"protocolVersion": "2025-03-26"})),
        );
        let init = result_of(&init);
        assert_eq!(init["protocolVersion"], "2025-03-26");
        assert_eq!(init["capabilities"], json!({"tools": {}}));
        assert_eq!(init["serverInfo"]["name"], SERVER_NAME);
        assert_eq!(result_of(&choose(&script, "ping", None)), &json!({}));
        match choose(&script, "resources/list", None).reply {
            Reply::Error(e) => {
                assert_eq!(e.code, METHOD_NOT_FOUND);
                assert_eq!(e.message, "Method not found");
            }
            other => panic!("expected an error, got {other:?}"),
        }
    }

    #[test]
    fn initialize_falls_back_for_unknown_or_missing_versions() {
        let script = ServerScript::default();
        for params in [
            Some(json!({"protocolVersion": "1999-01-01"})),
            Some(json!({"protocolVersion": 20250326})),
            None,
        ] {
            let answer = choose(&script, "initialize", params.as_ref());
            assert_eq!(result_of(&answer)["protocolVersion"], FALLBACK_VERSION);
        }
    }
}
