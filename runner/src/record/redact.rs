//! Secrets out of a recording, before anything is written: the recorder passes every header,
//! message and raw line through here and writes only what comes back, so a secret is never on
//! disk, not even for a moment (no write-then-scrub).
//!
//! What counts as a secret:
//! - headers `authorization`, `proxy-authorization`, `cookie`, `set-cookie`, `dpop`,
//!   `x-api-key`: replaced by a label (`Bearer [redacted]`, `[cookie]`, `[dpop proof]`);
//! - JSON members named [`SECRET_MEMBERS`] (any case): their value becomes `"[redacted]"`
//!   (`code` only when it is not a number: a JSON-RPC error's `code` is no secret);
//! - inside any string: the same names as URL query or form parameters (`?code=…&state=…`),
//!   and `Bearer <token>`;
//! - elicitation answers: a value whose property in the request's `requestedSchema` is
//!   sensitive (`format: password`, `writeOnly: true`, or a name containing one of
//!   [`SENSITIVE_PROPERTY_WORDS`]); see [`Redactor`];
//! - known values, wherever they appear: the recorder's environment variables whose names
//!   say they are secret ([`SECRET_ENV_WORDS`]) or that `--secret-env` names. The server
//!   inherits them and may print one in a result, where no member name gives it away.

use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::sync::{Mutex, OnceLock, PoisonError};

use serde_json::Value;

use mcp_harness_fakes::http::headers::RECORDED;
use mcp_harness_fakes::modern::params::PARAM_PREFIX;

/// What a redacted value becomes.
pub const REDACTED: &str = "[redacted]";

/// JSON members (and URL parameters) whose value is a secret.
pub const SECRET_MEMBERS: [&str; 10] = [
    "access_token",
    "refresh_token",
    "id_token",
    "code",
    "code_verifier",
    "client_secret",
    "client_assertion",
    "assertion",
    "password",
    "token",
];

/// Words that make an environment variable's value a known secret when its name (any case)
/// contains one.
pub const SECRET_ENV_WORDS: [&str; 8] = [
    "TOKEN",
    "SECRET",
    "PASSWORD",
    "PASSWD",
    "API_KEY",
    "APIKEY",
    "PRIVATE_KEY",
    "CREDENTIAL",
];

/// The shortest known secret looked for: shorter values are too common to tell from data.
const SHORTEST_KNOWN: usize = 8;

static KNOWN: OnceLock<Vec<String>> = OnceLock::new();

/// Takes the known secrets from the environment, once, before anything is recorded: the
/// values of variables whose names hold a [`SECRET_ENV_WORDS`] word, or are in `named`.
/// Returns how many there are (never the values).
pub fn know_environment(named: &[String]) -> usize {
    let mut values: Vec<String> = std::env::vars_os()
        .filter_map(|(name, value)| Some((name.into_string().ok()?, value.into_string().ok()?)))
        .filter(|(name, _)| {
            let upper = name.to_ascii_uppercase();
            named.contains(name) || SECRET_ENV_WORDS.iter().any(|w| upper.contains(w))
        })
        .map(|(_, value)| value)
        .filter(|value| value.len() >= SHORTEST_KNOWN)
        .collect();
    // The longest first, so a secret that holds another is replaced whole.
    values.sort_by_key(|v| std::cmp::Reverse(v.len()));
    values.dedup();
    let count = values.len();
    let _ = KNOWN.set(values);
    count
}

/// `s` with every known secret replaced, when it holds one.
fn without_known(s: &str) -> Option<String> {
    let known = KNOWN.get()?;
    if !known.iter().any(|k| s.contains(k.as_str())) {
        return None;
    }
    Some(
        known
            .iter()
            .fold(s.to_owned(), |out, k| out.replace(k.as_str(), REDACTED)),
    )
}

/// Words that make an elicitation property sensitive when its name contains one.
pub const SENSITIVE_PROPERTY_WORDS: [&str; 5] =
    ["password", "secret", "token", "api_key", "apikey"];

/// The label a secret header is recorded as, or `None` for a header that carries no secret.
pub fn secret_header(name: &str, value: &str) -> Option<String> {
    let label = match name.to_ascii_lowercase().as_str() {
        "authorization" | "proxy-authorization" => match value.split_once(' ') {
            Some((scheme, _)) if scheme.eq_ignore_ascii_case("bearer") => "Bearer [redacted]",
            Some((scheme, _)) if scheme.eq_ignore_ascii_case("dpop") => "DPoP [redacted]",
            Some((scheme, _)) if scheme.eq_ignore_ascii_case("basic") => "Basic [redacted]",
            _ => REDACTED,
        },
        "cookie" | "set-cookie" => "[cookie]",
        "dpop" => "[dpop proof]",
        "x-api-key" => REDACTED,
        _ => return None,
    };
    Some(label.to_owned())
}

/// The headers of a request as recorded: the fakes' allow-list
/// (`mcp_harness_fakes::http::headers::RECORDED`, and every `mcp-param-*` one) as they are
/// (secrets inside them redacted as in any string), secret headers as labels, the rest left
/// out. Names lower-case; a repeated header keeps its values joined by `, `.
pub fn headers<'a>(all: impl IntoIterator<Item = (&'a str, &'a str)>) -> BTreeMap<String, String> {
    let mut kept: BTreeMap<String, String> = BTreeMap::new();
    for (name, value) in all {
        let name = name.to_ascii_lowercase();
        let shown = match secret_header(&name, value) {
            Some(label) => label,
            None if RECORDED.contains(&name.as_str()) || name.starts_with(PARAM_PREFIX) => {
                text(value)
            }
            None => continue,
        };
        kept.entry(name)
            .and_modify(|v| {
                v.push_str(", ");
                v.push_str(&shown);
            })
            .or_insert(shown);
    }
    kept
}

fn is_secret_member(name: &str) -> bool {
    SECRET_MEMBERS.iter().any(|s| s.eq_ignore_ascii_case(name))
}

/// `value` with every secret member and every secret inside a string redacted.
pub fn value(mut v: Value) -> Value {
    redact_in_place(&mut v);
    v
}

fn redact_in_place(v: &mut Value) {
    match v {
        Value::String(s) => {
            if let Some(clean) = text_if_changed(s) {
                *s = clean;
            }
        }
        Value::Array(items) => items.iter_mut().for_each(redact_in_place),
        Value::Object(members) => {
            for (name, member) in members.iter_mut() {
                let secret = is_secret_member(name)
                    && !member.is_null()
                    && !(name.eq_ignore_ascii_case("code") && member.is_number());
                if secret {
                    *member = Value::String(REDACTED.to_owned());
                } else {
                    redact_in_place(member);
                }
            }
        }
        _ => {}
    }
}

/// `s` with `Bearer <token>` and secret URL/form parameters (`code=…`) redacted.
pub fn text(s: &str) -> String {
    text_if_changed(s).unwrap_or_else(|| s.to_owned())
}

fn text_if_changed(s: &str) -> Option<String> {
    let mut changed = false;
    let mut out = String::with_capacity(s.len());
    let bytes = s.as_bytes();
    let mut i = 0;
    while i < s.len() {
        // A parameter starts the string or follows a separator.
        let starts = i == 0 || matches!(bytes[i - 1], b'?' | b'&' | b'#' | b';');
        if starts && let Some(name_end) = secret_param_at(s, i) {
            out.push_str(&s[i..=name_end]);
            out.push_str(REDACTED);
            i = value_end(s, name_end + 1);
            changed = true;
            continue;
        }
        if bearer_at(s, i) {
            let token_start = i + "bearer ".len();
            let end = value_end(s, token_start);
            if end > token_start && &s[token_start..end] != REDACTED {
                out.push_str("Bearer ");
                out.push_str(REDACTED);
                i = end;
                changed = true;
                continue;
            }
        }
        let ch = s[i..].chars().next().unwrap_or(' ');
        out.push(ch);
        i += ch.len_utf8();
    }
    match without_known(if changed { &out } else { s }) {
        Some(clean) => Some(clean),
        None => changed.then_some(out),
    }
}

/// At `i`, a secret parameter's `name=`: the index of its `=`.
fn secret_param_at(s: &str, i: usize) -> Option<usize> {
    let rest = &s[i..];
    let eq = rest.find('=')?;
    let name = &rest[..eq];
    let plain = !name.is_empty()
        && name
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b == b'_' || b == b'-');
    (plain && is_secret_member(name)).then_some(i + eq)
}

fn bearer_at(s: &str, i: usize) -> bool {
    let word = s.get(i..i + "bearer ".len());
    let boundary = i == 0 || !s.as_bytes()[i - 1].is_ascii_alphanumeric();
    boundary && word.is_some_and(|w| w.eq_ignore_ascii_case("bearer "))
}

/// Where a parameter or token value starting at `from` ends.
fn value_end(s: &str, from: usize) -> usize {
    s[from..]
        .find(|c: char| c == '&' || c == '#' || c == '"' || c == '\'' || c.is_whitespace())
        .map_or(s.len(), |n| from + n)
}

/// A line that is not JSON, as recorded: secrets inside it as in any string, and the value of
/// a `"<secret member>": "…"` written in it.
pub fn raw_line(line: &str) -> String {
    let mut out = text(line);
    for name in SECRET_MEMBERS {
        let quoted = format!("\"{name}\"");
        let mut from = 0;
        while let Some(found) = out[from..].find(&quoted) {
            let after = from + found + quoted.len();
            let rest = &out[after..];
            let colon = rest.len() - rest.trim_start().len();
            let Some(value_rest) = rest.trim_start().strip_prefix(':') else {
                from = after;
                continue;
            };
            let value_start =
                after + colon + 1 + (value_rest.len() - value_rest.trim_start().len());
            let tail = &out[value_start..];
            let value_len = if let Some(inner) = tail.strip_prefix('"') {
                inner.find('"').map_or(tail.len(), |n| n + 2)
            } else if name == "code" {
                0
            } else {
                tail.find([',', '}', ']']).unwrap_or(tail.len())
            };
            if value_len > 0 {
                out.replace_range(value_start..value_start + value_len, "\"[redacted]\"");
            }
            from = value_start.min(out.len());
        }
    }
    out
}

/// The sensitive properties of an elicitation's `requestedSchema`.
fn sensitive_properties(schema: &Value) -> Vec<String> {
    let Some(properties) = schema.get("properties").and_then(Value::as_object) else {
        return Vec::new();
    };
    properties
        .iter()
        .filter(|(name, property)| {
            let lower = name.to_ascii_lowercase();
            property.get("format").and_then(Value::as_str) == Some("password")
                || property.get("writeOnly").and_then(Value::as_bool) == Some(true)
                || SENSITIVE_PROPERTY_WORDS.iter().any(|w| lower.contains(w))
        })
        .map(|(name, _)| name.clone())
        .collect()
}

/// Redaction of both directions of one session. It remembers the sensitive properties of
/// every elicitation the server asked for, so that the client's answer is redacted: by the
/// request's id, and, for answers that travel another way (a 2026-07-28 input response
/// inside a later request), in any `content` object of a client message.
#[derive(Debug, Default)]
pub struct Redactor {
    state: Mutex<Elicited>,
}

#[derive(Debug, Default)]
struct Elicited {
    /// Request id (as JSON text) → its sensitive properties.
    by_id: HashMap<String, Vec<String>>,
    /// Every sensitive property name seen in any requested schema.
    names: BTreeSet<String>,
}

impl Redactor {
    /// A message the server sent, as recorded.
    /// (A server that echoes an answer back, in a `content` object, loses it too.)
    pub fn server(&self, mut message: Value) -> Value {
        let mut found = Vec::new();
        collect_elicitations(&message, &mut found);
        let mut state = self.state.lock().unwrap_or_else(PoisonError::into_inner);
        for (id, names) in found {
            state.names.extend(names.iter().cloned());
            if let Some(id) = id {
                state.by_id.insert(id, names);
            }
        }
        if !state.names.is_empty() {
            let names: Vec<String> = state.names.iter().cloned().collect();
            blank_content_objects(&mut message, &names);
        }
        drop(state);
        value(message)
    }

    /// A message the client sent, as recorded.
    pub fn client(&self, mut message: Value) -> Value {
        {
            let mut found = Vec::new();
            collect_elicitations(&message, &mut found);
            let mut state = self.state.lock().unwrap_or_else(PoisonError::into_inner);
            // A schema seen on the host's side too (a peer that relays requests both ways).
            for (_, names) in found {
                state.names.extend(names);
            }
            let answered = message
                .get("id")
                .filter(|_| message.get("method").is_none());
            if let Some(names) = answered.and_then(|id| state.by_id.remove(&id.to_string()))
                && let Some(content) = message.pointer_mut("/result/content")
            {
                blank(content, &names);
            }
            if !state.names.is_empty() {
                let names: Vec<String> = state.names.iter().cloned().collect();
                blank_content_objects(&mut message, &names);
            }
        }
        value(message)
    }
}

/// Every elicitation request inside `message` (`requestedSchema` anywhere), with the id of
/// the JSON-RPC request carrying it when it is one.
fn collect_elicitations(message: &Value, found: &mut Vec<(Option<String>, Vec<String>)>) {
    fn walk(v: &Value, found: &mut Vec<Vec<String>>) {
        match v {
            Value::Object(members) => {
                if let Some(schema) = members.get("requestedSchema") {
                    let names = sensitive_properties(schema);
                    if !names.is_empty() {
                        found.push(names);
                    }
                }
                members.values().for_each(|m| walk(m, found));
            }
            Value::Array(items) => items.iter().for_each(|m| walk(m, found)),
            _ => {}
        }
    }
    let mut all = Vec::new();
    walk(message, &mut all);
    let id = message
        .get("method")
        .and(message.get("id"))
        .map(Value::to_string);
    for names in all {
        found.push((id.clone(), names));
    }
}

fn blank(content: &mut Value, names: &[String]) {
    if let Some(object) = content.as_object_mut() {
        for name in names {
            if let Some(v) = object.get_mut(name) {
                *v = Value::String(REDACTED.to_owned());
            }
        }
    }
}

fn blank_content_objects(v: &mut Value, names: &[String]) {
    match v {
        Value::Object(members) => {
            for (key, member) in members.iter_mut() {
                if key == "content" {
                    blank(member, names);
                }
                blank_content_objects(member, names);
            }
        }
        Value::Array(items) => items
            .iter_mut()
            .for_each(|i| blank_content_objects(i, names)),
        _ => {}
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn headers_keep_the_allow_list_and_label_secrets() {
        let kept = headers([
            ("Authorization", "Bearer sekrit-1"),
            ("Cookie", "sid=sekrit-2"),
            ("DPoP", "eyJ.sekrit-3"),
            ("X-Api-Key", "sekrit-4"),
            ("Mcp-Session-Id", "abc"),
            ("User-Agent", "x"),
        ]);
        let text = format!("{kept:?}");
        assert!(!text.contains("sekrit"), "{text}");
        assert_eq!(kept["authorization"], "Bearer [redacted]");
        assert_eq!(kept["cookie"], "[cookie]");
        assert_eq!(kept["dpop"], "[dpop proof]");
        assert_eq!(kept["mcp-session-id"], "abc");
        assert!(!kept.contains_key("user-agent"));
        assert_eq!(
            secret_header("set-cookie", "a=b").as_deref(),
            Some("[cookie]")
        );
    }

    #[test]
    fn members_strings_and_raw_lines_lose_their_secrets() {
        let v = value(json!({
            "error": {"code": -32601, "message": "see https://as/cb?code=sekrit-5&state=ok"},
            "refresh_token": "sekrit-6",
            "nested": [{"Client_Secret": "sekrit-7", "note": "Authorization: Bearer sekrit-8 then"}],
            "form": "grant_type=authorization_code&code_verifier=sekrit-9&redirect_uri=x",
            "code": "sekrit-10"
        }));
        let text = v.to_string();
        assert!(!text.contains("sekrit"), "{text}");
        assert_eq!(v["error"]["code"], -32601);
        assert!(text.contains("state=ok"), "{text}");
        assert!(text.contains("redirect_uri=x"), "{text}");
        assert!(text.contains("Bearer [redacted] then"), "{text}");
        let line =
            raw_line(r#"{"code": "sekrit-11", "token":42, "x":"?token=sekrit-12"} not json"#);
        assert!(!line.contains("sekrit") && !line.contains("42"), "{line}");
        assert_eq!(text_if_changed("nothing here"), None);
    }

    #[test]
    fn elicitation_answers_to_sensitive_properties_are_redacted() {
        let r = Redactor::default();
        r.server(
            json!({"jsonrpc": "2.0", "id": 7, "method": "elicitation/create", "params": {
                "message": "log in",
                "requestedSchema": {"type": "object", "properties": {
                    "user": {"type": "string"},
                    "pin": {"type": "string", "format": "password"},
                    "hidden": {"type": "string", "writeOnly": true},
                    "my_api_key": {"type": "string"}
                }}
            }}),
        );
        let answer = r.client(json!({"jsonrpc": "2.0", "id": 7, "result": {"action": "accept",
            "content": {"user": "ann", "pin": "sekrit-13", "hidden": "sekrit-14", "my_api_key": "sekrit-15"}}}));
        let text = answer.to_string();
        assert!(!text.contains("sekrit"), "{text}");
        assert_eq!(answer["result"]["content"]["user"], "ann");
        // An answer carried inside a later request (2026-07-28 input responses).
        let later = r.client(
            json!({"jsonrpc": "2.0", "id": 9, "method": "tools/call", "params": {
            "inputResponses": {"e1": {"action": "accept", "content": {"pin": "sekrit-16"}}}}}),
        );
        assert!(!later.to_string().contains("sekrit"), "{later}");
    }
}
