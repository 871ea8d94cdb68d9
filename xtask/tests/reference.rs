//! The reference client, run through the driver contract like any other client, passes
//! every case with grade `pass`, and the case files themselves are sound.

mod support;

use mcp_harness::conformance::snapshot;
use mcp_harness::conformance::verdict::{self, Grade};
use mcp_harness_scenarios::model::Transport;

/// Run through `cargo xtask conformance` as a user runs it, which also compares every
/// trial's transcript with its committed snapshot. The test binaries that need the whole
/// suite against the reference client otherwise (the defects inventory collects the checks it
/// makes) run it in their own way; this is the one run of the command line's default.
#[test]
fn the_reference_client_passes_every_trial_with_its_snapshots() {
    let trials = support::trials();
    assert!(trials.len() >= 60, "only {} trials", trials.len());
    let reports = tempfile::tempdir().unwrap();
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_xtask"))
        .args(["conformance", "--no-build", "--report-dir"])
        .arg(reports.path())
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "{stdout}\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(stdout.contains(" 0 fail"), "{stdout}");
    assert!(!stdout.contains(" 0 pass"), "{stdout}");
    let results =
        mcp_harness::report::RunResults::load(&reports.path().join("results.json")).unwrap();
    let mut ran: Vec<&str> = results.trials.iter().map(|t| t.name.as_str()).collect();
    ran.sort_unstable();
    let mut all: Vec<String> = trials
        .iter()
        .map(|(case, transport)| case.trial_name(*transport))
        .collect();
    all.sort_unstable();
    assert_eq!(ran, all, "every trial ran once");
    let failures: Vec<String> = results
        .trials
        .iter()
        .filter(|t| t.grade != Grade::Pass)
        .map(|t| {
            let failed: Vec<_> = t
                .checks
                .iter()
                .filter(|c| !c.passed)
                .map(|c| &c.name)
                .collect();
            format!("{} graded {}: {failed:?}", t.name, t.grade.as_str())
        })
        .collect();
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

#[test]
fn a_stubborn_stdio_server_is_gone_after_the_trial() {
    let case = support::case("cleanup/ignores-sigterm");
    let eval = support::evaluate_on(&case, Transport::Stdio, &support::driver_cmd(""));
    assert_eq!(eval.run.servers.len(), 1);
    assert!(!eval.run.servers[0].outlived_client);
}

/// Tokens handed to clients all start with this; none may reach anything the harness writes.
const TOKEN_PREFIX: &str = "mcp-harness-secret-";

#[test]
fn the_bearer_token_reaches_no_transcript_snapshot_or_report() {
    let case = support::case("http/bearer-token-sent");
    let leaky = format!(
        "echo \"token: $MCP_HARNESS_BEARER_TOKEN\" >&2; echo \"$MCP_HARNESS_BEARER_TOKEN\"; {}",
        support::driver_cmd("")
    );
    for client in [support::driver_cmd(""), leaky] {
        let eval = support::evaluate_on(&case, Transport::Https, &client);
        let transcript = format!("{:?}", eval.run.records);
        let snapshot = snapshot::render(&eval.run);
        let report = verdict::render_failure(eval.grade, &eval.checks, &eval.run, true);
        let checks = format!("{:?}", eval.checks);
        for (what, text) in [
            ("transcript", &transcript),
            ("snapshot", &snapshot),
            ("report", &report),
            ("checks", &checks),
        ] {
            assert!(
                !text.contains(TOKEN_PREFIX),
                "the token reached the {what} with client {client}:\n{text}"
            );
        }
        assert!(transcript.contains("Bearer [valid]"), "{transcript}");
    }
}

#[test]
fn the_committed_schema_is_fresh() {
    let committed = std::fs::read_to_string(xtask::paths::schema_file()).unwrap_or_default();
    assert!(
        committed == xtask::schema::generate(),
        "scenarios/scenario.schema.json is stale: run `cargo xtask schema` and commit it"
    );
}

#[test]
fn the_committed_fixture_schema_is_fresh() {
    let path = xtask::schema::fixture_schema_path(&xtask::paths::schema_file());
    let committed = std::fs::read_to_string(&path).unwrap_or_default();
    assert!(
        committed == xtask::schema::generate_fixture(),
        "{} is stale: run `cargo xtask schema` and commit it",
        path.display()
    );
}

#[test]
fn every_snapshot_belongs_to_a_trial() {
    let names: Vec<String> = support::trials()
        .iter()
        .map(|(case, transport)| case.trial_name(*transport))
        .collect();
    let stale = snapshot::stale(&xtask::paths::snapshots_dir(), &names);
    assert!(
        stale.is_empty(),
        "snapshots whose trial no longer exists (delete them): {stale:?}"
    );
}

#[test]
fn every_case_file_is_in_canonical_shape() {
    let differ = xtask::fmt_cases::run(&xtask::paths::scenarios_dir(), &[], true)
        .unwrap_or_else(|e| panic!("{e}"));
    assert!(
        differ.is_empty(),
        "not in canonical shape (run `cargo xtask fmt-cases`): {differ:?}"
    );
}
