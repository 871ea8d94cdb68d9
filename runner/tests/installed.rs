//! The installed binary as a user runs it: from a directory outside the checkout, with the
//! built-in cases it carries, the fake and the driver it plays itself, and the user's own
//! case directories (`--cases`, `--only-cases`): passing, failing, colliding, malformed.

#[path = "support/outside.rs"]
mod outside;
use outside::{BIN, harness, text};

use std::path::{Path, PathBuf};

use serde_json::{Value, json};

/// A new user's first runs (`case show`, the bless hint, `run --help`, the kits' examples).
#[path = "installed/first_run.rs"]
mod first_run;

/// The checkout, only to read a built-in case to copy from (never handed to the binary).
fn checkout() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .expect("the runner has a parent directory")
        .to_owned()
}

fn tempdir() -> tempfile::TempDir {
    outside::tempdir_named("mcp-harness-installed-")
}

/// A built-in case as JSON, to base a user's case on.
fn builtin_case(rel: &str) -> Value {
    let path = checkout().join("scenarios").join(rel);
    let text = std::fs::read_to_string(&path).expect("the built-in case exists");
    let mut case: Value = serde_json::from_str(&text).expect("the built-in case is JSON");
    case.as_object_mut().map(|o| o.remove("$schema"));
    case
}

fn write(path: &Path, value: &Value) {
    std::fs::create_dir_all(path.parent().expect("a parent")).expect("a directory");
    std::fs::write(path, serde_json::to_string_pretty(value).expect("JSON")).expect("written");
}

/// A user's directory: a case citing a requirement of its own, one using a built-in fixture,
/// and (when `failing`) one expecting a tool the server never lists.
fn user_dir(root: &Path, failing: bool) -> PathBuf {
    let dir = root.join("my-cases");
    let mut pages = builtin_case("tools/pagination-three-pages.json");
    pages["requirement"] = json!("MINE-01");
    // The listing step is the case's subject, so it names the case's requirement itself.
    pages["plan"][1]["requirement"] = json!("MINE-01");
    write(&dir.join("mine/pages.json"), &pages);
    write(
        &dir.join("mine/tool-error.json"),
        &builtin_case("calls/is-error-result.json"),
    );
    write(
        &dir.join("requirements.json"),
        &json!([{"id": "MINE-01", "level": "must", "text": "Every page is listed.", "source": "my notes"}]),
    );
    if failing {
        let mut wrong = pages.clone();
        wrong["plan"][1]["ok"] =
            json!({"tools": {"$unordered": [{"name": "alpha"}, {"name": "zeta"}]}});
        write(&dir.join("mine/wrong.json"), &wrong);
    }
    dir
}

#[test]
fn lists_and_runs_the_reference_client_from_outside_the_checkout() {
    let here = tempdir();
    let out = harness(here.path(), &["list"]);
    assert!(out.status.success(), "{}", text(&out));
    let listed = String::from_utf8_lossy(&out.stdout);
    assert!(listed.lines().count() > 100, "{listed}");
    assert!(listed.contains("tools/pagination-three-pages@stdio: test"));

    let out = harness(
        here.path(),
        &[
            "run",
            "--report-dir",
            "report",
            "--exact",
            "tools/pagination-three-pages@stdio",
            "tools/pagination-three-pages@https",
            "calls/is-error-result@stdio",
        ],
    );
    assert!(out.status.success(), "{}", text(&out));
    assert!(text(&out).contains("3 pass"), "{}", text(&out));
    let results: Value = serde_json::from_str(
        &std::fs::read_to_string(here.path().join("report/results.json")).expect("results"),
    )
    .expect("results.json is JSON");
    let trials = results["trials"].as_array().expect("trials");
    assert_eq!(trials.len(), 3);
    for trial in trials {
        let rerun = trial["rerun"].as_str().unwrap_or_default();
        assert!(rerun.starts_with("mcp-harness run "), "{rerun}");
    }
    assert!(here.path().join("report/report.html").is_file());
}

#[test]
fn the_conformance_alias_and_the_schema_work() {
    let here = tempdir();
    let out = harness(here.path(), &["conformance", "--list", "tools/pagination"]);
    assert!(out.status.success(), "{}", text(&out));
    assert!(String::from_utf8_lossy(&out.stdout).contains("tools/pagination-three-pages@https"));
    let out = harness(here.path(), &["schema"]);
    let printed: Value = serde_json::from_slice(&out.stdout).expect("the schema is JSON");
    let committed: Value = serde_json::from_str(
        &std::fs::read_to_string(checkout().join("scenarios/scenario.schema.json"))
            .expect("the committed schema"),
    )
    .expect("JSON");
    assert_eq!(printed, committed);
}

#[test]
fn requirements_shows_the_coverage_of_a_users_own_cases() {
    let here = tempdir();
    let dir = user_dir(here.path(), false);
    write(
        &dir.join("requirements.json"),
        &json!([
            {"id": "MINE-01", "level": "must", "text": "Every page is listed.", "source": "my notes"},
            {"id": "MINE-02", "level": "should", "transport": "stdio", "text": "Nobody checks this yet.", "source": "my notes"}
        ]),
    );
    let dir_arg = dir.to_string_lossy().into_owned();
    let out = harness(here.path(), &["requirements", "--cases", &dir_arg]);
    let shown = text(&out);
    assert!(out.status.success(), "{shown}");
    assert!(
        shown.contains("coverage by the 2 cases of") && shown.contains("(2 requirements)"),
        "{shown}"
    );
    assert!(
        shown.contains("MINE-01 [must] covered: Every page is listed."),
        "{shown}"
    );
    assert!(shown.contains("check: mine/pages:"), "{shown}");
    assert!(
        shown.contains("MINE-02 [should] not: Nobody checks this yet."),
        "{shown}"
    );
    // Only its own catalogue is listed; the built-in ids its cases cite are named once.
    assert!(!shown.contains("LIFE-01 [must]"), "{shown}");
    assert!(
        shown.contains("your cases also cite built-in requirements:"),
        "{shown}"
    );
    let out = harness(
        here.path(),
        &["requirements", "--cases", &dir_arg, "--coverage", "not"],
    );
    let shown = text(&out);
    assert!(
        shown.contains("MINE-02") && !shown.contains("MINE-01 [must]"),
        "{shown}"
    );

    // Without a catalogue of its own, the built-in one is shown, as these cases cover it.
    std::fs::remove_file(dir.join("requirements.json")).expect("removed");
    std::fs::remove_file(dir.join("mine/pages.json")).expect("removed");
    let out = harness(here.path(), &["requirements", "--cases", &dir_arg]);
    let shown = text(&out);
    assert!(out.status.success(), "{shown}");
    assert!(shown.contains("over the built-in catalogue"), "{shown}");
    assert!(shown.contains("check: mine/tool-error:"), "{shown}");
    assert!(
        shown.contains("[must] not:"),
        "most built-in requirements are not covered: {shown}"
    );

    // A directory that is not one is named.
    let out = harness(here.path(), &["requirements", "--cases", "no-such-dir"]);
    assert_eq!(out.status.code(), Some(2), "{}", text(&out));
    assert!(text(&out).contains("--cases no-such-dir"), "{}", text(&out));

    // The catalogue's schema is printed as committed.
    let out = harness(here.path(), &["schema", "--requirements"]);
    let printed: Value = serde_json::from_slice(&out.stdout).expect("the schema is JSON");
    let committed: Value = serde_json::from_str(
        &std::fs::read_to_string(checkout().join("scenarios/requirements.schema.json"))
            .expect("the committed schema"),
    )
    .expect("JSON");
    assert_eq!(printed, committed);
}

#[test]
fn each_adapter_kit_is_written_out_as_in_the_checkout_and_never_over_a_file() {
    let here = tempdir();
    for (language, file, in_checkout) in [
        (
            "python",
            "mcp_harness_kit.py",
            "adapters/kits/python/mcp_harness_kit.py",
        ),
        (
            "js",
            "mcp-harness-kit.mjs",
            "adapters/kits/js/mcp-harness-kit.mjs",
        ),
        (
            "rust",
            "mcp-harness-kit/src/lib.rs",
            "adapters/kits/rust/src/lib.rs",
        ),
    ] {
        let out = harness(here.path(), &["kit", language]);
        assert!(out.status.success(), "{language}: {}", text(&out));
        let written = std::fs::read(here.path().join(file)).expect("the kit's main file");
        let source = std::fs::read(checkout().join(in_checkout)).expect("the kit in the checkout");
        assert!(
            written == source,
            "{language}: {file} differs from {in_checkout}"
        );
        let again = harness(here.path(), &["kit", language]);
        assert_eq!(again.status.code(), Some(2), "{language}: {}", text(&again));
        assert!(text(&again).contains("--force"), "{}", text(&again));
        let forced = harness(here.path(), &["kit", language, "--force"]);
        assert!(forced.status.success(), "{language}: {}", text(&forced));
    }
    assert!(!here.path().join("__pycache__").exists());
}

#[test]
fn the_hidden_fake_rejects_a_bad_command_line() {
    let here = tempdir();
    let out = harness(here.path(), &["fake-stdio", "--play"]);
    assert_eq!(out.status.code(), Some(2), "{}", text(&out));
    assert!(text(&out).contains("mcp-harness fake-stdio: --play needs a value"));
}

#[test]
fn user_cases_are_blessed_then_pass_beside_their_snapshots() {
    let here = tempdir();
    let dir = user_dir(here.path(), false);
    let dir_arg = dir.to_string_lossy().into_owned();
    // The reference client compares snapshots: none yet. The hint says how to write them,
    // and is followed word for word.
    let out = harness(here.path(), &["run", "--only-cases", &dir_arg]);
    assert_eq!(out.status.code(), Some(101), "{}", text(&out));
    assert!(text(&out).contains("no snapshot"), "{}", text(&out));
    let hint = format!("run `mcp-harness run --only-cases {dir_arg} --bless`");
    assert!(text(&out).contains(&hint), "{}", text(&out));
    let out = harness(here.path(), &["run", "--only-cases", &dir_arg, "--bless"]);
    assert!(out.status.success(), "{}", text(&out));
    assert!(dir.join("snapshots/mine__pages@stdio.snap").is_file());
    assert!(dir.join("snapshots/mine__tool-error@https.snap").is_file());
    let out = harness(here.path(), &["run", "--only-cases", &dir_arg]);
    assert!(out.status.success(), "{}", text(&out));
    assert!(text(&out).contains("4 pass"), "{}", text(&out));
    // --cases adds them to the built-in cases.
    let out = harness(here.path(), &["list", "--cases", &dir_arg]);
    let listed = String::from_utf8_lossy(&out.stdout);
    assert!(listed.contains("mine/pages@stdio: test"), "{listed}");
    assert!(
        listed.contains("tools/pagination-three-pages@stdio: test"),
        "{listed}"
    );
}

#[test]
fn a_failing_user_case_fails_the_run_with_its_own_requirement() {
    let here = tempdir();
    let dir = user_dir(here.path(), true);
    let client = format!("'{BIN}' driver");
    let out = harness(
        here.path(),
        &[
            "run",
            "--only-cases",
            &dir.to_string_lossy(),
            "--client",
            &client,
            "--client-name",
            "mine",
        ],
    );
    assert_eq!(out.status.code(), Some(101), "{}", text(&out));
    let shown = text(&out);
    assert!(
        shown.contains("4 pass, 0 non-strict, 0 unimplemented, 2 fail"),
        "{shown}"
    );
    assert!(
        shown.contains("Requirement: MINE-01 Every page is listed."),
        "{shown}"
    );
    assert!(
        shown.contains("--only-cases"),
        "the re-run command keeps the directory: {shown}"
    );
}

#[test]
fn a_user_case_id_colliding_with_a_built_in_one_names_both_files() {
    let here = tempdir();
    let dir = here.path().join("clash");
    let copy = dir.join("tools/pagination-three-pages.json");
    write(&copy, &builtin_case("tools/pagination-three-pages.json"));
    let out = harness(here.path(), &["list", "--cases", &dir.to_string_lossy()]);
    assert_eq!(out.status.code(), Some(2), "{}", text(&out));
    let shown = text(&out);
    assert!(
        shown.contains(&copy.canonicalize().unwrap().display().to_string()),
        "{shown}"
    );
    assert!(
        shown.contains("the built-in case scenarios/tools/pagination-three-pages.json"),
        "{shown}"
    );
    // With --only-cases there is no built-in case to collide with.
    let out = harness(
        here.path(),
        &["list", "--only-cases", &dir.to_string_lossy()],
    );
    assert!(out.status.success(), "{}", text(&out));
}

#[test]
fn a_malformed_user_case_is_an_error_naming_file_and_field() {
    let here = tempdir();
    let dir = here.path().join("broken");
    let mut case = builtin_case("tools/pagination-three-pages.json");
    case["plan"][1]["op"] = json!("list_toolz");
    write(&dir.join("bad-op.json"), &case);
    let mut unknown = builtin_case("tools/pagination-three-pages.json");
    unknown["requirement"] = json!("NOT-IN-ANY-CATALOGUE");
    write(&dir.join("unknown-requirement.json"), &unknown);
    let out = harness(here.path(), &["list", "--cases", &dir.to_string_lossy()]);
    assert_eq!(out.status.code(), Some(2), "{}", text(&out));
    let shown = text(&out);
    assert!(shown.contains("bad-op.json"), "{shown}");
    assert!(shown.contains("plan[1]"), "{shown}");
    assert!(shown.contains("list_toolz"), "{shown}");
    assert!(shown.contains("unknown-requirement.json"), "{shown}");
    assert!(shown.contains("NOT-IN-ANY-CATALOGUE"), "{shown}");
    assert!(shown.contains("a requirement of your own needs"), "{shown}");
    assert!(shown.contains("2 scenario file(s) rejected"), "{shown}");
    // A directory that is not there is named too.
    let out = harness(here.path(), &["list", "--cases", "no-such-dir"]);
    assert_eq!(out.status.code(), Some(2), "{}", text(&out));
    assert!(text(&out).contains("--cases no-such-dir"), "{}", text(&out));
}

/// `sdk`, `bench` and `soak` are commands of a checkout (`cargo xtask`): outside one the
/// binary refuses them at once and says where they run, instead of starting any work.
#[test]
fn checkout_commands_are_refused_and_point_to_cargo_xtask() {
    let here = tempdir();
    for command in ["sdk", "bench", "soak"] {
        let out = harness(here.path(), &[command, "all"]);
        let said = text(&out);
        assert_eq!(out.status.code(), Some(2), "{said}");
        assert!(
            said.contains(&format!("unrecognized subcommand '{command}'")),
            "{said}"
        );
    }
    let help = text(&harness(here.path(), &["--help"]));
    assert!(
        help.contains("run `cargo xtask sdk|bench|soak` there"),
        "{help}"
    );
}
