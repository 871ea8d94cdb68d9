//! The adapter kits' feature declarations are written three times (Python, JavaScript, Rust)
//! and the runner's grouped causes read their message ("does not declare the feature …").
//! This test reads each kit's table of features and the server request each answers, and
//! its message, and fails naming the kit that drifts from the others or from the runner.

use std::collections::BTreeMap;
use std::path::Path;

/// What the runner's `report/causes.rs` looks for in an `unsupported_op` message.
const MESSAGE: &str = "this adapter does not declare the feature ";

fn read(path: &str) -> String {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).parent().unwrap();
    std::fs::read_to_string(root.join(path)).unwrap_or_else(|e| panic!("{path}: {e}"))
}

/// The `name → request` pairs between `start` and the next `end`: the words in order, a
/// word with a `/` being the request of the name before it (none for `oauth`, `tasks`,
/// `task_receiver`, `trace_context` and `icons`, which answer none: `""`, `None` or `null`).
fn table(path: &str, start: &str, end: &str) -> BTreeMap<String, String> {
    let text = read(path);
    let body = text
        .split_once(start)
        .unwrap_or_else(|| panic!("{path}: no {start:?}"))
        .1;
    let body = &body[..body
        .find(end)
        .unwrap_or_else(|| panic!("{path}: no {end:?}"))];
    let mut words = body
        .split(|c: char| !(c.is_ascii_alphabetic() || c == '/' || c == '_'))
        .filter(|w| !w.is_empty() && !["None", "null"].contains(w))
        .peekable();
    let mut out = BTreeMap::new();
    while let Some(name) = words.next() {
        let request = words.next_if(|w| w.contains('/')).unwrap_or_default();
        out.insert(name.to_owned(), request.to_owned());
    }
    out
}

#[test]
fn the_kits_declare_the_same_features_and_say_so_in_the_runners_words() {
    let rust = table(
        "adapters/kits/rust/src/lib.rs",
        // The array's length is left out: each new feature changes it.
        "pub const FEATURES: [(&str, &str); ",
        "];",
    );
    for feature in [
        "roots",
        "tasks",
        "sampling_tools",
        "url_consent",
        "many_servers",
        "trace_context",
        "icons",
        "client_credentials",
        "dpop",
        "traces",
    ] {
        assert!(rust.contains_key(feature), "{feature}: {rust:?}");
    }
    assert_eq!(rust["tasks"], "", "tasks answers no server request");
    assert_eq!(
        rust["task_receiver"], "",
        "task_receiver answers no server request"
    );
    let python = table(
        "adapters/kits/python/mcp_harness_kit.py",
        "FEATURES = {",
        "}",
    );
    let js = table(
        "adapters/kits/js/mcp-harness-kit.mjs",
        "export const FEATURES = Object.freeze({",
        "});",
    );
    assert_eq!(python, rust, "the Python kit's features");
    assert_eq!(js, rust, "the JavaScript kit's features");
    for kit in [
        "adapters/kits/rust/src/lib.rs",
        "adapters/kits/python/mcp_harness_kit.py",
        "adapters/kits/js/mcp-harness-kit.mjs",
    ] {
        let text = read(kit);
        assert!(
            text.contains(MESSAGE) && text.contains(" (the kit's features)"),
            "{kit}: the unsupported_op message for an undeclared feature must read \"{MESSAGE}<names> (the kit's features)\""
        );
    }
    assert!(
        read("runner/src/report/causes.rs").contains("does not declare the feature "),
        "the runner's causes no longer read the kits' message"
    );
}
