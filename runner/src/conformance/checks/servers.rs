//! Wire checks that name an extra server (a case's `servers`, a check's `server`): judged on
//! that server's own transcript exactly as a check without `server` is on the main server's.
//! The canary and the client's output belong to no server; they read the same either way.

use serde_json::Value;

use mcp_harness_scenarios::matcher::Captures;
use mcp_harness_scenarios::model::{TimeScale, WireExpectation, WireStream};

use super::super::trial::TrialRun;
use super::{expect, rules};

/// Judges `w` on what the extra server `name` recorded.
pub(super) fn wire_check(
    w: &WireExpectation,
    name: &str,
    run: &TrialRun,
    seed: &Captures,
    scale: TimeScale,
) -> Result<(), (String, String)> {
    let records = match run.others.get(name) {
        Some(records) => records.clone(),
        None => Err(format!("no transcript of the server {name:?}")),
    };
    let view = TrialRun {
        records,
        others: Default::default(),
        traces: None,
        ..run.clone()
    };
    let arrived = super::arrivals(&view);
    let http_requests = rules::http_requests(&view);
    let printed = super::client_output(&view);
    let both_ways = super::transcript(&view);
    let (items, times): (Vec<&Value>, &[Option<u64>]) = match w.on {
        WireStream::Messages => (view.received(), &arrived),
        WireStream::HttpRequests => (http_requests.iter().collect(), &[]),
        WireStream::Canary => (view.canary.iter().flat_map(|c| &c.seen).collect(), &[]),
        WireStream::ClientOutput => (printed.iter().collect(), &[]),
        WireStream::Transcript => (both_ways.iter().collect(), &[]),
        // The client's spans are one collection, whichever server a request went to.
        WireStream::Spans => (run.traces.iter().flat_map(|t| &t.spans).collect(), &[]),
    };
    expect::wire_check(w, &items, times, seed, scale)
}
