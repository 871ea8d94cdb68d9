//! The reference client, run through the driver contract like any other client, passes
//! every case with grade `pass`, and the case files themselves are sound.

mod support;

use mcp_harness_scenarios::model::Transport;
use xtask::conformance::verdict::Grade;

#[test]
fn the_reference_client_passes_every_trial() {
    let cases = support::cases();
    assert!(cases.len() >= 29, "only {} cases", cases.len());
    let failures: Vec<String> = support::in_parallel(cases.iter().collect(), |case| {
        let eval = support::evaluate(case, &support::driver_cmd(""));
        (eval.grade != Grade::Pass).then(|| {
            let failed: Vec<String> = eval
                .checks
                .iter()
                .filter(|c| !c.passed)
                .map(|c| format!("{}: {}", c.name, c.actual))
                .collect();
            format!("{} graded {}: {failed:?}", case.id, eval.grade.as_str())
        })
    })
    .into_iter()
    .flatten()
    .collect();
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

#[test]
fn every_case_runs_over_stdio_and_leaves_no_server_behind() {
    for case in support::cases() {
        assert!(
            case.scenario.transports.contains(&Transport::Stdio),
            "{}",
            case.id
        );
    }
    let case = support::case("cleanup/ignores-sigterm");
    let eval = support::evaluate(&case, &support::driver_cmd(""));
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
