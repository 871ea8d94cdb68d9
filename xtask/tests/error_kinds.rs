//! The driver contract's closed vocabulary of error kinds is written five times: the
//! scenarios' model (what a case may expect), the reference client, and the three adapter
//! kits (Rust, Python, JavaScript). This test reads each and fails, naming the file and the
//! kinds that differ, when one list drifts from the model's.

use std::collections::BTreeSet;
use std::path::Path;

use mcp_harness_scenarios::model::ErrorKind;

fn root() -> &'static Path {
    Path::new(env!("CARGO_MANIFEST_DIR")).parent().unwrap()
}

fn read(path: &str) -> String {
    std::fs::read_to_string(root().join(path)).unwrap_or_else(|e| panic!("{path}: {e}"))
}

/// The kinds the model accepts, from its JSON Schema (the `enum` of `ErrorKind`).
fn model_kinds() -> BTreeSet<String> {
    let schema = serde_json::to_value(schemars::schema_for!(ErrorKind)).unwrap();
    let mut out = BTreeSet::new();
    collect_enum(&schema, &mut out);
    assert!(!out.is_empty(), "no enum in {schema}");
    out
}

fn collect_enum(v: &serde_json::Value, out: &mut BTreeSet<String>) {
    match v {
        serde_json::Value::Object(map) => {
            if let Some(serde_json::Value::String(s)) = map.get("const") {
                out.insert(s.clone());
            }
            if let Some(serde_json::Value::Array(values)) = map.get("enum") {
                out.extend(values.iter().filter_map(|v| v.as_str().map(str::to_owned)));
            }
            map.values().for_each(|v| collect_enum(v, out));
        }
        serde_json::Value::Array(items) => items.iter().for_each(|v| collect_enum(v, out)),
        _ => {}
    }
}

/// The names a Rust `as_str` match returns: every `=> "name"` in the function.
fn rust_as_str(path: &str) -> BTreeSet<String> {
    let text = read(path);
    let body = text
        .split_once("fn as_str(self) -> &'static str {")
        .unwrap_or_else(|| panic!("{path}: no `fn as_str`"))
        .1;
    let body = &body[..body.find("\n    }\n").unwrap_or(body.len())];
    body.split("=> \"")
        .skip(1)
        .map(|rest| rest.split('"').next().unwrap_or_default().to_owned())
        .collect()
}

/// The words between `open` and `close` after `anchor`, quotes and commas stripped.
fn listed(path: &str, anchor: &str, open: &str, close: &str) -> BTreeSet<String> {
    let text = read(path);
    let after = text
        .split_once(anchor)
        .unwrap_or_else(|| panic!("{path}: no `{anchor}`"))
        .1;
    let start = after.find(open).unwrap() + open.len();
    let end = start + after[start..].find(close).unwrap();
    after[start..end]
        .split(|c: char| c.is_whitespace() || c == ',' || c == '\'')
        .filter(|w| !w.is_empty())
        .map(str::to_owned)
        .collect()
}

#[test]
fn every_list_of_error_kinds_matches_the_model() {
    let model = model_kinds();
    let lists = [
        ("client/src/error.rs", rust_as_str("client/src/error.rs")),
        (
            "adapters/kits/rust/src/error.rs",
            rust_as_str("adapters/kits/rust/src/error.rs"),
        ),
        (
            "adapters/kits/python/mcp_harness_kit.py",
            listed(
                "adapters/kits/python/mcp_harness_kit.py",
                "ERROR_KINDS = frozenset(",
                "\"\"\"",
                "\"\"\"",
            ),
        ),
        (
            "adapters/kits/js/mcp-harness-kit.mjs",
            listed(
                "adapters/kits/js/mcp-harness-kit.mjs",
                "ERROR_KINDS = Object.freeze(",
                "[",
                "]",
            ),
        ),
    ];
    for (path, kinds) in lists {
        let missing: Vec<_> = model.difference(&kinds).collect();
        let extra: Vec<_> = kinds.difference(&model).collect();
        assert!(
            missing.is_empty() && extra.is_empty(),
            "{path}: its error kinds differ from scenarios/src/model.rs's ErrorKind: missing {missing:?}, extra {extra:?}"
        );
    }
    assert_eq!(model.len(), 19, "{model:?}");
}
