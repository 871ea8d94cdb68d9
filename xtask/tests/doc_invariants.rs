//! ARCHITECTURE.md's `## Invariants` section is a list a test can check: each item ends
//! with `(checked by `<file>::<test_fn>`)` or `(not yet checked)`. This test fails, naming
//! the line, when an item has neither, or names a file that does not exist or a function
//! that file does not define, so the list cannot claim a check that is not there.

use std::path::Path;

/// The heading of the section this test reads.
const SECTION: &str = "## Invariants";
/// How an item that no test checks yet ends.
const UNCHECKED: &str = "(not yet checked)";
/// How an item names its test: `(checked by `path::test_fn`)`.
const CHECKED: &str = "(checked by `";

/// One item of the list: the line it starts on and its text, continuation lines joined.
struct Item {
    line: usize,
    text: String,
}

/// The items of the invariants section; `None` when the document has no such section.
fn items(doc: &str) -> Option<Vec<Item>> {
    let mut lines = doc.lines().enumerate();
    lines.by_ref().find(|(_, l)| l.trim_end() == SECTION)?;
    let mut items: Vec<Item> = Vec::new();
    for (n, line) in lines {
        if line.starts_with("## ") {
            break;
        }
        if let Some(text) = line.strip_prefix("- ") {
            items.push(Item {
                line: n + 1,
                text: text.trim().to_owned(),
            });
        } else if line.starts_with("  ") && !line.trim().is_empty() {
            if let Some(item) = items.last_mut() {
                item.text.push(' ');
                item.text.push_str(line.trim());
            }
        }
    }
    Some(items)
}

/// The test an item names, as `(file, function)`; `Ok(None)` for an item not yet checked;
/// `Err` saying what is wrong with an item that ends in neither form.
fn named_test(item: &str) -> Result<Option<(&str, &str)>, String> {
    let end = item.trim_end_matches('.').trim_end();
    if end.ends_with(UNCHECKED) {
        return Ok(None);
    }
    let Some(start) = end.rfind(CHECKED).filter(|_| end.ends_with("`)")) else {
        return Err(format!(
            "ends with neither {CHECKED}<file>::<test_fn>`) nor {UNCHECKED}"
        ));
    };
    let named = &end[start + CHECKED.len()..end.len() - 2];
    match named.rsplit_once("::") {
        Some((file, function)) if !file.is_empty() && !function.is_empty() => {
            Ok(Some((file, function)))
        }
        _ => Err(format!("`{named}` is not <file>::<test_fn>")),
    }
}

/// Whether `source` defines a function named `name` (`fn name(` or `fn name<`).
fn defines(source: &str, name: &str) -> bool {
    let needle = format!("fn {name}");
    source.match_indices(&needle).any(|(at, _)| {
        let before = source[..at].chars().next_back();
        let after = source[at + needle.len()..].chars().next();
        !before.is_some_and(|c| c.is_alphanumeric() || c == '_') && matches!(after, Some('(' | '<'))
    })
}

/// Every problem of the document's invariants list, each naming its line. `read` gives a
/// repository file's text, `None` when it does not exist.
fn problems(doc_name: &str, doc: &str, read: impl Fn(&str) -> Option<String>) -> Vec<String> {
    let Some(items) = items(doc) else {
        return vec![format!("{doc_name}: no `{SECTION}` section")];
    };
    if items.is_empty() {
        return vec![format!("{doc_name}: `{SECTION}` lists no item")];
    }
    let mut found = Vec::new();
    for item in &items {
        let at = format!("{doc_name}:{}", item.line);
        match named_test(&item.text) {
            Ok(None) => {}
            Err(why) => found.push(format!("{at}: {why}")),
            Ok(Some((file, function))) => match read(file) {
                None => found.push(format!("{at}: `{file}` does not exist")),
                Some(source) if !defines(&source, function) => {
                    found.push(format!("{at}: `{file}` defines no `fn {function}`"))
                }
                Some(_) => {}
            },
        }
    }
    found
}

#[test]
fn every_invariant_names_a_test_that_exists() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).parent().unwrap();
    let doc = std::fs::read_to_string(root.join("ARCHITECTURE.md")).unwrap();
    let read = |file: &str| std::fs::read_to_string(root.join(file)).ok();
    let found = problems("ARCHITECTURE.md", &doc, read);
    assert!(
        found.is_empty(),
        "invariants without a test that exists:\n{}",
        found.join("\n")
    );
}

#[test]
fn a_broken_item_is_named_with_its_line() {
    let doc = "\
# Title
- not an invariant: outside the section
## Invariants
Intro text.
- Good (checked by `a/tests/x.rs::real_test`).
- Wrapped over two lines
  (checked by `a/tests/x.rs::generic_test`).
- Honest gap (not yet checked).
- No tag at all.
- Missing file (checked by `a/tests/gone.rs::real_test`).
- Missing function (checked by `a/tests/x.rs::real`).
- No function named (checked by `a/tests/x.rs`).
## Next
- after the section (no tag)
";
    let read = |file: &str| {
        (file == "a/tests/x.rs").then(|| "fn real_test() {}\nfn generic_test<T>() {}".to_owned())
    };
    assert_eq!(
        problems("DOC.md", doc, read),
        [
            "DOC.md:9: ends with neither (checked by `<file>::<test_fn>`) nor (not yet checked)",
            "DOC.md:10: `a/tests/gone.rs` does not exist",
            "DOC.md:11: `a/tests/x.rs` defines no `fn real`",
            "DOC.md:12: `a/tests/x.rs` is not <file>::<test_fn>",
        ]
    );
    assert_eq!(
        problems("DOC.md", "# Title\n", |_| None),
        ["DOC.md: no `## Invariants` section"]
    );
}
