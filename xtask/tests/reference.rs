//! The reference client, run through the driver contract like any other client, passes
//! every case with grade `pass`, and the case files themselves are sound.

mod support;

use mcp_harness_scenarios::model::Transport;
use xtask::conformance::verdict::Grade;

#[test]
fn the_reference_client_passes_every_trial() {
    let trials = support::trials();
    assert!(trials.len() >= 60, "only {} trials", trials.len());
    let failures: Vec<String> = support::in_parallel(trials, |(case, transport)| {
        let eval = support::evaluate_on(&case, transport, &support::driver_cmd(""));
        (eval.grade != Grade::Pass).then(|| {
            let failed: Vec<String> = eval
                .checks
                .iter()
                .filter(|c| !c.passed)
                .map(|c| format!("{}: {}", c.name, c.actual))
                .collect();
            format!(
                "{}@{} graded {}: {failed:?}",
                case.id,
                transport.as_str(),
                eval.grade.as_str()
            )
        })
    })
    .into_iter()
    .flatten()
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

#[test]
fn the_committed_schema_is_fresh() {
    let committed = std::fs::read_to_string(xtask::paths::schema_file()).unwrap_or_default();
    assert!(
        committed == xtask::schema::generate(),
        "scenarios/scenario.schema.json is stale: run `cargo xtask schema` and commit it"
    );
}
