//! Snapshots of normalized transcripts, kept with insta under `snapshots/` and reviewed
//! like code. Only the reference client's trials are snapshotted: they pin what the
//! reference client and the fakes put on the wire, so a change in either shows as a diff.
//!
//! Each snapshot's header names the case file it comes from (insta's `input_file`), and a
//! snapshot whose trial no longer exists is reported ([`stale`]).
//!
//! Nondeterminism is removed before comparison: pids become `server#N`, implementation
//! versions become `[version]`, error messages (free text) are dropped from outcome lines.
//! libtest-mimic does not capture output, so insta is told to print nothing and a failed
//! comparison comes back as a message carrying the diff.

use std::cell::Cell;
use std::collections::HashMap;
use std::fmt::Write as _;
use std::path::Path;

use serde_json::Value;

use mcp_harness_scenarios::transcript::{Event, Record};

use super::checks::lifecycle_events;
use super::trial::TrialRun;
use super::verdict::describe_event;

/// The most outcome lines a rendering shows (a flooding client may print thousands).
const SHOWN_LINES: usize = 100;

/// The most transcript records a rendering shows (a listing whose pages never end runs to
/// the client's page cap: a thousand requests and answers).
const SHOWN_RECORDS: usize = 100;

thread_local! {
    static QUIET: Cell<bool> = const { Cell::new(false) };
}

/// Configures insta for the runner: never write `.snap.new` files, print nothing, and
/// write snapshots only when blessing (then every one, so that headers stay current). Call
/// before any thread starts.
pub fn configure(workspace_root: &Path, bless: bool) {
    // SAFETY: called at the start of `main`, before the runner starts any thread.
    unsafe {
        std::env::set_var("INSTA_WORKSPACE_ROOT", workspace_root);
        std::env::set_var("INSTA_UPDATE", if bless { "force" } else { "no" });
        std::env::set_var("INSTA_OUTPUT", "none");
        std::env::set_var("INSTA_FORCE_PASS", "0");
    }
    let previous = std::panic::take_hook();
    std::panic::set_hook(Box::new(move |info| {
        if !QUIET.with(Cell::get) {
            previous(info);
        }
    }));
}

/// A rendered trial with the scaled durations the client reports (the reference client's
/// cancellation reasons say `no response within N ms` for the request timeout and `within
/// the maximum of N ms` for a call's `max_timeout_ms`) written back as the case states them,
/// so that snapshots do not depend on the run's time scale.
pub fn unscale(text: String, scenario: &mcp_harness_scenarios::model::Scenario) -> String {
    use mcp_harness_scenarios::model::Step;
    let scale = scenario.time_scale;
    if scale.is_one() {
        return text;
    }
    let maxima = scenario.plan.iter().filter_map(|step| match step {
        Step::CallTool { max_timeout_ms, .. } => *max_timeout_ms,
        _ => None,
    });
    let mut text = text;
    for (prefix, scaled) in std::iter::once(("within", scenario.timeout_ms))
        .chain(maxima.map(|ms| ("within the maximum of", ms)))
    {
        text = text.replace(
            &format!("{prefix} {scaled} ms"),
            &format!("{prefix} {} ms", scale.unscaled_ms(scaled)),
        );
    }
    text
}

/// The normalized text of a trial, as snapshotted: with what the canary saw, if the case has
/// one, and its origin written back as the placeholder (the port differs in every trial).
pub fn render(run: &TrialRun) -> String {
    let text = render_trial(run);
    let Some(canary) = &run.canary else {
        return text;
    };
    let mut text = text;
    for seen in &canary.seen {
        let _ = writeln!(text, "canary: {seen}");
    }
    // An isolated trial's canaries have fixed addresses and no loopback origin to hide.
    if canary.origin.is_empty() {
        return text;
    }
    text.replace(
        &canary.origin,
        mcp_harness_scenarios::model::canary::PLACEHOLDER,
    )
}

fn render_trial(run: &TrialRun) -> String {
    let mut out = String::from("outcomes:\n");
    for line in run.stdout_lines.iter().take(SHOWN_LINES) {
        let shown = serde_json::from_str::<Value>(line)
            .map(|mut v| {
                if let Some(error) = v.get_mut("error").and_then(Value::as_object_mut) {
                    error.remove("message");
                }
                normalize(&mut v);
                v.to_string()
            })
            .unwrap_or_else(|_| line.clone());
        let _ = writeln!(out, "  {shown}");
    }
    if let Some(more) = run
        .stdout_lines
        .len()
        .checked_sub(SHOWN_LINES)
        .filter(|&n| n > 0)
    {
        let _ = writeln!(out, "  ... {more} more lines");
    }
    out.push_str("transcript:\n");
    let names: HashMap<u32, String> = run
        .servers
        .iter()
        .enumerate()
        .map(|(i, p)| (p.pid, format!("server#{}", i + 1)))
        .collect();
    // When the fake notices that the client closed a response stream races the client's next
    // POST (a 2025 client's notifications/cancelled goes out as it aborts); the wire checks
    // judge that order. The snapshot shows each close right after the request it closes.
    let mut closed: Vec<Value> = run
        .records
        .iter()
        .flatten()
        .filter_map(|r| match &r.event {
            Event::StreamClosed { id } => Some(id.clone()),
            _ => None,
        })
        .collect();
    let (mut shown, mut hidden) = (0usize, 0usize);
    let records: &[Record] = run.records.as_deref().unwrap_or_default();
    for record in responses_sorted(records) {
        let mut event = record.event.clone();
        if matches!(event, Event::StreamClosed { .. }) {
            continue;
        }
        if let Event::HttpRequest {
            method,
            headers,
            endpoint,
            ..
        } = &mut event
        {
            if let Some(session) = headers.get_mut("mcp-session-id") {
                *session = "[session]".into();
            }
            // The standalone GET stream runs beside the POSTs: its place in the order, and
            // whether it started at all before a short plan closed, is a race. Cases that care
            // about it check it on the wire; the snapshot leaves it out. (An authorization
            // endpoint's GETs are the client's own sequence, and stay.)
            if method == "GET" && endpoint.is_none() {
                continue;
            }
        }
        // How many connections a client opens (a pool may open a spare one and race close)
        // is not the snapshot's business; the certificate cases check on the wire that one
        // was opened.
        if matches!(event, Event::Connected) {
            continue;
        }
        if let Event::Received { message } | Event::Sent { message } = &mut event {
            normalize(message);
        }
        if shown == SHOWN_RECORDS {
            hidden += 1;
            if let Event::Received { message } = &event {
                closed.retain(|c| Some(c) != message.get("id"));
            }
            continue;
        }
        shown += 1;
        let who = names.get(&record.pid).map_or("fake", String::as_str);
        let _ = writeln!(out, "  {who} {}", describe_event_full(&event));
        let request_id = match &event {
            Event::Received { message } if message.get("method").is_some() => message.get("id"),
            _ => None,
        };
        if let Some(at) = request_id.and_then(|id| closed.iter().position(|c| c == id)) {
            let id = closed.remove(at);
            let _ = writeln!(
                out,
                "  {who} {}",
                describe_event(&Event::StreamClosed { id })
            );
        }
    }
    for id in closed {
        let _ = writeln!(
            out,
            "  fake {}",
            describe_event(&Event::StreamClosed { id })
        );
    }
    if hidden > 0 {
        let _ = writeln!(out, "  ... {hidden} more records");
    }
    if !run.servers.is_empty() {
        let ends: Vec<&str> = lifecycle_events(run).iter().map(|e| e.as_str()).collect();
        let _ = writeln!(out, "lifecycle: {}", ends.join(" → "));
    }
    out
}

/// The records in order, except that the client's answers to server requests sent close
/// together, which race each other (over HTTP each goes in its own POST), are shown sorted
/// by id within each run of them in a row; wire checks judge their order where a case
/// cares. The records the rendering leaves out (connections, GET requests) do not break a
/// run.
fn responses_sorted(records: &[Record]) -> Vec<&Record> {
    let response_id = |r: &Record| match &r.event {
        Event::Received { message } if message.get("method").is_none() => {
            message.get("id").map(Value::to_string)
        }
        _ => None,
    };
    let kept: Vec<&Record> = records
        .iter()
        .filter(|r| match &r.event {
            Event::Connected => false,
            Event::HttpRequest {
                method, endpoint, ..
            } => method != "GET" || endpoint.is_some(),
            _ => true,
        })
        .collect();
    // Units: a response (with the POST that carried it alone), or any other record.
    let mut units: Vec<(Option<String>, Vec<&Record>)> = Vec::new();
    let mut i = 0;
    while i < kept.len() {
        let post = matches!(&kept[i].event, Event::HttpRequest { method, .. } if method == "POST");
        let carried = kept.get(i + 1).and_then(|r| response_id(r));
        let alone = kept.get(i + 2).is_none_or(|r| response_id(r).is_none());
        match (post, carried) {
            (true, Some(id)) if alone => {
                units.push((Some(id), vec![kept[i], kept[i + 1]]));
                i += 2;
            }
            _ => {
                units.push((response_id(kept[i]), vec![kept[i]]));
                i += 1;
            }
        }
    }
    for run in units.chunk_by_mut(|a, b| a.0.is_some() && b.0.is_some()) {
        run.sort_by(|a, b| a.0.cmp(&b.0));
    }
    units.into_iter().flat_map(|(_, unit)| unit).collect()
}

fn describe_event_full(event: &Event) -> String {
    match event {
        Event::Received { message } => format!("→ {message}"),
        Event::Sent { message } => format!("← {message}"),
        other => describe_event(other),
    }
}

/// Replaces the values that change between builds or runs.
fn normalize(v: &mut Value) {
    match v {
        Value::Object(map) => {
            for (key, value) in map.iter_mut() {
                // Legacy `clientInfo`/`serverInfo`, and their modern `_meta` keys.
                let info = matches!(
                    key.as_str(),
                    "clientInfo"
                        | "serverInfo"
                        | "io.modelcontextprotocol/clientInfo"
                        | "io.modelcontextprotocol/serverInfo"
                );
                if info && value.get("version").is_some() {
                    value["version"] = Value::from("[version]");
                }
                normalize(value);
            }
        }
        Value::Array(items) => items.iter_mut().for_each(normalize),
        _ => {}
    }
}

/// Compares `content` with the snapshot `name` in `dir`, whose header names `case_file`; on a
/// mismatch returns the diff.
/// `program` starts a run (`cargo xtask conformance`, `mcp-harness run`), for the hint to bless.
pub fn compare(
    dir: &Path,
    case_file: &Path,
    name: &str,
    content: &str,
    program: &str,
) -> Result<(), String> {
    let mut settings = insta::Settings::clone_current();
    settings.set_input_file(case_file);
    settings.set_snapshot_path(dir);
    settings.set_prepend_module_to_snapshot(false);
    settings.set_omit_expression(true);
    QUIET.with(|q| q.set(true));
    let outcome = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
        settings.bind(|| insta::assert_snapshot!(name, content));
    }));
    QUIET.with(|q| q.set(false));
    if outcome.is_ok() {
        return Ok(());
    }
    let file = file_of(dir, name);
    let Ok(stored) = std::fs::read_to_string(&file) else {
        return Err(format!(
            "no snapshot {} yet; review the transcript and run `{program} --bless`",
            file.display()
        ));
    };
    let stored_body = body(&stored);
    let diff = similar::TextDiff::from_lines(stored_body.trim_end(), content.trim_end());
    Err(format!(
        "the transcript differs from {} (- stored, + now); if the change is intended, run \
         `{program} --bless`:\n{}",
        file.display(),
        diff.unified_diff().context_radius(2)
    ))
}

/// The snapshot file of trial `name` in `dir`.
pub fn file_of(dir: &Path, name: &str) -> std::path::PathBuf {
    dir.join(format!("{}.snap", name.replace('/', "__")))
}

/// The snapshots in `dir` that belong to none of `trials` (their case was renamed or
/// removed), sorted.
pub fn stale(dir: &Path, trials: &[String]) -> Vec<std::path::PathBuf> {
    let wanted: std::collections::HashSet<std::path::PathBuf> =
        trials.iter().map(|t| file_of(dir, t)).collect();
    let mut out: Vec<std::path::PathBuf> = std::fs::read_dir(dir)
        .into_iter()
        .flatten()
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.extension().is_some_and(|e| e == "snap") && !wanted.contains(p))
        .collect();
    out.sort();
    out
}

/// The content of a `.snap` file, after its front matter.
fn body(snap: &str) -> &str {
    let mut rest = snap;
    for _ in 0..2 {
        match rest.find("---\n") {
            Some(at) => rest = &rest[at + 4..],
            None => return snap,
        }
    }
    rest
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn received(message: Value) -> Record {
        Record {
            pid: 1,
            event: Event::Received { message },
        }
    }

    fn post() -> Record {
        Record {
            pid: 1,
            event: Event::HttpRequest {
                method: "POST".into(),
                path: "/mcp".into(),
                headers: Default::default(),
                status: 202,
                origin: None,
                endpoint: None,
                params: None,
            },
        }
    }

    fn shown(records: &[Record]) -> Vec<String> {
        responses_sorted(records)
            .into_iter()
            .map(|r| match &r.event {
                Event::Received { message } => message.to_string(),
                Event::HttpRequest { method, .. } => method.clone(),
                other => format!("{other:?}"),
            })
            .collect()
    }

    #[test]
    fn answers_in_a_row_are_sorted_by_id_with_their_posts() {
        let records = vec![
            received(json!({"method": "tools/call", "id": 2})),
            post(),
            received(json!({"id": "b", "result": {}})),
            Record {
                pid: 1,
                event: Event::Connected,
            },
            post(),
            received(json!({"id": "a", "result": {}})),
            received(json!({"method": "tools/call", "id": 3})),
            received(json!({"id": "d", "result": {}})),
            received(json!({"id": "c", "result": {}})),
        ];
        assert_eq!(
            shown(&records),
            [
                r#"{"method":"tools/call","id":2}"#,
                "POST",
                r#"{"id":"a","result":{}}"#,
                "POST",
                r#"{"id":"b","result":{}}"#,
                r#"{"method":"tools/call","id":3}"#,
                r#"{"id":"c","result":{}}"#,
                r#"{"id":"d","result":{}}"#,
            ]
        );
    }
}
