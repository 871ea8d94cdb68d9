//! `mcp-harness case-from` as a user runs it: sessions the fakes recorded for built-in cases
//! (taken from the trial's transcript by a client wrapper) become cases of a directory of
//! the user's, which the reference client passes and a broken client fails; the files are
//! canonical; bad input is named by file, line and field.

#[path = "support/outside.rs"]
mod outside;
use outside::{BIN, harness, text};

use std::path::{Path, PathBuf};
use std::process::Output;

fn tempdir() -> tempfile::TempDir {
    outside::tempdir_named("mcp-harness-case-from-")
}

/// Runs the built-in stdio trials `trials` with the reference driver behind a wrapper that
/// copies each trial's transcript (the path the fake's argv names) to `dir/<case>.jsonl`.
fn record_builtin(here: &Path, trials: &[&str]) -> PathBuf {
    let dir = here.join("recordings");
    std::fs::create_dir_all(&dir).expect("a directory");
    let wrapper = here.join("wrap.sh");
    let script = format!(
        "#!/bin/sh\n'{BIN}' driver \"$@\"; status=$?\n\
         t=$(printf '%s' \"$MCP_HARNESS_SERVER_COMMAND\" | sed -n 's/.*\"--transcript\",\"\\([^\"]*\\)\".*/\\1/p')\n\
         cp \"$t\" '{}'/\"$(printf '%s' \"$MCP_HARNESS_SCENARIO\" | tr / _).jsonl\"\nexit $status\n",
        dir.display()
    );
    std::fs::write(&wrapper, script).expect("written");
    use std::os::unix::fs::PermissionsExt as _;
    std::fs::set_permissions(&wrapper, std::fs::Permissions::from_mode(0o755)).expect("chmod");
    let wrapper = wrapper.to_string_lossy().into_owned();
    let mut args = vec!["run", "--client", &wrapper, "--exact"];
    args.extend(trials);
    let out = harness(here, &args);
    assert!(out.status.success(), "{}", text(&out));
    dir
}

fn case_from(here: &Path, recording: &Path, name: &str, out_dir: &Path) -> Output {
    harness(
        here,
        &[
            "case-from",
            &recording.to_string_lossy(),
            "--name",
            name,
            "--out",
            &out_dir.to_string_lossy(),
        ],
    )
}

fn run_cases(here: &Path, dir: &Path, client: &str) -> Output {
    harness(
        here,
        &[
            "run",
            "--only-cases",
            &dir.to_string_lossy(),
            "--client",
            client,
        ],
    )
}

#[test]
fn recorded_sessions_become_cases_the_reference_passes_and_broken_clients_fail() {
    let here = tempdir();
    let here = here.path();
    let recordings = record_builtin(
        here,
        &[
            "tools/pagination-three-pages@stdio",
            "calls/is-error-result@stdio",
            "calls/structured-content@stdio",
            "prompts/get-with-arguments@stdio@2025-06-18",
            "roots/list-answered@stdio",
            "progress/reported-in-order@stdio",
            "era/modern/empty-string-cursor@stdio",
        ],
    );
    let cases = here.join("my-cases");
    for (file, name) in [
        ("tools_pagination-three-pages", "replay/pages"),
        ("calls_is-error-result", "replay/is-error"),
        ("calls_structured-content", "replay/structured"),
        ("prompts_get-with-arguments", "replay/prompt"),
        ("roots_list-answered", "replay/roots"),
        ("progress_reported-in-order", "replay/progress"),
        ("era_modern_empty-string-cursor", "replay/modern-pages"),
    ] {
        let out = case_from(
            here,
            &recordings.join(format!("{file}.jsonl")),
            name,
            &cases,
        );
        assert!(out.status.success(), "{file}: {}", text(&out));
        let path = cases.join(format!("{name}.json"));
        assert!(
            text(&out).contains(&path.display().to_string()),
            "{}",
            text(&out)
        );
        // Canonical: what `cargo xtask fmt-cases` would write is what was written.
        let written = std::fs::read_to_string(&path).expect("the case was written");
        let formatted = mcp_harness_scenarios::canonical::format_case(&written).expect("a case");
        assert_eq!(formatted, written, "{name} is not in canonical shape");
    }

    let reference = format!("'{BIN}' driver");
    let out = run_cases(here, &cases, &reference);
    assert!(out.status.success(), "{}", text(&out));
    assert!(
        text(&out).contains("14 pass, 0 non-strict, 0 unimplemented, 0 fail"),
        "{}",
        text(&out)
    );

    // Each broken client fails the replay of a session that shows its defect.
    for (defect, case, check) in [
        (
            "first-page-only",
            "replay/pages",
            "the client asks for the 3 pages of tools/list",
        ),
        (
            "ignore-is-error",
            "replay/is-error",
            "(call_tool) fails with error kind tool_error",
        ),
        (
            "text-only",
            "replay/structured",
            "(call_tool) succeeds with {\"structured\"",
        ),
        (
            "drop-arguments",
            "replay/structured",
            "the client sends tools/call of",
        ),
    ] {
        let out = run_cases(here, &cases, &format!("'{BIN}' driver --defect {defect}"));
        let shown = text(&out);
        assert_eq!(out.status.code(), Some(101), "{defect}: {shown}");
        assert!(
            shown.contains(&format!("{case}@stdio ... FAILED")),
            "{defect}: {shown}"
        );
        assert!(
            shown.contains(&format!("{case}@https ... FAILED")),
            "{defect}: {shown}"
        );
        assert!(shown.contains(check), "{defect}: {shown}");
    }

    // A client that does nothing but exit fails every replay.
    let out = run_cases(here, &cases, "true");
    assert!(text(&out).contains("0 pass"), "{}", text(&out));
}

#[test]
fn bad_input_is_named_by_file_line_and_field() {
    let here = tempdir();
    let here = here.path();
    let out_dir = here.join("out");
    let missing = case_from(here, &here.join("nope.jsonl"), "a/b", &out_dir);
    assert_eq!(missing.status.code(), Some(2), "{}", text(&missing));
    assert!(
        text(&missing).contains("nope.jsonl: cannot read"),
        "{}",
        text(&missing)
    );

    let bad = here.join("bad.jsonl");
    std::fs::write(
        &bad,
        "{\"from\":\"client\",\"message\":{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"initialize\"}}\n\
         {\"from\":\"host\",\"message\":{}}\n",
    )
    .expect("written");
    let out = case_from(here, &bad, "a/b", &out_dir);
    assert_eq!(out.status.code(), Some(2), "{}", text(&out));
    assert!(
        text(&out).contains("bad.jsonl:2: `from` is \"host\""),
        "{}",
        text(&out)
    );

    let no_initialize = here.join("ping.jsonl");
    std::fs::write(
        &no_initialize,
        "{\"from\":\"client\",\"message\":{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"ping\"}}\n",
    )
    .expect("written");
    let out = case_from(here, &no_initialize, "a/b", &out_dir);
    assert_eq!(out.status.code(), Some(2), "{}", text(&out));
    assert!(
        text(&out).contains("expected the opening of a session"),
        "{}",
        text(&out)
    );

    let out = case_from(here, &bad, "../escape", &out_dir);
    assert_eq!(out.status.code(), Some(2), "{}", text(&out));
    assert!(
        text(&out).contains("--name \"../escape\""),
        "{}",
        text(&out)
    );
    assert!(!out_dir.exists(), "nothing is written on bad input");
}
