//! Snapshots of normalized transcripts, kept with insta under `snapshots/` and reviewed
//! like code. Only the reference client's trials are snapshotted: they pin what the
//! reference client and the fakes put on the wire, so a change in either shows as a diff.
//!
//! Each snapshot's header names the case file it comes from (insta's `input_file`), and a
//! snapshot whose trial no longer exists is reported ([`stale`]).
//!
//! Nondeterminism is removed before comparison: pids become `server#N`, implementation
//! versions become `[version]`, a task's `createdAt`/`lastUpdatedAt` `[time]`, a task id the
//! client minted `[client-task-N]`, error messages (free text) are dropped from outcome lines.
//! A failed comparison comes back as a message carrying the diff (libtest-mimic does not
//! capture output); see [`compare`] for what insta does here and what it does not.

use std::collections::HashMap;
use std::fmt::Write as _;
use std::path::{Path, PathBuf};
use std::sync::OnceLock;

use insta::TextSnapshotKind;
use insta::internals::TextSnapshotContents;

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

mod spans;

/// How this process compares snapshots: set once by [`configure`] before the first trial.
#[derive(Debug)]
struct Config {
    /// Where relative `input_file` headers start (the checkout, or the user's directory).
    workspace_root: PathBuf,
    /// Write every snapshot instead of comparing.
    bless: bool,
}

static CONFIG: OnceLock<Config> = OnceLock::new();

/// The `source` header of every snapshot: the code that writes them.
const SOURCE: &str = "runner/src/conformance/snapshot.rs";

/// Sets how this process compares snapshots: case paths in headers are written relative to
/// `workspace_root`, and with `bless` every snapshot is written (so that headers stay
/// current) instead of compared. The first call wins; without one, snapshots are compared
/// and case paths written as given.
pub fn configure(workspace_root: &Path, bless: bool) {
    let _ = CONFIG.set(Config {
        workspace_root: workspace_root.to_path_buf(),
        bless,
    });
}

/// A rendered trial with the scaled durations the client reports (the reference client's
/// cancellation reasons say `no response within N ms` for the request timeout and `within
/// the maximum of N ms` for a call's `max_timeout_ms`) and the poll intervals of the tasks
/// the fake plays written back as the case states them,
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
    // The poll interval a task hands the client, in either era's spelling.
    let intervals = scenario
        .server
        .tasks
        .iter()
        .filter_map(|t| t.poll_interval_ms);
    for scaled in intervals {
        for key in ["pollInterval", "pollIntervalMs"] {
            text = text.replace(
                &format!("\"{key}\":{scaled}"),
                &format!("\"{key}\":{}", scale.unscaled_ms(scaled)),
            );
        }
    }
    text
}

/// The normalized text of a trial, as snapshotted: with what the canary saw, if the case has
/// one, and its origin written back as the placeholder (the port differs in every trial).
pub fn render(run: &TrialRun) -> String {
    let mut text = without_server_port(render_trial(run));
    // Each extra server's transcript after the main one's, as its own section.
    for (name, records) in &run.others {
        let view = TrialRun {
            stdout_lines: Vec::new(),
            records: records.clone(),
            servers: run
                .servers
                .iter()
                .filter(|p| p.server.as_ref() == Some(name))
                .map(|p| super::trial::ServerProcess {
                    server: None,
                    ..p.clone()
                })
                .collect(),
            others: Default::default(),
            traces: None,
            ..run.clone()
        };
        let shown = without_server_port(render_trial(&view));
        let body = shown.split_once("transcript:\n").map_or("", |(_, b)| b);
        let _ = write!(text, "transcript of {name}:\n{body}");
    }
    let Some(canary) = &run.canary else {
        return text;
    };
    for seen in &canary.seen {
        let _ = writeln!(text, "canary: {seen}");
    }
    // An isolated trial's canaries have fixed addresses and no loopback origin to hide.
    if canary.origin.is_empty() {
        return text;
    }
    use mcp_harness_scenarios::model::canary::{HOST_PLACEHOLDER, PLACEHOLDER};
    let text = text.replace(&canary.origin, PLACEHOLDER);
    match canary.origin.split_once("://") {
        Some((_, host)) => text.replace(host, HOST_PLACEHOLDER),
        None => text,
    }
}

/// `text` with each `https://localhost:PORT` (the HTTP fake's origin, which a script names
/// as `{{server}}`) written back as the placeholder: the port differs in every trial.
fn without_server_port(text: String) -> String {
    const ORIGIN: &str = "https://localhost:";
    let placeholder = mcp_harness_scenarios::model::canary::SERVER_PLACEHOLDER;
    let mut out = String::with_capacity(text.len());
    let mut rest = text.as_str();
    while let Some(at) = rest.find(ORIGIN) {
        let after = &rest[at + ORIGIN.len()..];
        let digits = after.bytes().take_while(u8::is_ascii_digit).count();
        out.push_str(&rest[..at]);
        match digits {
            0 => out.push_str(ORIGIN),
            _ => out.push_str(placeholder),
        }
        rest = &after[digits..];
    }
    out.push_str(rest);
    out
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
        .main_servers()
        .into_iter()
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
    let trace_ids = trace_ids_in_order(records);
    for record in shown_records(records) {
        let mut event = record.event.clone();
        if matches!(event, Event::StreamClosed { .. }) {
            continue;
        }
        if let Event::HttpRequest { headers, .. } = &mut event
            && let Some(session) = headers.get_mut("mcp-session-id")
        {
            *session = "[session]".into();
        }
        if let Event::Received { message } | Event::Sent { message } = &mut event {
            normalize(message);
            if run.traces.is_some() {
                mask_span_context(message, &trace_ids);
            }
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
    if !run.main_servers().is_empty() {
        let ends: Vec<&str> = lifecycle_events(run).iter().map(|e| e.as_str()).collect();
        let _ = writeln!(out, "lifecycle: {}", ends.join(" → "));
    }
    spans::render(run, &mut out);
    mask_client_task_ids(records, out)
}

/// `out` with each task id the client minted (as a task receiver, random by design) written
/// `[client-task-N]`, N in order of creation: the ids of the client's CreateTaskResults.
fn mask_client_task_ids(records: &[Record], mut out: String) -> String {
    let minted = records.iter().filter_map(|r| match &r.event {
        Event::Received { message } => message.pointer("/result/task/taskId")?.as_str(),
        _ => None,
    });
    for (n, id) in minted.enumerate() {
        if !id.is_empty() {
            out = out.replace(id, &format!("[client-task-{}]", n + 1));
        }
    }
    out
}

/// The records a snapshot shows, in the order it shows them: the transcript's order, except
/// for what the scheduler decides rather than the case.
///
/// - Left out: connections (how many a client opens, a pool may open a spare one and race
///   its close; the certificate cases check on the wire that one was opened), the standalone
///   GET stream (whether and when it starts, and when a cut one is reopened, races the
///   POSTs) and the session's DELETE (whether it reaches the fake before the client's
///   shutdown grace runs out and the runner stops the fake is a race with the load), each
///   with the error the fake refused it with (the fake records the two in one piece). Cases
///   that care check these on the wire. (An authorization endpoint's requests are the
///   client's own sequence, and stay.)
/// - Each answer the client sends to a server request is shown right after that request,
///   with the POST that carried it when the POST carried nothing else: answers go in their
///   own POSTs, on their own connections, and where they land among the fake's other
///   records (the next answer, a reply the script sends after a delay) follows the load.
///   Wire checks judge their order where a case cares. Likewise a subscription's
///   acknowledgement is shown right after the `subscriptions/listen` it names.
fn shown_records(records: &[Record]) -> Vec<&Record> {
    let mut kept: Vec<&Record> = Vec::with_capacity(records.len());
    let mut i = 0;
    while i < records.len() {
        let record = &records[i];
        i += 1;
        let hidden = match &record.event {
            // A traces trial's spans have a section of their own ([`spans`]).
            Event::Connected | Event::Span { .. } => true,
            Event::HttpRequest {
                method, endpoint, ..
            } => endpoint.is_none() && (method == "GET" || method == "DELETE"),
            _ => false,
        };
        if !hidden {
            kept.push(record);
            continue;
        }
        let refusal = records.get(i).is_some_and(|next| {
            next.pid == record.pid
                && matches!(&next.event, Event::Sent { message }
                    if message.get("error").is_some() && is_null_id(message))
        });
        if matches!(record.event, Event::HttpRequest { .. }) && refusal {
            i += 1;
        }
    }
    // Units: an answer (with the POST that carried it alone), or any other record. An answer
    // in a POST that carried more (a batch) stays in its POST.
    let mut units: Vec<Vec<&Record>> = Vec::new();
    let mut answers: Vec<Option<String>> = Vec::new();
    let mut in_body = false;
    let mut i = 0;
    while i < kept.len() {
        let post = matches!(&kept[i].event, Event::HttpRequest { method, .. } if method == "POST");
        let carried = kept.get(i + 1).and_then(|r| answer_id(r));
        let alone = kept.get(i + 2).is_none_or(|r| !is_body(r));
        match (post, carried) {
            (true, Some(id)) if alone => {
                units.push(vec![kept[i], kept[i + 1]]);
                answers.push(Some(id));
                in_body = false;
                i += 2;
            }
            _ => {
                in_body = post || (in_body && is_body(kept[i]));
                units.push(vec![kept[i]]);
                answers.push(answer_id(kept[i]).filter(|_| !in_body));
                i += 1;
            }
        }
    }
    // Each answer moves to just after the latest unanswered request of its id, from the same
    // process; one that answers nothing stays where it is. A subscription's acknowledgement
    // moves to just after the `subscriptions/listen` it names: the fake sends it at once,
    // while the client's next request does not wait for it.
    let mut open: HashMap<(u32, String), Vec<usize>> = HashMap::new();
    let mut listens: HashMap<(u32, String), usize> = HashMap::new();
    let mut after: Vec<Vec<usize>> = vec![Vec::new(); units.len()];
    let mut moved = vec![false; units.len()];
    for (at, unit) in units.iter().enumerate() {
        let last = unit[unit.len() - 1];
        if let Some(id) = server_request_id(last) {
            open.entry((last.pid, id)).or_default().push(at);
        }
        if let Some(id) = listen_id(last) {
            listens.insert((last.pid, id), at);
        }
        if let Some(id) = acknowledged_id(last)
            && let Some(listen) = listens.remove(&(last.pid, id))
        {
            after[listen].push(at);
            moved[at] = true;
        }
        if let Some(id) = &answers[at]
            && let Some(request) = open.get_mut(&(last.pid, id.clone())).and_then(Vec::pop)
        {
            after[request].push(at);
            moved[at] = true;
        }
    }
    let mut out = Vec::with_capacity(kept.len());
    for at in 0..units.len() {
        if moved[at] {
            continue;
        }
        out.extend(&units[at]);
        for &answer in &after[at] {
            out.extend(&units[answer]);
        }
    }
    out
}

/// Whether a record can be part of a POST's body as the fake records it: a message, or the
/// note that announces a batch.
fn is_body(record: &Record) -> bool {
    matches!(
        record.event,
        Event::Received { .. } | Event::ReceivedInvalid { .. } | Event::SentRaw { .. }
    )
}

/// The id of the client's answer to a server request (a response it sent), as text.
fn answer_id(record: &Record) -> Option<String> {
    match &record.event {
        Event::Received { message } if message.get("method").is_none() && !is_null_id(message) => {
            message.get("id").map(Value::to_string)
        }
        _ => None,
    }
}

/// The id of a request the fake sent, as text.
fn server_request_id(record: &Record) -> Option<String> {
    match &record.event {
        Event::Sent { message } if message.get("method").is_some() && !is_null_id(message) => {
            message.get("id").map(Value::to_string)
        }
        _ => None,
    }
}

/// The id of a `subscriptions/listen` request the client sent, as text.
fn listen_id(record: &Record) -> Option<String> {
    match &record.event {
        Event::Received { message }
            if message.get("method").and_then(Value::as_str) == Some("subscriptions/listen") =>
        {
            message.get("id").map(Value::to_string)
        }
        _ => None,
    }
}

/// The listen request a subscription's acknowledgement names, as text.
fn acknowledged_id(record: &Record) -> Option<String> {
    match &record.event {
        Event::Sent { message }
            if message.get("method").and_then(Value::as_str)
                == Some("notifications/subscriptions/acknowledged") =>
        {
            message
                .pointer("/params/_meta/io.modelcontextprotocol~1subscriptionId")
                .map(Value::to_string)
        }
        _ => None,
    }
}

/// Whether a message has no id, or a null one.
fn is_null_id(message: &Value) -> bool {
    message.get("id").is_none_or(Value::is_null)
}

fn describe_event_full(event: &Event) -> String {
    match event {
        Event::Received { message } => format!("→ {message}"),
        Event::Sent { message } => format!("← {message}"),
        other => describe_event(other),
    }
}

/// The `traceparent` of a request's `_meta`, when it has one.
fn traceparent(message: &mut Value) -> Option<&mut Value> {
    message
        .pointer_mut("/params/_meta/traceparent")
        .filter(|v| v.is_string())
}

/// The trace ids the requests carry, in order of first appearance: a traced client's ids are
/// new in every run, so the snapshot numbers them (`[trace 1]`, …), which still shows which
/// requests share a trace (a caller's, or a re-issue under its first span).
fn trace_ids_in_order(records: &[Record]) -> Vec<String> {
    let mut order: Vec<String> = Vec::new();
    for record in records {
        if let Event::Received { message } = &record.event
            && let Some(Value::String(tp)) = message.pointer("/params/_meta/traceparent")
            && let Some(trace) = tp.split('-').nth(1)
            && !order.iter().any(|t| t == trace)
        {
            order.push(trace.to_owned());
        }
    }
    order
}

/// In a traces trial the `_meta` traceparent shows `[trace N]` and `[span id]`; the span
/// checks judge the values themselves.
fn mask_span_context(message: &mut Value, traces: &[String]) {
    let Some(value) = traceparent(message) else {
        return;
    };
    let parts: Vec<&str> = value.as_str().unwrap_or_default().split('-').collect();
    if let [version, trace, _span, flags] = parts[..] {
        let n = traces.iter().position(|t| t == trace).map_or(0, |i| i + 1);
        *value = Value::from(format!("{version}-[trace {n}]-[span id]-{flags}"));
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
                // A task's timestamps are the fake's clock.
                if matches!(key.as_str(), "createdAt" | "lastUpdatedAt") && value.is_string() {
                    *value = Value::from("[time]");
                }
                normalize(value);
            }
        }
        Value::Array(items) => items.iter_mut().for_each(normalize),
        _ => {}
    }
}

/// Compares `content` with the snapshot `name` in `dir`, whose header names `case_file`; on a
/// mismatch returns the diff. When blessing, writes the snapshot instead (every one, so that
/// headers stay current). A missing snapshot is never written by a plain run: it is an error
/// that asks for a review and `--bless`.
/// `bless` is the command line that writes this run's snapshots, for the hint.
///
/// insta is used for the file format only: it reads a stored snapshot and decides whether its
/// text matches. Its assertion macro cannot serve here: it reads its mode (write, compare,
/// print) from environment variables or a config file, and reports a mismatch by panicking
/// after printing, while a trial's failure must come back as a message carrying the diff
/// (libtest-mimic does not capture output). The diff is `similar`'s, and the file is written
/// here, in insta's layout (a YAML header between `---` lines, then the text).
pub fn compare(
    dir: &Path,
    case_file: &Path,
    name: &str,
    content: &str,
    bless: &str,
) -> Result<(), String> {
    let file = file_of(dir, name);
    let config = CONFIG.get();
    if config.is_some_and(|c| c.bless) {
        let root = config.map(|c| c.workspace_root.as_path());
        return write(&file, &snap_text(case_file, root, content))
            .map_err(|e| format!("cannot write {}: {e}", file.display()));
    }
    let stored = match std::fs::metadata(&file) {
        Err(_) => {
            return Err(format!(
                "no snapshot {} yet; review the transcript and run `{bless}`",
                file.display()
            ));
        }
        Ok(_) => insta::Snapshot::from_file(&file)
            .map_err(|e| format!("cannot read the snapshot {}: {e}", file.display()))?,
    };
    let Some(stored) = stored.as_text() else {
        return Err(format!("{} is not a text snapshot", file.display()));
    };
    let now = TextSnapshotContents::new(content.to_owned(), TextSnapshotKind::File);
    if stored.matches_latest(&now) {
        return Ok(());
    }
    let (stored, now) = (format!("{stored}\n"), format!("{now}\n"));
    let diff = similar::TextDiff::from_lines(&stored, &now);
    Err(format!(
        "the transcript differs from {} (- stored, + now); if the change is intended, run \
         `{bless}`:\n{}",
        file.display(),
        diff.unified_diff().context_radius(2)
    ))
}

/// The text of a snapshot file, as insta writes one: a header naming this module and the
/// case file (relative to `root` when it lies under it), then the content without trailing
/// whitespace.
fn snap_text(case_file: &Path, root: Option<&Path>, content: &str) -> String {
    let mut out = format!("---\nsource: {}\n", yaml_string(SOURCE));
    if let Some(input) = input_file(case_file, root) {
        let _ = writeln!(out, "input_file: {}", yaml_string(&input));
    }
    out.push_str("---\n");
    out.push_str(&content.trim_end().replace("\r\n", "\n"));
    out.push('\n');
    out
}

/// The case file as the header names it: relative to `root` (both canonical), and left out
/// when it lies elsewhere, as insta does.
fn input_file(case_file: &Path, root: Option<&Path>) -> Option<String> {
    let root = root?.canonicalize().ok()?;
    let file = root.join(case_file).canonicalize().ok()?;
    let relative = file.strip_prefix(&root).ok()?;
    Some(relative.to_string_lossy().replace('\\', "/"))
}

/// A YAML scalar: plain when it cannot be read as anything but this string, else
/// double-quoted (JSON's escapes are YAML's).
fn yaml_string(text: &str) -> String {
    let plain = !text.is_empty()
        && text
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || "/_.-@+".contains(c))
        && text.starts_with(|c: char| c.is_ascii_alphabetic() || c == '_' || c == '/');
    match plain {
        true => text.to_owned(),
        false => Value::from(text).to_string(),
    }
}

/// Writes `text` to `file` through a temporary file beside it, so a reader never sees half
/// a snapshot.
fn write(file: &Path, text: &str) -> std::io::Result<()> {
    if let Some(dir) = file.parent() {
        std::fs::create_dir_all(dir)?;
    }
    let temporary = file.with_extension("snap.tmp");
    std::fs::write(&temporary, text)?;
    std::fs::rename(&temporary, file)
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

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn the_fake_origin_port_is_written_as_the_placeholder() {
        let text = "a https://localhost:43121/icons/x.png b https://localhost:/c".to_owned();
        assert_eq!(
            without_server_port(text),
            "a {{server}}/icons/x.png b https://localhost:/c"
        );
    }

    fn received(message: Value) -> Record {
        Record {
            pid: 1,
            at_ms: None,
            event: Event::Received { message },
        }
    }

    fn post() -> Record {
        Record {
            pid: 1,
            at_ms: None,
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

    fn sent(message: Value) -> Record {
        Record {
            pid: 1,
            at_ms: None,
            event: Event::Sent { message },
        }
    }

    #[test]
    fn task_ids_the_client_mints_are_masked_and_the_fakes_are_kept() {
        let records = [
            received(json!({"id": "s", "result": {"task": {"taskId": "Zr4nd0m"}}})),
            sent(json!({"id": "g", "method": "tasks/get", "params": {"taskId": "Zr4nd0m"}})),
            sent(json!({"id": 3, "result": {"task": {"taskId": "task-1"}}})),
        ];
        let out = "taskId Zr4nd0m, again Zr4nd0m; the fake's task-1".to_owned();
        assert_eq!(
            mask_client_task_ids(&records, out),
            "taskId [client-task-1], again [client-task-1]; the fake's task-1"
        );
    }

    fn request(method: &str) -> Record {
        Record {
            pid: 1,
            at_ms: None,
            event: Event::HttpRequest {
                method: method.into(),
                path: "/mcp".into(),
                headers: Default::default(),
                status: 404,
                origin: None,
                endpoint: None,
                params: None,
            },
        }
    }

    fn shown(records: &[Record]) -> Vec<String> {
        shown_records(records)
            .into_iter()
            .map(|r| match &r.event {
                Event::Received { message } => format!("→ {message}"),
                Event::Sent { message } => format!("← {message}"),
                Event::HttpRequest { method, .. } => method.clone(),
                other => format!("{other:?}"),
            })
            .collect()
    }

    #[test]
    fn answers_follow_the_requests_they_answer_with_their_posts() {
        // The fake sends three requests, then its reply after a delay; the client's answers
        // arrive in any order around that reply, on their own connections.
        let records = vec![
            received(json!({"method": "tools/call", "id": 2})),
            sent(json!({"method": "roots/list", "id": 1})),
            sent(json!({"method": "sampling/createMessage", "id": "1"})),
            sent(json!({"method": "elicitation/create", "id": 2})),
            post(),
            received(json!({"id": 2, "result": {}})),
            Record {
                pid: 1,
                at_ms: None,
                event: Event::Connected,
            },
            sent(json!({"id": 2, "result": {"content": []}})),
            post(),
            received(json!({"id": "1", "result": {}})),
            post(),
            received(json!({"id": 1, "result": {}})),
            // An answer to nothing stays where it is.
            post(),
            received(json!({"id": 9, "result": {}})),
        ];
        assert_eq!(
            shown(&records),
            [
                r#"→ {"method":"tools/call","id":2}"#,
                r#"← {"method":"roots/list","id":1}"#,
                "POST",
                r#"→ {"id":1,"result":{}}"#,
                r#"← {"method":"sampling/createMessage","id":"1"}"#,
                "POST",
                r#"→ {"id":"1","result":{}}"#,
                r#"← {"method":"elicitation/create","id":2}"#,
                "POST",
                r#"→ {"id":2,"result":{}}"#,
                r#"← {"id":2,"result":{"content":[]}}"#,
                "POST",
                r#"→ {"id":9,"result":{}}"#,
            ]
        );
    }

    #[test]
    fn a_reused_id_is_answered_in_turn_and_a_batch_stays_whole() {
        let records = vec![
            sent(json!({"method": "ping", "id": 1})),
            received(json!({"id": 1, "result": {}})),
            sent(json!({"method": "ping", "id": 1})),
            sent(json!({"method": "roots/list", "id": 2})),
            post(),
            Record {
                pid: 1,
                at_ms: None,
                event: Event::SentRaw {
                    line: "[note: a batch of 2]".into(),
                },
            },
            received(json!({"id": 2, "result": {}})),
            received(json!({"id": 1, "result": {}})),
        ];
        let order: Vec<String> = records
            .iter()
            .map(|r| shown(std::slice::from_ref(r)).concat())
            .collect();
        assert_eq!(shown(&records), order);
    }

    #[test]
    fn an_acknowledgement_follows_its_listen() {
        let ack = json!({
            "method": "notifications/subscriptions/acknowledged",
            "params": {"_meta": {"io.modelcontextprotocol/subscriptionId": 4}}
        });
        let records = vec![
            received(json!({"method": "subscriptions/listen", "id": 4})),
            received(json!({"method": "tools/call", "id": 5})),
            sent(ack.clone()),
            sent(json!({"id": 5, "result": {}})),
        ];
        assert_eq!(
            shown(&records),
            [
                r#"→ {"method":"subscriptions/listen","id":4}"#.to_owned(),
                format!("← {ack}"),
                r#"→ {"method":"tools/call","id":5}"#.to_owned(),
                r#"← {"id":5,"result":{}}"#.to_owned(),
            ]
        );
    }

    #[test]
    fn the_get_stream_and_the_delete_go_with_their_refusals() {
        let refusal = || sent(json!({"jsonrpc": "2.0", "id": null, "error": {"code": -32001}}));
        let records = vec![
            post(),
            received(json!({"method": "tools/call", "id": 3})),
            sent(json!({"id": 3, "result": {}})),
            request("DELETE"),
            refusal(),
            request("GET"),
            refusal(),
            request("GET"),
            post(),
            received(json!({"method": "tools/list", "id": 4})),
            refusal(),
        ];
        assert_eq!(
            shown(&records),
            [
                "POST",
                r#"→ {"method":"tools/call","id":3}"#,
                r#"← {"id":3,"result":{}}"#,
                "POST",
                r#"→ {"method":"tools/list","id":4}"#,
                r#"← {"jsonrpc":"2.0","id":null,"error":{"code":-32001}}"#,
            ]
        );
    }
}
