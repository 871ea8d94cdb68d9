//! The published JSON Schemas of the MCP revisions the harness runs, compiled in
//! (`scenarios/spec-schema/`, copied unedited from the spec repository; `ORIGIN` names the
//! commit and each file's SHA-256), so an installed `mcp-harness` judges messages outside a
//! checkout too.
//!
//! Each revision's schema is compiled once per process, on first use, with `boon`. What a
//! message is judged against is read from the schema itself, not from a table kept here:
//! - a request or notification the client sends: the member of the `ClientRequest` or
//!   `ClientNotification` union whose `method` is that const;
//! - a result answering a server request: the `XResult` of the `XRequest` member of
//!   `ServerRequest` with that method, when `ClientResult` lists it (else the plain result
//!   the union allows, `EmptyResult` for `ping`); `CreateTaskResult` when the request asked
//!   for a task;
//! - the envelopes: `JSONRPCRequest`, `JSONRPCNotification`, `JSONRPCResponse` (or
//!   `JSONRPCResultResponse`), `JSONRPCError` (or `JSONRPCErrorResponse`).
//!
//! `format` is left as `boon` treats each dialect (asserted for draft-07, annotation only for
//! 2020-12): the schemas' formats (`uri`, `byte`, `uri-template`) are the TypeScript source's
//! annotations.

use std::collections::HashMap;
use std::sync::OnceLock;

use boon::{Compiler, SchemaIndex, Schemas};
use serde_json::Value;

/// Each revision the harness runs, with its vendored schema.
const FILES: [(&str, &str); 5] = [
    (
        "2024-11-05",
        include_str!("../../../../scenarios/spec-schema/2024-11-05.schema.json"),
    ),
    (
        "2025-03-26",
        include_str!("../../../../scenarios/spec-schema/2025-03-26.schema.json"),
    ),
    (
        "2025-06-18",
        include_str!("../../../../scenarios/spec-schema/2025-06-18.schema.json"),
    ),
    (
        "2025-11-25",
        include_str!("../../../../scenarios/spec-schema/2025-11-25.schema.json"),
    ),
    (
        "2026-07-28",
        include_str!("../../../../scenarios/spec-schema/2026-07-28.schema.json"),
    ),
];

/// Where the vendored files are, for messages.
pub(super) const DIR: &str = "scenarios/spec-schema";

/// One revision's schema, compiled, with what each message kind is judged against.
pub(super) struct Revision {
    schemas: Schemas,
    /// Client request method → its definition (name, compiled).
    requests: HashMap<String, Definition>,
    /// Client notification method → its definition.
    notifications: HashMap<String, Definition>,
    /// Server request method → the definition of the result the client answers with.
    results: HashMap<String, Definition>,
    /// The result answering a request that asked for a task (2025-11-25 on).
    task_result: Option<Definition>,
    /// The envelopes: request, notification, result response, error response.
    envelopes: [Definition; 4],
}

/// A definition of the schema, by name, compiled.
#[derive(Clone)]
pub(super) struct Definition {
    /// Its name under `$defs` (or `definitions`).
    pub(super) name: String,
    index: SchemaIndex,
}

/// Which envelope a message needs.
#[derive(Clone, Copy)]
pub(super) enum Envelope {
    Request = 0,
    Notification = 1,
    Result = 2,
    Error = 3,
}

/// The compiled schema of `revision`, if the harness has it (`Err`: it did not compile,
/// which a test rules out for the vendored files).
pub(super) fn revision(revision: &str) -> Option<&'static Result<Revision, String>> {
    static COMPILED: [OnceLock<Result<Revision, String>>; 5] = [const { OnceLock::new() }; 5];
    let at = FILES.iter().position(|(name, _)| *name == revision)?;
    Some(COMPILED[at].get_or_init(|| compile(FILES[at].0, FILES[at].1)))
}

impl Revision {
    /// The definition of a client request `method`, if the revision has one.
    pub(super) fn request(&self, method: &str) -> Option<&Definition> {
        self.requests.get(method)
    }

    /// The definition of a client notification `method`, if the revision has one.
    pub(super) fn notification(&self, method: &str) -> Option<&Definition> {
        self.notifications.get(method)
    }

    /// The result answering server request `method` (`task`: it asked for a task).
    pub(super) fn result(&self, method: &str, task: bool) -> Option<&Definition> {
        match (task, &self.task_result) {
            (true, Some(created)) => Some(created),
            _ => self.results.get(method),
        }
    }

    /// The envelope definition of a message kind.
    pub(super) fn envelope(&self, kind: Envelope) -> &Definition {
        &self.envelopes[kind as usize]
    }

    /// Validates `instance` against `definition`: the leaf errors, each as (instance path,
    /// keyword, message), in order.
    pub(super) fn validate(&self, definition: &Definition, instance: &Value) -> Vec<Leaf> {
        match self.schemas.validate(instance, definition.index) {
            Ok(()) => Vec::new(),
            Err(e) => {
                let mut out = Vec::new();
                leaves(&e, &mut out);
                out
            }
        }
    }
}

/// One thing the schema refused: where in the instance, the keyword, and boon's words.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) struct Leaf {
    /// A JSON pointer into the instance (`""`: the whole of it).
    pub(super) at: String,
    /// The schema keyword that failed (`type`, `required`, `enum`, `const`, …).
    pub(super) keyword: String,
    /// What failed, in boon's words.
    pub(super) message: String,
}

fn leaves(e: &boon::ValidationError<'_, '_>, out: &mut Vec<Leaf>) {
    if e.causes.is_empty() {
        let keyword = e
            .kind
            .keyword_path()
            .map_or_else(|| "schema".to_owned(), |k| k.keyword.to_owned());
        let leaf = Leaf {
            at: e.instance_location.to_string(),
            keyword,
            message: e.kind.to_string(),
        };
        if !out.contains(&leaf) {
            out.push(leaf);
        }
        return;
    }
    for cause in &e.causes {
        leaves(cause, out);
    }
}

/// The definitions object of a schema document (`$defs` from 2020-12, `definitions` before).
fn definitions(doc: &Value) -> Option<(&'static str, &serde_json::Map<String, Value>)> {
    if let Some(Value::Object(defs)) = doc.get("$defs") {
        return Some(("$defs", defs));
    }
    match doc.get("definitions") {
        Some(Value::Object(defs)) => Some(("definitions", defs)),
        _ => None,
    }
}

/// The names a union definition lists: each `$ref` of its `anyOf`, or the definition itself
/// when it is one schema (2026-07-28's `ClientNotification` is a single notification).
fn members<'a>(defs: &'a serde_json::Map<String, Value>, union: &'a str) -> Vec<&'a str> {
    let Some(def) = defs.get(union) else {
        return Vec::new();
    };
    let named = |v: &'a Value| v.get("$ref")?.as_str()?.rsplit('/').next();
    match def.get("anyOf").and_then(Value::as_array) {
        Some(list) => list.iter().filter_map(named).collect(),
        None => vec![named(def).unwrap_or(union)],
    }
}

/// The `method` const of definition `name`.
fn method_of<'a>(defs: &'a serde_json::Map<String, Value>, name: &str) -> Option<&'a str> {
    defs.get(name)?
        .pointer("/properties/method/const")?
        .as_str()
}

fn compile(revision: &str, text: &str) -> Result<Revision, String> {
    let fail = |what: String| format!("{DIR}/{revision}.schema.json: {what}");
    let doc: Value = serde_json::from_str(text).map_err(|e| fail(format!("not JSON: {e}")))?;
    let (key, defs) = definitions(&doc).ok_or_else(|| fail("no $defs or definitions".into()))?;
    let url = format!("https://mcp-harness.invalid/spec-schema/{revision}.json");
    let mut compiler = Compiler::new();
    // Nothing is fetched: the documents the schemas name are the dialects' metaschemas,
    // which boon has built in.
    compiler
        .add_resource(&url, doc.clone())
        .map_err(|e| fail(e.to_string()))?;
    let mut schemas = Schemas::new();
    let mut one = |name: &str| -> Result<Definition, String> {
        let index = compiler
            .compile(&format!("{url}#/{key}/{name}"), &mut schemas)
            .map_err(|e| fail(format!("{name}: {e}")))?;
        Ok(Definition {
            name: name.to_owned(),
            index,
        })
    };
    let mut by_method = |union: &str| -> Result<HashMap<String, Definition>, String> {
        let mut out = HashMap::new();
        for name in members(defs, union) {
            if let Some(method) = method_of(defs, name) {
                out.insert(method.to_owned(), one(name)?);
            }
        }
        Ok(out)
    };
    let requests = by_method("ClientRequest")?;
    let notifications = by_method("ClientNotification")?;
    let client_results = members(defs, "ClientResult");
    let mut results = HashMap::new();
    for name in members(defs, "ServerRequest") {
        let Some(method) = method_of(defs, name) else {
            continue;
        };
        let paired = name
            .strip_suffix("Request")
            .map(|stem| format!("{stem}Result"))
            .filter(|r| client_results.contains(&r.as_str()));
        let plain = ["EmptyResult", "Result"]
            .into_iter()
            .find(|r| defs.contains_key(*r))
            .map(str::to_owned);
        if let Some(result) = paired.or(plain) {
            results.insert(method.to_owned(), one(&result)?);
        }
    }
    // Not a member of `ClientResult`: it answers any request that asked for a task.
    let task_result = match defs.contains_key("CreateTaskResult") {
        true => Some(one("CreateTaskResult")?),
        false => None,
    };
    let first = |names: &[&'static str]| -> Result<&'static str, String> {
        names
            .iter()
            .copied()
            .find(|n| defs.contains_key(*n))
            .ok_or_else(|| fail(format!("none of {names:?}")))
    };
    let envelopes = [
        one(first(&["JSONRPCRequest"])?)?,
        one(first(&["JSONRPCNotification"])?)?,
        one(first(&["JSONRPCResultResponse", "JSONRPCResponse"])?)?,
        one(first(&["JSONRPCErrorResponse", "JSONRPCError"])?)?,
    ];
    Ok(Revision {
        schemas,
        requests,
        notifications,
        results,
        task_result,
        envelopes,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    const ORIGIN: &str = include_str!("../../../../scenarios/spec-schema/ORIGIN");
    const LICENSE: &[u8] = include_bytes!("../../../../scenarios/spec-schema/LICENSE");

    fn sha256(bytes: &[u8]) -> String {
        ring::digest::digest(&ring::digest::SHA256, bytes)
            .as_ref()
            .iter()
            .map(|b| format!("{b:02x}"))
            .collect()
    }

    /// ORIGIN's lines `<sha256>  <file here>  <path in the repository>`.
    fn recorded() -> HashMap<&'static str, &'static str> {
        ORIGIN
            .lines()
            .filter_map(|line| {
                let mut fields = line.split_whitespace();
                let (hash, file, _path) = (fields.next()?, fields.next()?, fields.next()?);
                let hex = hash.len() == 64 && hash.bytes().all(|b| b.is_ascii_hexdigit());
                hex.then_some((file, hash))
            })
            .collect()
    }

    #[test]
    fn the_vendored_files_are_the_commits_files() {
        let recorded = recorded();
        assert!(ORIGIN.contains("commit: "), "ORIGIN names no commit");
        for (revision, text) in FILES {
            let file = format!("{revision}.schema.json");
            let want = recorded
                .get(file.as_str())
                .unwrap_or_else(|| panic!("{DIR}/ORIGIN has no line for {file}"));
            assert_eq!(
                sha256(text.as_bytes()),
                *want,
                "{DIR}/{file} differs from the file ORIGIN records: copy it again, unedited"
            );
        }
        assert_eq!(Some(&sha256(LICENSE).as_str()), recorded.get("LICENSE"));
        assert_eq!(recorded.len(), FILES.len() + 1, "ORIGIN lists other files");
    }

    #[test]
    fn every_revision_the_harness_runs_is_vendored_and_compiles() {
        let runs = mcp_harness_scenarios::model::era::REVISIONS;
        assert_eq!(runs.to_vec(), FILES.map(|f| f.0).to_vec());
        for (rev, text) in FILES {
            // Compiled afresh to show what it costs (`--nocapture`); the check compiles
            // each revision once per process.
            let started = std::time::Instant::now();
            let compiled = compile(rev, text).unwrap();
            eprintln!("{rev}: compiled in {:?}", started.elapsed());
            assert!(compiled.request("tools/call").is_some(), "{rev}");
            assert!(compiled.notification("notifications/cancelled").is_some());
            assert!(revision(rev).unwrap().is_ok());
        }
        assert!(revision("2099-01-01").is_none());
    }

    #[test]
    fn the_method_maps_come_from_the_schema() {
        let old = revision("2024-11-05").unwrap().as_ref().unwrap();
        assert_eq!(old.request("initialize").unwrap().name, "InitializeRequest");
        assert!(old.request("server/discover").is_none());
        assert_eq!(
            old.result("sampling/createMessage", false).unwrap().name,
            "CreateMessageResult"
        );
        assert_eq!(old.result("ping", false).unwrap().name, "EmptyResult");
        assert!(old.result("elicitation/create", false).is_none());
        let tasks = revision("2025-11-25").unwrap().as_ref().unwrap();
        assert_eq!(
            tasks.result("elicitation/create", true).unwrap().name,
            "CreateTaskResult"
        );
        assert_eq!(
            tasks
                .notification("notifications/tasks/status")
                .unwrap()
                .name,
            "TaskStatusNotification"
        );
        let modern = revision("2026-07-28").unwrap().as_ref().unwrap();
        assert_eq!(
            modern.request("server/discover").unwrap().name,
            "DiscoverRequest"
        );
        assert!(modern.request("initialize").is_none());
        assert!(modern.notification("notifications/cancelled").is_some());
    }

    #[test]
    fn leaves_name_the_path_and_the_keyword() {
        let rev = revision("2025-06-18").unwrap().as_ref().unwrap();
        let call = json!({"jsonrpc":"2.0","id":1,"method":"tools/call",
            "params":{"name":"echo","arguments":"{}"}});
        let found = rev.validate(rev.request("tools/call").unwrap(), &call);
        assert_eq!(found.len(), 1, "{found:?}");
        assert_eq!(found[0].at, "/params/arguments");
        assert_eq!(found[0].keyword, "type");
        let fine = json!({"jsonrpc":"2.0","id":1,"method":"tools/call",
            "params":{"name":"echo","arguments":{},"_meta":{"progressToken":1}}});
        assert!(
            rev.validate(rev.request("tools/call").unwrap(), &fine)
                .is_empty()
        );
        let level = json!({"jsonrpc":"2.0","id":1,"method":"logging/setLevel",
            "params":{"level":"verbose"}});
        let found = rev.validate(rev.request("logging/setLevel").unwrap(), &level);
        assert_eq!(found[0].keyword, "enum");
        let init = json!({"jsonrpc":"2.0","id":0,"method":"initialize",
            "params":{"protocolVersion":"2025-06-18","capabilities":{}}});
        let found = rev.validate(rev.request("initialize").unwrap(), &init);
        assert_eq!(
            (found[0].at.as_str(), found[0].keyword.as_str()),
            ("/params", "required")
        );
    }
}
