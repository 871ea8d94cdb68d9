//! The reference client, run through the driver contract like any other client, passes
//! every case with grade `pass`, and the case files themselves are sound.

use mcp_harness::conformance::snapshot;
use mcp_harness::conformance::verdict::Grade;
use mcp_harness_scenarios::model::Transport;
use mcp_harness_scenarios::{Case, load_dir};

/// Every trial of the tree's cases.
fn trials() -> Vec<(Case, Transport)> {
    let cases = load_dir(&xtask::paths::scenarios_dir()).unwrap_or_else(|errors| {
        panic!(
            "{}",
            errors
                .iter()
                .map(|e| e.to_string())
                .collect::<Vec<_>>()
                .join("\n")
        )
    });
    mcp_harness_scenarios::trials(&cases)
}

/// Run through `cargo xtask conformance` as a user runs it, which also compares every
/// trial's transcript with its committed snapshot. The test binaries that need the whole
/// suite against the reference client otherwise (the defects inventory collects the checks it
/// makes) run it in their own way; this is the one run of the command line's default.
#[test]
fn the_reference_client_passes_every_trial_with_its_snapshots() {
    let trials = trials();
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
fn the_committed_requirements_schema_is_fresh_and_holds_the_catalogue() {
    let path = xtask::schema::requirements_schema_path(&xtask::paths::schema_file());
    let committed = std::fs::read_to_string(&path).unwrap_or_default();
    assert!(
        committed == xtask::schema::generate_requirements(),
        "{} is stale: run `cargo xtask schema` and commit it",
        path.display()
    );
    let schema: serde_json::Value = serde_json::from_str(&committed).unwrap();
    let mut schemas = boon::Schemas::new();
    let mut compiler = boon::Compiler::new();
    compiler
        .add_resource("requirements.schema.json", schema)
        .unwrap();
    let id = compiler
        .compile("requirements.schema.json", &mut schemas)
        .unwrap();
    let catalogue = xtask::paths::scenarios_dir().join("requirements.json");
    let shipped: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&catalogue).unwrap()).unwrap();
    if let Err(e) = schemas.validate(&shipped, id) {
        panic!("{} does not match its schema: {e}", catalogue.display());
    }
    // A level outside the four, or a field of no meaning, is refused.
    let wrong = serde_json::json!([{"id": "MINE-1", "level": "may", "text": "t", "source": "s"}]);
    assert!(schemas.validate(&wrong, id).is_err());
    let extra = serde_json::json!([{"id": "MINE-1", "level": "must", "text": "t", "source": "s", "sorce": "s"}]);
    assert!(schemas.validate(&extra, id).is_err());
}

#[test]
fn every_snapshot_belongs_to_a_trial() {
    let names: Vec<String> = trials()
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
