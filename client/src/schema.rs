//! Tool output schemas: a tool result's `structuredContent` checked against the `outputSchema`
//! its tool declared (2025-06-18 on: "Clients SHOULD validate structured results against this
//! schema").
//!
//! - **Which schema.** The one in the client's last successful `tools/list` on this
//!   connection ([`Known`]). A tool that was never listed, or listed without an
//!   `outputSchema`, is not validated: the client does not send a `tools/list` of its own
//!   behind the caller's back, which would add traffic the caller never asked for.
//! - **What is checked.** A result with `isError: true` is left to the caller (it is a tool
//!   error whatever it holds). Otherwise `structuredContent` must be present and valid; a
//!   missing one fails too (the server owes a structured result that conforms). Any failure
//!   is [`ErrorKind::SchemaMismatch`], with a message naming the tool and the cause.
//! - **Dialects.** A schema without `$schema` is JSON Schema 2020-12. 2019-09, draft-07,
//!   draft-06 and draft-04 are supported when named (by their `json-schema.org` URLs, `http`
//!   or `https`, with or without the empty fragment). Any other `$schema` is an unsupported
//!   dialect: the listing keeps the tool as received, and a call whose result must be
//!   validated against it fails with a message naming the dialect.
//! - **`$ref`.** Only references inside the schema (`#/$defs/...`, `#anchor`, `$id`-named
//!   subschemas) and the dialects' own metaschemas (built in) are resolved. Nothing is ever
//!   fetched, from the network or from files: a reference to anything else is unresolved,
//!   and the schema is refused (not treated as permissive).
//! - **Cost.** Before anything is compiled, [`cost::check`] bounds the schema's nesting
//!   depth, its size, and how many subschema evaluations its local references can multiply
//!   into (a chain of `allOf`s each naming the next twice doubles at each link). What passes
//!   is compiled and validated on a thread of its own within a time budget, the caller's
//!   per-request timeout (a backstop for what the static bounds cannot see, such as a huge
//!   instance or references through `$id`s); past it the call fails and the thread is left to
//!   finish on its own.
//!
//! The validator is the `boon` crate (2020-12, 2019-09, draft-07/-06/-04, passes the JSON
//! Schema Test Suite); its default file loader is replaced by one that refuses every URL.
//!
//! In the harness, cases prove that no `$ref` is fetched with a canary: the runner binds a
//! listener on `127.0.0.1:0` for the trial and writes its URL where a server script says
//! `{{canary}}`; any connection it receives shows on the wire check stream `canary`.

pub(crate) mod cost;

use std::collections::HashMap;
use std::error::Error as StdError;
use std::sync::Mutex;
use std::time::Duration;

use serde_json::Value;

use crate::error::{Error, ErrorKind};

/// Where a tool's schema is placed for compiling: a local name (relative references resolve
/// against it, and are refused like any other reference outside the schema).
const ROOT_URL: &str = "file:///mcp-harness/output-schema.json";

/// The dialects named by `$schema` that are supported, as `boon` drafts.
fn dialect(url: &str) -> Option<boon::Draft> {
    let path = url
        .strip_prefix("https://json-schema.org/")
        .or_else(|| url.strip_prefix("http://json-schema.org/"))?;
    let path = path.strip_suffix('#').unwrap_or(path);
    match path {
        "draft/2020-12/schema" => Some(boon::Draft::V2020_12),
        "draft/2019-09/schema" => Some(boon::Draft::V2019_09),
        "draft-07/schema" => Some(boon::Draft::V7),
        "draft-06/schema" => Some(boon::Draft::V6),
        "draft-04/schema" => Some(boon::Draft::V4),
        _ => None,
    }
}

/// Loads the document at a URL a schema refers to.
pub(crate) type Loader = fn(&str) -> Result<Value, Box<dyn StdError>>;

/// How the client treats output schemas; [`Policy::SPEC`] is the correct one (a seam may bend
/// it).
#[derive(Debug, Clone, Copy)]
pub(crate) struct Policy {
    /// Validate at all.
    pub(crate) validate: bool,
    /// The dialect of a schema without `$schema`.
    pub(crate) default_draft: boon::Draft,
    /// Apply the cost bounds and the time budget.
    pub(crate) bounded: bool,
    /// A schema whose references cannot be resolved validates anything (wrong: it is refused).
    pub(crate) permissive_unresolved: bool,
    /// How references outside the schema are loaded; `None`: never (only a defect fetches).
    pub(crate) network: Option<Loader>,
}

impl Policy {
    /// Validate with 2020-12 as the default, within bounds, fetching nothing.
    pub(crate) const SPEC: Policy = Policy {
        validate: true,
        default_draft: boon::Draft::V2020_12,
        bounded: true,
        permissive_unresolved: false,
        network: None,
    };
}

/// The output schemas of the tools of the last listing on one connection, by tool name.
#[derive(Debug, Default)]
pub(crate) struct Known {
    by_tool: Mutex<HashMap<String, Value>>,
}

impl Known {
    /// Replaces what is known with the `outputSchema`s of a complete listing, and hands the
    /// listing back.
    pub(crate) fn remembered(&self, tools: Vec<Value>) -> Vec<Value> {
        self.remember(&tools);
        tools
    }

    /// Replaces what is known with the `outputSchema`s of a complete listing.
    pub(crate) fn remember(&self, tools: &[Value]) {
        let schemas = tools
            .iter()
            .filter_map(|tool| {
                let name = tool.get("name")?.as_str()?;
                let schema = tool.get("outputSchema")?;
                Some((name.to_owned(), schema.clone()))
            })
            .collect();
        if let Ok(mut known) = self.by_tool.lock() {
            *known = schemas;
        }
    }

    /// Checks the `tools/call` `result` of tool `name` within `budget`; hands the result back
    /// unchanged when there is nothing to check or it conforms.
    pub(crate) async fn check(
        &self,
        name: &str,
        result: Value,
        policy: Policy,
        budget: Duration,
    ) -> Result<Value, Error> {
        let schema = match self.by_tool.lock() {
            Ok(known) => known.get(name).cloned(),
            Err(_) => None,
        };
        let Some(schema) = schema else {
            return Ok(result);
        };
        if !policy.validate || result.get("isError").and_then(Value::as_bool) == Some(true) {
            return Ok(result);
        }
        let Some(structured) = result.get("structuredContent").cloned() else {
            return Err(mismatch(
                name,
                "the tool declares an outputSchema but the result has no structuredContent",
            ));
        };
        if policy.bounded {
            cost::check(&schema).map_err(|why| mismatch(name, &why))?;
        }
        let (tx, rx) = tokio::sync::oneshot::channel();
        // A plain thread, not the runtime's blocking pool: a validation past its budget cannot
        // be interrupted, and it must not hold up the runtime's shutdown.
        let spawned = std::thread::Builder::new()
            .name("mcp-schema".into())
            .spawn(move || {
                let _ = tx.send(validate(&schema, &structured, policy));
            });
        if let Err(e) = spawned {
            return Err(mismatch(name, &format!("cannot start the validator: {e}")));
        }
        let verdict = if policy.bounded {
            match tokio::time::timeout(budget, rx).await {
                Ok(verdict) => verdict,
                Err(_) => {
                    return Err(mismatch(
                        name,
                        &format!(
                            "validating against the outputSchema took longer than {} ms",
                            budget.as_millis()
                        ),
                    ));
                }
            }
        } else {
            rx.await
        };
        match verdict {
            Ok(Ok(())) => Ok(result),
            Ok(Err(why)) => Err(mismatch(name, &why)),
            Err(_) => Err(mismatch(name, "the validator stopped without a verdict")),
        }
    }
}

fn mismatch(tool: &str, why: &str) -> Error {
    Error::new(ErrorKind::SchemaMismatch, format!("tool {tool:?}: {why}"))
}

/// Compiles `schema` and validates `instance` against it; the error says why, in one line.
pub(crate) fn validate(schema: &Value, instance: &Value, policy: Policy) -> Result<(), String> {
    let mut compiler = boon::Compiler::new();
    compiler.set_default_draft(policy.default_draft);
    if let Some(named) = schema.get("$schema") {
        let Some(url) = named.as_str() else {
            return Err(format!("$schema is not a string: {named}"));
        };
        if dialect(url).is_none() {
            return Err(format!(
                "unsupported JSON Schema dialect {url:?} (supported: 2020-12, the default; \
                 2019-09, draft-07, draft-06, draft-04)"
            ));
        }
    }
    match policy.network {
        Some(load) => compiler.use_loader(Box::new(Fetch(load))),
        None => compiler.use_loader(Box::new(NoFetch)),
    }
    compiler
        .add_resource(ROOT_URL, schema.clone())
        .map_err(|e| format!("the outputSchema cannot be read: {e}"))?;
    let mut schemas = boon::Schemas::new();
    let index = match compiler.compile(ROOT_URL, &mut schemas) {
        Ok(index) => index,
        Err(boon::CompileError::LoadUrlError { .. }) if policy.permissive_unresolved => {
            return Ok(());
        }
        Err(e) => return Err(format!("the outputSchema cannot be used: {}", one_line(&e))),
    };
    schemas.validate(instance, index).map_err(|e| {
        format!(
            "structuredContent does not match the outputSchema: {}",
            one_line(&e)
        )
    })
}

/// An error and its sources on one line.
fn one_line(e: &dyn StdError) -> String {
    let mut text = e.to_string();
    let mut source = e.source();
    while let Some(s) = source {
        text.push_str(": ");
        text.push_str(&s.to_string());
        source = s.source();
    }
    text.split_whitespace().collect::<Vec<_>>().join(" ")
}

/// The loader of a correct client: nothing outside the schema is ever loaded.
struct NoFetch;

/// Loads a reference outside the schema with the policy's loader.
struct Fetch(Loader);

impl boon::UrlLoader for Fetch {
    fn load(&self, url: &str) -> Result<Value, Box<dyn StdError>> {
        (self.0)(url)
    }
}

impl boon::UrlLoader for NoFetch {
    fn load(&self, url: &str) -> Result<Value, Box<dyn StdError>> {
        Err(format!("{url} is outside the schema and is not fetched").into())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    const BUDGET: Duration = Duration::from_secs(5);

    fn check(schema: Value, instance: Value) -> Result<(), String> {
        validate(&schema, &instance, Policy::SPEC)
    }

    #[test]
    fn default_dialect_is_2020_12() {
        let schema = json!({"type": "object", "properties": {"pair": {
            "type": "array", "prefixItems": [{"type": "string"}, {"type": "number"}]
        }}});
        assert!(check(schema.clone(), json!({"pair": ["a", 1]})).is_ok());
        // Under draft-07 `prefixItems` means nothing and this would pass.
        assert!(check(schema, json!({"pair": ["a", "b"]})).is_err());
    }

    #[test]
    fn defs_and_anchors_resolve_locally() {
        let schema = json!({
            "$schema": "https://json-schema.org/draft/2020-12/schema",
            "$defs": {"temp": {"$anchor": "t", "type": "number"}, "unit": {"enum": ["C", "F"]}},
            "type": "object",
            "properties": {"temp": {"$ref": "#t"}, "unit": {"$ref": "#/$defs/unit"}},
            "required": ["temp"],
        });
        assert!(check(schema.clone(), json!({"temp": 21, "unit": "C"})).is_ok());
        assert!(check(schema.clone(), json!({"temp": "hot"})).is_err());
        assert!(check(schema, json!({"temp": 1, "unit": "K"})).is_err());
    }

    #[test]
    fn named_older_dialects_are_supported_unknown_ones_refused() {
        let draft7 = json!({"$schema": "http://json-schema.org/draft-07/schema#",
            "type": "object", "properties": {"n": {"type": "integer"}}});
        assert!(check(draft7.clone(), json!({"n": 3})).is_ok());
        assert!(check(draft7, json!({"n": "3"})).is_err());
        let odd = json!({"$schema": "https://example.invalid/dialect", "type": "object"});
        let why = check(odd, json!({})).unwrap_err();
        assert!(why.contains("unsupported JSON Schema dialect"), "{why}");
    }

    #[test]
    fn network_and_file_refs_are_never_loaded() {
        for target in [
            "http://127.0.0.1:9/s.json",
            "file:///etc/passwd",
            "other.json",
        ] {
            let schema = json!({"type": "object", "properties": {"x": {"$ref": target}}});
            let why = check(schema, json!({"x": 1})).unwrap_err();
            assert!(why.contains("not fetched"), "{target}: {why}");
        }
    }

    #[tokio::test]
    async fn known_schemas_come_from_the_last_listing() {
        let known = Known::default();
        let result = json!({"content": [], "structuredContent": {"t": "x"}});
        // Never listed: not validated.
        assert!(
            known
                .check("w", result.clone(), Policy::SPEC, BUDGET)
                .await
                .is_ok()
        );
        known.remember(&[json!({"name": "w", "inputSchema": {}, "outputSchema": {
            "type": "object", "properties": {"t": {"type": "number"}}}})]);
        let e = known
            .check("w", result.clone(), Policy::SPEC, BUDGET)
            .await
            .unwrap_err();
        assert_eq!(e.kind, ErrorKind::SchemaMismatch);
        assert!(e.message.contains("\"w\""), "{}", e.message);
        let missing = json!({"content": [{"type": "text", "text": "x"}]});
        assert!(
            known
                .check("w", missing, Policy::SPEC, BUDGET)
                .await
                .is_err()
        );
        let tool_error = json!({"content": [], "isError": true});
        assert!(
            known
                .check("w", tool_error, Policy::SPEC, BUDGET)
                .await
                .is_ok()
        );
        known.remember(&[json!({"name": "w", "inputSchema": {}})]);
        assert!(known.check("w", result, Policy::SPEC, BUDGET).await.is_ok());
    }

    #[tokio::test]
    async fn a_schema_past_the_bounds_fails_in_time() {
        let mut defs = serde_json::Map::new();
        for i in 0..40 {
            let next = format!("#/$defs/d{}", i + 1);
            defs.insert(
                format!("d{i}"),
                json!({"allOf": [{"$ref": next}, {"$ref": next}]}),
            );
        }
        defs.insert("d40".into(), json!({}));
        let schema = json!({"$defs": defs, "$ref": "#/$defs/d0"});
        let known = Known::default();
        known.remember(&[json!({"name": "c", "outputSchema": schema})]);
        let started = std::time::Instant::now();
        let result = json!({"structuredContent": {}});
        let e = known
            .check("c", result, Policy::SPEC, BUDGET)
            .await
            .unwrap_err();
        assert_eq!(e.kind, ErrorKind::SchemaMismatch);
        assert!(started.elapsed() < BUDGET, "{:?}", started.elapsed());
    }
}
