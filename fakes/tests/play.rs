//! The play file carries a trial to the stdio fake whole: every built-in case's prepared
//! script, scaled, reads back exactly as the runner wrote it, so the fake plays what the
//! runner resolved and nothing is lost on the way.

use std::path::Path;

use mcp_harness_fakes::cli::Play;
use mcp_harness_scenarios::model::TimeScale;

#[test]
fn every_builtin_case_reaches_the_fake_unchanged() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../scenarios");
    let cases = mcp_harness_scenarios::load_dir(&root).expect("the built-in cases load");
    let trials = mcp_harness_scenarios::trials(&cases);
    assert!(trials.len() > 600, "{} trials", trials.len());
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("play.json");
    let scale = TimeScale::parse("2.5").unwrap();
    for (case, _) in trials {
        let mut case = case;
        case.scenario = case.scenario.scaled(scale);
        case.scenario.server = case
            .scenario
            .server
            .with_canary("http://127.0.0.1:9")
            .expect(&case.id);
        let play = Play::of(&case);
        play.write(&path).unwrap();
        assert_eq!(Play::read(&path).as_ref(), Ok(&play), "{}", case.id);
        assert_eq!(play.request_timeout_ms, case.scenario.timeout_ms);
    }
}
