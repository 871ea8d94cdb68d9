//! The client's plan of a recorded session and the checks on it: one step per request the
//! driver contract can ask for (a listing's pages are one step), what each step must report
//! given the recorded answer, and a wire check that the client sent each request.
//!
//! Citations: a step that succeeds cites the contract's "the step worked" id (the model's
//! default for an `ok` step); a failed step cites the contract or boundary-profile sentence
//! that names the error it must report; a wire check cites the contract's "each op performs
//! its request" (CONTRACT-7, -13, -19), or following cursors (PROF-PAGE-1, -6) for a listing
//! of several pages.

use std::collections::BTreeSet;

use serde_json::{Value, json};

use super::exchanges::Exchange;
use super::script::{LISTINGS, arguments_matcher};

/// What the plan holds, and what was left out of it.
#[derive(Debug, Default)]
pub struct Plan {
    /// The steps, from `connect` to `close`.
    pub steps: Vec<Value>,
    /// The wire checks, each once.
    pub wire: Vec<Value>,
    /// What the recording held that the case does not replay.
    pub notes: Vec<String>,
    /// The exchanges the plan replays (their answers are the script).
    pub replayed: Vec<usize>,
}

/// A step being built: a listing grows a page at a time.
enum Draft<'a> {
    Connect(&'a Exchange),
    Listing(Vec<&'a Exchange>),
    Single(&'a Exchange),
}

/// The plan of `exchanges` (the first must open the session: `initialize` or
/// `server/discover`).
pub fn plan(exchanges: &[Exchange]) -> Plan {
    let mut out = Plan::default();
    let mut drafts: Vec<Draft> = Vec::new();
    for (i, exchange) in exchanges.iter().enumerate() {
        let method = exchange.method();
        if exchange.answer.is_none() {
            out.notes.push(format!(
                "{method} (id {}), which got no answer",
                exchange.request["id"]
            ));
            continue;
        }
        if method == "initialize" || method == "server/discover" {
            if drafts.is_empty() {
                drafts.push(Draft::Connect(exchange));
                out.replayed.push(i);
            } else {
                out.notes.push(format!("a second {method}"));
            }
            continue;
        }
        if LISTINGS.contains(&method) {
            if let Some(cursor) = exchange.params().get("cursor") {
                let follows = drafts.iter_mut().rev().find_map(|d| match d {
                    Draft::Listing(pages)
                        if pages[0].method() == method
                            && next_cursor(pages.last().expect("a page")) == Some(cursor) =>
                    {
                        Some(pages)
                    }
                    _ => None,
                });
                match follows {
                    Some(pages) => pages.push(exchange),
                    None => {
                        out.notes.push(format!(
                            "{method} with cursor {cursor} that no page of the recording handed out"
                        ));
                        continue;
                    }
                }
            } else {
                drafts.push(Draft::Listing(vec![exchange]));
            }
            out.replayed.push(i);
            continue;
        }
        let modern = exchanges[0].method() == "server/discover";
        if modern && matches!(method, "ping" | "logging/setLevel") {
            // 2026-07-28 has neither: a client may refuse, or answer itself (CONTRACT-9).
            out.notes
                .push(format!("{method} (the 2026-07-28 era has no such request)"));
            continue;
        }
        if super::script::REPLAYED.contains(&method) {
            drafts.push(Draft::Single(exchange));
            out.replayed.push(i);
        } else {
            out.notes.push(format!("{method} (no plan step sends it)"));
        }
    }
    let declared = exchanges.first().and_then(|e| match &e.answer {
        Some(Ok(result)) => Some(result.clone()),
        _ => None,
    });
    for draft in drafts {
        let (mut step, mut checks) = match &draft {
            Draft::Connect(e) => connect(e),
            Draft::Listing(pages) => listing(pages, &mut out.notes),
            Draft::Single(e) => single(e),
        };
        let method = match &draft {
            Draft::Connect(e) | Draft::Single(e) => e.method(),
            Draft::Listing(pages) => pages[0].method(),
        };
        if let Some(capability) = declared.as_ref().and_then(|d| undeclared(method, d)) {
            // A client may refuse the step itself, sending nothing (CLIENTS.md, Plan steps).
            out.notes.push(format!(
                "that the client sends {method}: the server had not declared `{capability}`, \
                 so a client may refuse the step (capability_missing)"
            ));
            refusable(&mut step);
            checks.clear();
        }
        out.steps.push(step);
        for check in checks {
            if !out.wire.iter().any(|w| same_rule(w, &check)) {
                out.wire.push(check);
            }
        }
    }
    out.steps.push(json!("close"));
    out
}

/// The server capability `method` needs, when the recorded `initialize` result did not
/// declare it.
fn undeclared(method: &str, initialized: &Value) -> Option<&'static str> {
    let capability = match method.split('/').next() {
        Some("tools") => "tools",
        Some("resources") => "resources",
        Some("prompts") => "prompts",
        Some("logging") => "logging",
        // 2024-11-05 had no `completions` capability.
        Some("completion") if initialized["protocolVersion"] != "2024-11-05" => "completions",
        _ => return None,
    };
    initialized
        .pointer(&format!("/capabilities/{capability}"))
        .is_none()
        .then_some(capability)
}

/// A checked step that may also be refused as `capability_missing`, citing what the step
/// reports (the contract's default for its op).
fn refusable(step: &mut Value) {
    let Some(map) = step.as_object_mut() else {
        return;
    };
    let op = map.get("op").and_then(Value::as_str).unwrap_or_default();
    let reports = match op {
        "list_tools" | "call_tool" => "CONTRACT-8",
        _ => "CONTRACT-14",
    };
    match map.get("error").cloned() {
        Some(Value::Object(mut error)) => {
            let kind = error.get("kind").cloned().unwrap_or(Value::Null);
            error.insert("kind".into(), json!([kind, "capability_missing"]));
            map.insert("error".into(), Value::Object(error));
        }
        Some(kind @ Value::String(_)) => {
            map.insert("error".into(), json!([kind, "capability_missing"]));
        }
        Some(_) => {}
        None if map.contains_key("ok") => {
            map.insert("error".into(), json!("capability_missing"));
            map.insert("requirement".into(), json!(reports));
        }
        None => {}
    }
}

fn next_cursor(page: &Exchange) -> Option<&Value> {
    match &page.answer {
        Some(Ok(result)) => result.get("nextCursor").filter(|c| !c.is_null()),
        _ => None,
    }
}

fn same_rule(a: &Value, b: &Value) -> bool {
    let rule = |v: &Value| {
        let mut v = v.clone();
        v.as_object_mut().map(|o| o.remove("check"));
        v
    };
    rule(a) == rule(b)
}

fn wire(check: String, rule: &str, matcher: Value, requirement: &str) -> Value {
    json!({"check": check, rule: matcher, "requirement": requirement})
}

/// A step object with its expectation: `ok` (citing the contract's default) or an error
/// citing `requirement`.
fn expect(mut step: Value, answer: Result<Value, (Value, &str)>) -> Value {
    if step.is_string() {
        step = json!({"op": step});
    }
    match answer {
        Ok(ok) => step["ok"] = ok,
        Err((error, requirement)) => {
            step["error"] = error;
            step["requirement"] = json!(requirement);
        }
    }
    step
}

fn protocol_error(error: &Value) -> Value {
    json!({"kind": "protocol_error", "code": error.get("code").cloned().unwrap_or(Value::Null)})
}

fn connect(e: &Exchange) -> (Value, Vec<Value>) {
    let modern = e.method() == "server/discover";
    let step = match &e.answer {
        Some(Ok(result)) => {
            // At 2026-07-28 the server's name travels in the result's `_meta`.
            let (mut ok, name) = match modern {
                true => (
                    json!({}),
                    result.pointer("/_meta/io.modelcontextprotocol~1serverInfo/name"),
                ),
                false => (
                    json!({"protocolVersion": result["protocolVersion"]}),
                    result.pointer("/serverInfo/name"),
                ),
            };
            if let Some(name) = name {
                ok["serverInfo"] = json!({"name": name});
            }
            expect(json!("connect"), Ok(ok))
        }
        Some(Err(error)) => {
            let mut kind = protocol_error(error);
            kind["kind"] = json!("handshake_failed");
            expect(json!("connect"), Err((kind, "CONTRACT-9")))
        }
        None => json!("connect"),
    };
    let check = match modern {
        true => wire(
            "the client opens with server/discover".into(),
            "first",
            json!([{"method": "server/discover"}]),
            "CONTRACT-7",
        ),
        false => wire(
            "the client opens with initialize, then notifications/initialized".into(),
            "sequence",
            json!([{"method": "initialize"}, {"method": "notifications/initialized"}]),
            "CONTRACT-7",
        ),
    };
    (step, vec![check])
}

/// What a listing method lists: the result member and the member naming each entry.
fn listed(method: &str) -> (&'static str, &'static str, &'static str) {
    match method {
        "tools/list" => ("list_tools", "tools", "name"),
        "resources/list" => ("list_resources", "resources", "uri"),
        "resources/templates/list" => (
            "list_resource_templates",
            "resourceTemplates",
            "uriTemplate",
        ),
        _ => ("list_prompts", "prompts", "name"),
    }
}

fn listing(pages: &[&Exchange], notes: &mut Vec<String>) -> (Value, Vec<Value>) {
    let method = pages[0].method();
    let tools = method == "tools/list";
    let (op, member, key) = listed(method);
    let mut entries = Vec::new();
    let mut seen = BTreeSet::new();
    let mut sent = BTreeSet::new();
    let mut outcome: Option<Result<Value, (Value, &str)>> = None;
    for page in pages {
        if let Some(cursor) = page.params().get("cursor") {
            sent.insert(cursor.to_string());
        }
        match &page.answer {
            Some(Err(error)) => {
                let cites = if tools { "CONTRACT-9" } else { "CONTRACT-15" };
                outcome = Some(Err((protocol_error(error), cites)));
                break;
            }
            Some(Ok(result)) => {
                for entry in result[member].as_array().into_iter().flatten() {
                    let id = entry.get(key).cloned().unwrap_or(Value::Null);
                    if !seen.insert(id.to_string()) && outcome.is_none() {
                        let (kind, cites) = match tools {
                            true => ("duplicate_tool_name", "PROF-PAGE-4"),
                            false => ("duplicate_name", "PROF-PAGE-9"),
                        };
                        outcome = Some(Err((json!(kind), cites)));
                    }
                    entries.push(json!({ key: id }));
                }
                if let Some(next) = result.get("nextCursor").filter(|c| !c.is_null())
                    && sent.contains(&next.to_string())
                    && outcome.is_none()
                {
                    let cites = if tools { "PROF-PAGE-3" } else { "PROF-PAGE-8" };
                    outcome = Some(Err((json!("repeated_cursor"), cites)));
                }
            }
            None => {}
        }
    }
    let unfollowed = next_cursor(pages.last().expect("a page")).cloned();
    let step = match (outcome, unfollowed) {
        (Some(outcome), _) => expect(json!(op), outcome),
        (None, Some(cursor)) => {
            notes.push(format!(
                "what {op} reports: the recorded client never asked for the page after cursor \
                 {cursor}, so the replay has no answer for it"
            ));
            json!(op)
        }
        (None, None) => expect(json!(op), Ok(json!({ member: {"$unordered": entries} }))),
    };
    let first = json!({"method": method});
    let check = match pages.len() {
        1 => wire(
            format!("the client sends {method}"),
            "sent",
            first,
            if tools { "CONTRACT-7" } else { "CONTRACT-13" },
        ),
        n => {
            let mut sequence = vec![first];
            sequence.extend(
                pages[1..]
                    .iter()
                    .map(|p| json!({"method": method, "params": {"cursor": p.params()["cursor"]}})),
            );
            wire(
                format!("the client asks for the {n} pages of {method}, each nextCursor in turn"),
                "sequence",
                Value::Array(sequence),
                if tools { "PROF-PAGE-1" } else { "PROF-PAGE-6" },
            )
        }
    };
    (step, vec![check])
}

/// The text blocks' texts of a content list.
fn texts(content: &Value) -> Vec<Value> {
    content
        .as_array()
        .into_iter()
        .flatten()
        .filter(|b| b["type"] == "text")
        .map(|b| b["text"].clone())
        .collect()
}

/// A content block as the contract reports it, matched by what a recording can tell.
fn block(content: &Value) -> Value {
    match content["type"].as_str() {
        Some("text") => json!({"type": "text", "text": content["text"]}),
        _ => json!({"type": content["type"]}),
    }
}

/// `{}` for a result, the error's `protocol_error` (CONTRACT-15) for an error.
fn empty_or_error(answer: &Result<Value, Value>) -> Result<Value, (Value, &'static str)> {
    match answer {
        Ok(_) => Ok(json!({})),
        Err(error) => Err((protocol_error(error), "CONTRACT-15")),
    }
}

/// What a tools/call or a prompts/get must be seen to send: its name with the recorded
/// arguments, and how the check says so.
fn named_with_arguments(params: &Value) -> (Value, String) {
    let name = params.get("name").cloned().unwrap_or(Value::Null);
    let label = format!("of {name} with the recorded arguments");
    let sent = json!({"name": name, "arguments": arguments_matcher(params.get("arguments"))});
    (sent, label)
}

fn single(e: &Exchange) -> (Value, Vec<Value>) {
    let method = e.method();
    let params = e.params();
    let p = |name: &str| params.get(name).cloned().unwrap_or(Value::Null);
    let answer = e.answer.clone().unwrap_or(Ok(json!({})));
    let rest_error = |error: &Value| Err((protocol_error(error), "CONTRACT-15"));
    let (step, outcome, sent, cites) = match method {
        "tools/call" => {
            let mut step = json!({"op": "call_tool", "name": p("name")});
            if let Some(Value::Object(args)) = params.get("arguments")
                && !args.is_empty()
            {
                step["arguments"] = p("arguments");
            }
            if params.pointer("/_meta/progressToken").is_some() {
                step["progress"] = json!(true);
            }
            let outcome = match &answer {
                Ok(r) if r["isError"] == true => Err((json!("tool_error"), "PROF-RES-3")),
                Ok(r) if !r["structuredContent"].is_null() => {
                    Ok(json!({"structured": {"$literal": r["structuredContent"]}}))
                }
                Ok(r) => Ok(json!({"text": texts(&r["content"])})),
                Err(error) => Err((protocol_error(error), "PROF-RES-4")),
            };
            (
                step,
                outcome,
                Some(named_with_arguments(params)),
                "CONTRACT-7",
            )
        }
        "resources/read" => {
            let outcome = match &answer {
                Ok(r) => {
                    let contents: Vec<Value> = r["contents"]
                        .as_array()
                        .into_iter()
                        .flatten()
                        .map(|c| match c.get("text") {
                            Some(text) => json!({"uri": c["uri"], "text": text}),
                            None => json!({"uri": c["uri"]}),
                        })
                        .collect();
                    Ok(json!({ "contents": contents }))
                }
                Err(error) => rest_error(error),
            };
            let step = json!({"op": "read_resource", "uri": p("uri")});
            (
                step,
                outcome,
                Some((json!({"uri": p("uri")}), format!("of {}", p("uri")))),
                "CONTRACT-13",
            )
        }
        "prompts/get" => {
            let mut step = json!({"op": "get_prompt", "name": p("name")});
            if let Some(args) = params.get("arguments").filter(|a| a.is_object()) {
                step["arguments"] = args.clone();
            }
            let outcome = match &answer {
                Ok(r) => {
                    let messages: Vec<Value> = r["messages"]
                        .as_array()
                        .into_iter()
                        .flatten()
                        .map(|m| json!({"role": m["role"], "content": block(&m["content"])}))
                        .collect();
                    Ok(json!({ "messages": messages }))
                }
                Err(error) => rest_error(error),
            };
            (
                step,
                outcome,
                Some(named_with_arguments(params)),
                "CONTRACT-13",
            )
        }
        "completion/complete" => {
            let mut step = json!({"op": "complete", "ref": p("ref"), "argument": p("argument")});
            if let Some(context) = params.get("context") {
                step["context"] = context.clone();
            }
            let outcome = match &answer {
                Ok(r) => Ok(
                    json!({"values": r.pointer("/completion/values").cloned().unwrap_or(json!([]))}),
                ),
                Err(error) => rest_error(error),
            };
            let sent =
                json!({"ref": {"$literal": p("ref")}, "argument": {"$literal": p("argument")}});
            (
                step,
                outcome,
                Some((sent, "with the recorded ref and argument".to_owned())),
                "CONTRACT-13",
            )
        }
        "logging/setLevel" => {
            let outcome = empty_or_error(&answer);
            let step = json!({"op": "set_logging_level", "level": p("level")});
            (
                step,
                outcome,
                Some((
                    json!({"level": p("level")}),
                    format!("with level {}", p("level")),
                )),
                "CONTRACT-13",
            )
        }
        "resources/subscribe" | "resources/unsubscribe" => {
            let op = match method {
                "resources/subscribe" => "subscribe_resource",
                _ => "unsubscribe_resource",
            };
            let outcome = empty_or_error(&answer);
            let step = json!({"op": op, "uri": p("uri")});
            (
                step,
                outcome,
                Some((json!({"uri": p("uri")}), format!("of {}", p("uri")))),
                "CONTRACT-19",
            )
        }
        // ping
        _ => {
            let outcome = empty_or_error(&answer);
            (json!("ping"), outcome, None, "CONTRACT-13")
        }
    };
    let mut matcher = json!({"method": method});
    let mut name = format!("the client sends {method}");
    if let Some((sent, what)) = sent {
        name = format!("{name} {what}");
        matcher["params"] = sent;
    }
    (
        expect(step, outcome),
        vec![wire(name, "sent", matcher, cites)],
    )
}
