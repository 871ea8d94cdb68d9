//! Seam: what is sent. The last step before a message or an HTTP request leaves the client,
//! and the choice of each request's id. The correct client's messages pass unchanged.
//!
//! Defects here: `reuse-ids`, `reuse-id-on-retry`, `float-ids`, `id-on-notifications`,
//! `skip-initialized`, `late-initialized`, `garbage-to-server`, `drop-arguments`,
//! `mangle-cursor`, `no-meta`, `no-client-info`, `meta-after-fallback`, `alter-request-state`,
//! `bare-retry`, `no-input-responses`, `omit-declined`, `state-on-fresh-request`,
//! `drop-prompt-arguments`, `drop-completion-context`, `ignore-server-capabilities`,
//! `no-trace-context`, `malformed-traceparent`, `new-trace-id`, `malformed-baggage`,
//! `wrong-log-level`, `log-level-once`; over HTTP
//! `no-bearer`, `no-session-id`, `no-protocol-version-header`, `text-plain-body`,
//! `accept-json-only`, `no-mcp-method-header`, `no-mcp-name-header`, `task-no-mcp-name`
//! (`Mcp-Name` left off the tasks extension's requests), `get-accept-json` (the GET stream's
//! `Accept`).

use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Mutex, MutexGuard};

use reqwest::header::{self, HeaderValue};
use serde_json::{Map, Value, json};

use super::Defects;
use crate::era::meta;
use crate::era::mrtr::may_require_input;
use crate::listing::ListKind;

/// What the outgoing defects remember between messages. One per session.
#[derive(Default)]
pub(crate) struct Outgoing {
    /// `meta-after-fallback`: the modern version a dual- or modern-era client puts in `_meta`.
    modern_version: Option<String>,
    /// `reuse-id-on-retry`: the id of the last request that may be retried (`tools/call`,
    /// `resources/read`, `prompts/get`) sent.
    last_call_id: Mutex<Option<i64>>,
    /// `state-on-fresh-request`: the last `requestState` sent.
    last_state: Mutex<Option<Value>>,
    /// `late-initialized`: `notifications/initialized`, held back until the next request.
    held: Mutex<Option<Value>>,
    /// `new-trace-id`: how many trace ids were made up.
    traces: AtomicU64,
    /// `log-level-once`: whether a request carried the log level already.
    level_sent: AtomicBool,
}

fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|p| p.into_inner())
}

impl Outgoing {
    pub(crate) fn new(modern_version: Option<String>) -> Self {
        Outgoing {
            modern_version,
            ..Outgoing::default()
        }
    }

    /// The id a new request goes out with; `fresh` gives the correct one (never used before).
    pub(crate) fn request_id(
        &self,
        d: &Defects,
        method: &str,
        params: &Value,
        fresh: impl FnOnce() -> i64,
    ) -> i64 {
        let reused = match () {
            _ if d.reuse_ids => Some(1),
            _ if d.reuse_id_on_retry && is_retry(method, params) => *lock(&self.last_call_id),
            _ => None,
        };
        let id = reused.unwrap_or_else(fresh);
        if d.reuse_id_on_retry && may_require_input(method) {
            *lock(&self.last_call_id) = Some(id);
        }
        id
    }

    /// The messages actually written for `message` (a request or a notification), in order;
    /// `fresh` gives an unused id. The correct client writes `[message]`.
    pub(crate) fn messages(
        &self,
        d: &Defects,
        mut message: Value,
        fresh: impl FnOnce() -> i64,
    ) -> Vec<Value> {
        let method = message
            .get("method")
            .and_then(Value::as_str)
            .unwrap_or_default()
            .to_owned();
        if message.get("id").is_none() {
            if method == "notifications/initialized" && d.skip_initialized {
                return Vec::new();
            }
            if method == "notifications/initialized" && d.late_initialized {
                *lock(&self.held) = Some(message);
                return Vec::new();
            }
            if d.id_on_notifications {
                message = with_id_after_version(message, fresh());
            }
            return vec![message];
        }
        if let Some(params) = message.get_mut("params") {
            self.bend_params(d, &method, params);
        }
        super::spec_schema::bend(d, &method, &mut message);
        if d.float_ids
            && let Some(id) = message.get("id").and_then(Value::as_i64)
        {
            message["id"] = json!(id as f64 + 0.5);
        }
        let mut out = vec![message];
        out.extend(lock(&self.held).take());
        out
    }

    fn bend_params(&self, d: &Defects, method: &str, params: &mut Value) {
        if let (Some(version), true) = (&self.modern_version, d.meta_after_fallback) {
            if method != "initialize" && params.get("_meta").is_none() {
                *params = meta::with_meta(params.take(), version, &json!({}));
            }
        }
        let retry = is_retry(method, params);
        let Value::Object(p) = params else {
            return;
        };
        if d.no_meta {
            p.remove("_meta");
        }
        if d.no_client_info {
            if let Some(Value::Object(m)) = p.get_mut("_meta") {
                m.remove(meta::CLIENT_INFO);
            }
        }
        if let Some(Value::Object(m)) = p.get_mut("_meta") {
            self.bend_trace(d, m);
        }
        match method {
            _ if ListKind::is_listing(method) && d.mangle_cursor => {
                if let Some(Value::String(cursor)) = p.get_mut("cursor") {
                    cursor.push('x');
                }
            }
            "tools/call" if d.drop_arguments && p.contains_key("arguments") => {
                p.insert("arguments".into(), json!({}));
            }
            "prompts/get" if d.drop_prompt_arguments => {
                p.remove("arguments");
            }
            "completion/complete" if d.drop_completion_context => {
                p.remove("context");
            }
            _ => {}
        }
        if may_require_input(method) {
            self.bend_call(d, p, retry);
        }
    }

    /// The trace context and log level defects, on a request's `_meta`.
    fn bend_trace(&self, d: &Defects, m: &mut Map<String, Value>) {
        if d.no_trace_context {
            for key in ["traceparent", "tracestate", "baggage"] {
                m.remove(key);
            }
        }
        if let Some(Value::String(parent)) = m.get_mut("traceparent") {
            if d.malformed_traceparent {
                *parent = parent.to_uppercase();
            }
            // The trace id is the second field: 32 hex digits after `00-`.
            if d.new_trace_id && parent.len() > 35 {
                let n = self.traces.fetch_add(1, Ordering::Relaxed);
                parent.replace_range(3..35, &format!("{:032x}", 0xabc0_0000 + n));
            }
        }
        if let (true, Some(Value::String(baggage))) = (d.malformed_baggage, m.get_mut("baggage")) {
            baggage.push_str(" x");
        }
        let level_key = "io.modelcontextprotocol/logLevel";
        if d.log_level_once
            && m.contains_key(level_key)
            && self.level_sent.swap(true, Ordering::Relaxed)
        {
            m.remove(level_key);
        }
        if d.wrong_log_level
            && let Some(Value::String(level)) = m.get_mut(level_key)
        {
            if let Some(first) = level.get(..1) {
                *level = format!("{}{}", first.to_uppercase(), &level[1..]);
            }
        }
    }

    /// The multi round-trip defects, on a request that may need input.
    fn bend_call(&self, d: &Defects, p: &mut Map<String, Value>, retry: bool) {
        if d.state_on_fresh_request {
            match p.get("requestState") {
                Some(state) => *lock(&self.last_state) = Some(state.clone()),
                None => {
                    if let Some(state) = lock(&self.last_state).clone() {
                        p.insert("requestState".into(), state);
                    }
                }
            }
        }
        if d.alter_request_state {
            if let Some(Value::String(state)) = p.get_mut("requestState") {
                state.push('x');
            }
        }
        if !retry {
            return;
        }
        if d.bare_retry {
            let keep = ["name", "uri", "inputResponses", "requestState", "_meta"];
            p.retain(|k, _| keep.contains(&k.as_str()));
        }
        if d.no_input_responses {
            p.remove("inputResponses");
        }
        if d.omit_declined {
            if let Some(Value::Object(responses)) = p.get_mut("inputResponses") {
                responses.retain(|_, r| *r != json!({"action": "decline"}));
            }
        }
    }
}

/// A request that answers an `input_required` result.
fn is_retry(method: &str, params: &Value) -> bool {
    may_require_input(method)
        && (params.get("inputResponses").is_some() || params.get("requestState").is_some())
}

/// A notification with an `id` member right after `jsonrpc`.
fn with_id_after_version(message: Value, id: i64) -> Value {
    let Value::Object(fields) = message else {
        return message;
    };
    let mut out = Map::new();
    for (key, value) in fields {
        out.insert(key.clone(), value);
        if key == "jsonrpc" {
            out.insert("id".into(), json!(id));
        }
    }
    Value::Object(out)
}

impl Defects {
    /// Whether a request is sent although the capability it needs is not `declared` (or the
    /// method does not exist in the era spoken); correct: only when it is declared.
    pub(crate) fn may_send_undeclared(&self, declared: bool) -> bool {
        declared || self.ignore_server_capabilities
    }

    /// A line written to a stdio server before anything else; the correct client writes none.
    pub(crate) fn first_line(&self) -> Option<&'static str> {
        self.garbage_to_server
            .then_some("hello from a broken client\n")
    }

    /// An HTTP request as it goes on the wire; the correct client's passes unchanged.
    pub(crate) fn http_request(&self, request: &mut reqwest::Request) {
        let post = request.method() == reqwest::Method::POST;
        let headers = request.headers_mut();
        let about_task = headers
            .get("mcp-method")
            .is_some_and(|m| m.as_bytes().starts_with(b"tasks/"));
        let mut drop = |name: &str, yes: bool| {
            if yes {
                headers.remove(name);
            }
        };
        drop("authorization", self.no_bearer);
        drop("mcp-session-id", self.no_session_id);
        drop("mcp-protocol-version", self.no_protocol_version_header);
        if !post {
            if self.get_accept_json && request_is_get(request) {
                let headers = request.headers_mut();
                headers.insert(header::ACCEPT, HeaderValue::from_static("application/json"));
            }
            return;
        }
        drop("mcp-method", self.no_mcp_method_header);
        drop("mcp-name", self.no_mcp_name_header);
        drop("mcp-name", self.task_no_mcp_name && about_task);
        if self.text_plain_body {
            headers.insert(header::CONTENT_TYPE, HeaderValue::from_static("text/plain"));
        }
        if self.accept_json_only {
            headers.insert(header::ACCEPT, HeaderValue::from_static("application/json"));
        }
    }
}

fn request_is_get(request: &reqwest::Request) -> bool {
    request.method() == reqwest::Method::GET
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::era::Era;

    /// The defect `name` and the memory of a session in `era` (the modern version put in
    /// `_meta` outside the legacy era).
    fn layer(name: &str, era: Era) -> (Defects, Outgoing) {
        let modern = (era != Era::Legacy).then(|| "2026-07-28".to_owned());
        (Defects::only(name), Outgoing::new(modern))
    }

    /// What a session with the defect `name` on, in `era`, writes for `message` first.
    fn sent(name: &str, era: Era, message: Value) -> Vec<Value> {
        let (d, out) = layer(name, era);
        out.messages(&d, message, || 5)
    }

    #[test]
    fn a_correct_client_sends_what_it_built() {
        let (d, out) = (Defects::default(), Outgoing::new(None));
        let call = json!({"jsonrpc":"2.0","id":3,"method":"tools/call",
            "params":{"name":"t","arguments":{"a":1},"requestState":"s","inputResponses":{}}});
        assert_eq!(
            out.messages(&d, call.clone(), || 9),
            std::slice::from_ref(&call)
        );
        assert_eq!(out.request_id(&d, "tools/call", &call["params"], || 7), 7);
        let note = json!({"jsonrpc":"2.0","method":"notifications/initialized"});
        assert_eq!(out.messages(&d, note.clone(), || 9), [note]);
        assert_eq!(Defects::default().first_line(), None);
    }

    #[test]
    fn defects_bend_messages() {
        let note = json!({"jsonrpc":"2.0","method":"notifications/initialized"});
        let list = json!({"jsonrpc":"2.0","id":2,"method":"tools/list","params":{"cursor":"c"}});
        let (d, late) = layer("late-initialized", Era::Legacy);
        assert!(late.messages(&d, note.clone(), || 1).is_empty());
        let written = late.messages(&d, list.clone(), || 1);
        assert_eq!(written, [list.clone(), note.clone()]);
        let with_id = sent("id-on-notifications", Era::Legacy, note);
        assert_eq!(with_id[0]["id"], 5);
        let mangled = sent("mangle-cursor", Era::Legacy, list.clone());
        assert_eq!(mangled[0]["params"]["cursor"], "cx");
        let fallen = sent("meta-after-fallback", Era::Dual, list);
        assert!(fallen[0]["params"]["_meta"][meta::PROTOCOL_VERSION].is_string());
        let retry = json!({"jsonrpc":"2.0","id":4,"method":"tools/call",
            "params":{"name":"t","arguments":{},"requestState":"s","inputResponses":{"a":{}}}});
        let bare = sent("bare-retry", Era::Modern, retry.clone());
        assert_eq!(
            bare[0]["params"],
            json!({"name":"t","requestState":"s","inputResponses":{"a":{}}})
        );
        let prompt = json!({"jsonrpc":"2.0","id":5,"method":"prompts/get",
            "params":{"name":"p","arguments":{"a":"b"}}});
        let written = sent("drop-prompt-arguments", Era::Legacy, prompt);
        assert_eq!(written[0]["params"], json!({"name":"p"}));
        let complete = json!({"jsonrpc":"2.0","id":6,"method":"completion/complete",
            "params":{"ref":{},"argument":{},"context":{"arguments":{}}}});
        let written = sent("drop-completion-context", Era::Legacy, complete);
        assert_eq!(written[0]["params"], json!({"ref":{},"argument":{}}));
        let page = json!({"jsonrpc":"2.0","id":7,"method":"prompts/list","params":{"cursor":""}});
        let written = sent("mangle-cursor", Era::Legacy, page);
        assert_eq!(written[0]["params"]["cursor"], "x");
        assert!(!Defects::default().may_send_undeclared(false));
        assert!(Defects::only("ignore-server-capabilities").may_send_undeclared(false));
        let (d, reuse) = layer("reuse-id-on-retry", Era::Modern);
        let first = reuse.request_id(&d, "tools/call", &json!({"name":"t"}), || 8);
        assert_eq!(first, 8);
        assert_eq!(
            reuse.request_id(&d, "tools/call", &retry["params"], || 9),
            8
        );
    }
}
