//! Host mode's servable cases (`mcp-harness serve --list`): the list is there, on both
//! transports, and at least fifteen of each.

use std::path::Path;

use mcp_harness_scenarios::load::load_dir;
use mcp_harness_scenarios::model::Transport;

#[test]
fn enough_cases_are_servable_on_both_transports() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let cases = load_dir(root).expect("the built-in cases load");
    let servable: Vec<_> = cases
        .iter()
        .filter(|c| c.scenario.servable().is_ok())
        .collect();
    if std::env::var_os("SHOW_SERVABLE").is_some() {
        for c in &cases {
            println!(
                "{} {:?} {:?}",
                c.id,
                c.scenario.transports,
                c.scenario.servable()
            );
        }
    }
    for transport in [Transport::Stdio, Transport::Https] {
        let on = servable
            .iter()
            .filter(|c| c.scenario.transports.contains(&transport))
            .count();
        assert!(on >= 15, "{on} servable cases on {transport:?}");
    }
    for id in [
        "handshake/happy-path",
        "tools/pagination-three-pages",
        "tools/repeated-cursor-at-once",
        "tools/duplicate-name-same-page",
        "cleanup/after-server-crash",
        "cleanup/exits-on-eof",
        "http/untrusted-certificate-refused",
        "http/session-expired",
    ] {
        let case = cases.iter().find(|c| c.id == id).expect(id);
        assert_eq!(case.scenario.servable(), Ok(()), "{id}");
    }
}

#[test]
fn a_case_that_needs_a_driver_is_not_servable() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let cases = load_dir(root).expect("the built-in cases load");
    let why = |id: &str| {
        let case = cases.iter().find(|c| c.id == id).expect(id);
        case.scenario.servable().expect_err(id)
    };
    assert!(why("http/bearer-token-sent").contains("bearer token"));
    assert!(why("timeouts/call-timeout").contains("timeout"));
    // Its only checks judge what `exposed_tools` reported and cite the driver contract.
    assert!(why("servers/colliding-tool-names").contains("no wire or lifecycle check"));
    // A pause the host cannot be told about: what it shows depends on how long a host
    // happens to wait, so the case is not served (`host: true` would override this).
    let mut reconnected = cases
        .iter()
        .find(|c| c.id == "http/get-stream-reconnected")
        .expect("the case")
        .scenario
        .clone();
    reconnected.host = None;
    assert!(
        reconnected
            .servable()
            .expect_err("derived")
            .contains("sleep")
    );
}

/// A traces case needs the receiver only a trial runs: not servable, even with `host: true`.
#[test]
fn a_traces_case_is_never_servable() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let cases = load_dir(root).expect("the built-in cases load");
    let mut case = cases
        .iter()
        .find(|c| c.id == "handshake/happy-path")
        .expect("the case")
        .scenario
        .clone();
    case.traces = Some(Default::default());
    for host in [None, Some(true)] {
        case.host = host;
        assert!(case.servable().expect_err("traces").contains("traces"));
    }
}
