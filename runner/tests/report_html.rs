//! The HTML report and matrix on synthetic runs: failures come first, every trial row carries
//! the facets the filters read, a failed check shows its requirement (linked), Expected /
//! Actual and the commands that re-run it, nothing is fetched; and the benchmark that
//! renders five clients × 600 trials (`cargo test -p mcp-harness --test report_html -- --ignored`,
//! `REPORT_BENCH_DIR=dir` to keep the pages for a browser).

use std::time::Instant;

use mcp_harness::conformance::verdict::{Grade, Verdict};
use mcp_harness::report::{CheckRecord, RunResults, TrialResult, detail, html, matrix};
use mcp_harness_scenarios::model::Level;

const AREAS: [&str; 8] = [
    "calls",
    "lists",
    "era",
    "http",
    "content",
    "resources",
    "cleanup",
    "timeouts",
];

/// A trial with a failed `must` check when its grade is not pass.
fn trial(name: &str, grade: Grade, verdict: Verdict, transcript_len: usize) -> TrialResult {
    let failed = grade != Grade::Pass;
    let mut check = CheckRecord {
        requirement_id: "LIFE-06".to_owned(),
        requirement: "The client uses only capabilities that were negotiated.".to_owned(),
        source: "spec 2025-06-18, 2025-11-25 docs/specification/{rev}/basic/lifecycle.mdx § Operation (\"Only use capabilities\")".to_owned(),
        ..CheckRecord::bare(
            "the request of an undeclared capability is not sent",
            if grade == Grade::NonStrict { Level::Should } else { Level::Must },
            !failed,
        )
    };
    if failed {
        check.expected = "no message matching {\"method\":\"logging/setLevel\"}".to_owned();
        check.actual = "{\"jsonrpc\":\"2.0\",\"id\":2,\"method\":\"logging/setLevel\"}".to_owned();
    }
    // Lines like a real transcript's, each a little different (ids, cursors, a session id
    // drawn from the name), so the texts weigh what real ones do.
    let seed = name
        .bytes()
        .fold(7u64, |h, b| h.wrapping_mul(31).wrapping_add(u64::from(b)));
    let mut transcript =
        String::from("outcomes:\n  {\"step\":0,\"op\":\"connect\",\"ok\":{}}\ntranscript:\n");
    let mut i = 0u64;
    while transcript.len() < transcript_len {
        let session = seed.wrapping_mul(i + 1).wrapping_mul(0x9E37_79B9_7F4A_7C15);
        transcript.push_str(&format!(
            "  fake POST /mcp [accept: application/json, text/event-stream; mcp-session-id: {session:016x}] → 200\n  fake → {{\"jsonrpc\":\"2.0\",\"id\":{i},\"method\":\"tools/list\",\"params\":{{\"cursor\":\"c{}\"}}}}\n",
            session % 1000
        ));
        i += 1;
    }
    TrialResult {
        description: format!("what {name} checks, in a sentence"),
        case_path: format!("scenarios/{}.json", name.split('@').next().unwrap()),
        rerun: format!(
            "cargo xtask conformance --exact {name} --client 'python adapter.py' --baseline adapters/python/baseline.txt"
        ),
        elapsed_ms: 120,
        checks: vec![
            CheckRecord::bare("the client exited with status 0", Level::Must, true),
            check,
        ],
        details: if failed {
            "grade: fail\n✗ the request ... [must]\n  Expected: ...\nclient stderr:\n  Traceback ...".to_owned()
        } else {
            String::new()
        },
        transcript,
        ..TrialResult::bare(name, grade, verdict)
    }
}

/// A run of `n` trials over the areas and both transports, with one of each status.
fn run(client: &str, n: usize, shift: usize) -> RunResults {
    let mut trials = Vec::new();
    for i in 0..n {
        let transport = if i % 2 == 0 { "stdio" } else { "https" };
        let name = format!("{}/case-{i:04}@{transport}", AREAS[i % AREAS.len()]);
        let (grade, verdict) = match (i + shift) % 40 {
            0 | 1 => (Grade::Fail, Verdict::Failed),
            2 => (Grade::Fail, Verdict::Flaky),
            3 => (Grade::Pass, Verdict::Stale),
            4..=6 => (Grade::Fail, Verdict::ExpectedFailure),
            7..=9 => (Grade::NonStrict, Verdict::Passed),
            10 | 11 => (Grade::Unimplemented, Verdict::Passed),
            _ => (Grade::Pass, Verdict::Passed),
        };
        let mut t = trial(&name, grade, verdict, 2400);
        if verdict == Verdict::Flaky {
            t.flaky = true;
            t.attempts = vec![Grade::Fail, Grade::Pass];
        }
        trials.push(t);
    }
    trials.sort_by(|a, b| a.name.cmp(&b.name));
    RunResults {
        netns: None,
        client: client.to_owned(),
        profile: true,
        time_scale: 1.0,
        seconds: 42.0,
        trials,
    }
}

/// Where each `data-status="..."` of a trial row comes, in page order.
fn statuses(page: &str) -> Vec<&str> {
    page.split("data-trial=\"\" data-status=\"")
        .skip(1)
        .map(|s| s.split('"').next().unwrap())
        .collect()
}

#[test]
fn the_report_puts_failures_first_and_opens_them() {
    let page = html::report(&run("python", 80, 0));
    let order = statuses(&page);
    assert_eq!(order.len(), 80);
    let rank = |s: &str| {
        [
            "fail",
            "unimplemented",
            "flaky",
            "stale",
            "baselined",
            "non-strict",
            "pass",
        ]
        .iter()
        .position(|x| *x == s)
        .unwrap_or_else(|| panic!("unknown status {s}"))
    };
    assert!(
        order.windows(2).all(|w| rank(w[0]) <= rank(w[1])),
        "{order:?}"
    );
    assert_eq!(order[0], "fail");
    assert_eq!(order[79], "pass");
    // What fails the run (fail, flaky, stale) is open; the rest is not.
    let opened = page.matches("<details class=\"trial\" data-trial").count();
    assert_eq!(opened, 80);
    let open_rows = page
        .split("<details class=\"trial\"")
        .skip(1)
        .filter(|row| row.split('>').next().unwrap().ends_with(" open"))
        .count();
    assert_eq!(open_rows, 2 * 2 + 2 + 2, "fail ×4, flaky ×2, stale ×2");
    assert!(page.contains("The run fails: 8 trial(s) fail it"));
}

#[test]
fn every_row_carries_the_facets_the_filters_read() {
    let results = run("python", 40, 0);
    let page = html::report(&results);
    for t in &results.trials {
        let area = t.name.split('/').next().unwrap();
        let transport = t.name.split('@').nth(1).unwrap();
        let attrs = format!(
            "data-grade=\"{}\" data-level=\"{}\" data-transport=\"{transport}\" data-area=\"{area}\"",
            t.grade.as_str(),
            t.level.as_str()
        );
        assert!(page.contains(&attrs), "{attrs}");
    }
    for facet in ["status", "grade", "level", "transport", "area"] {
        assert!(
            page.contains(&format!("<fieldset data-facet=\"{facet}\">")),
            "{facet}"
        );
    }
    assert!(page.contains("<input type=\"checkbox\" value=\"https\" checked> https"));
    assert!(page.contains("id=\"q\""), "the text search");
    // The summaries' cells filter the list.
    assert!(page.contains("data-pick=\"area=calls;grade=fail\""));
    assert!(page.contains("data-pick=\"level=must;grade=fail\""));
}

#[test]
fn a_failed_check_shows_its_requirement_expected_actual_and_how_to_rerun_it() {
    let page = html::report(&run("python", 40, 0));
    assert!(page.contains("<a href=\"#req-LIFE-06\"><code>LIFE-06</code></a>"));
    assert!(
        page.contains("<tr id=\"req-LIFE-06\">"),
        "the requirement is listed"
    );
    assert!(page.contains(
        "href=\"https://modelcontextprotocol.io/specification/2025-11-25/basic/lifecycle#operation\""
    ));
    assert!(page.contains("<dt>Expected</dt><dd><pre>no message matching {&quot;method&quot;"));
    assert!(page.contains("<dt>Actual</dt>"));
    let cargo = "<code>cargo xtask conformance --exact calls/case-0000@stdio --client &#39;python adapter.py&#39; --baseline adapters/python/baseline.txt</code>";
    let installed = "<code>mcp-harness run --exact calls/case-0000@stdio --client &#39;python adapter.py&#39; --baseline adapters/python/baseline.txt</code>";
    assert!(page.contains(cargo), "the cargo command");
    assert!(page.contains(installed), "the installed binary's command");
    assert!(page.contains(
        "<details class=\"more\" data-text=\"0\"><summary>transcript</summary><pre></pre>"
    ));
    // The transcripts are in the page's texts, in the order their details refer to them.
    let texts = detail::page_texts(&page).unwrap();
    assert!(texts[0].starts_with("outcomes:"), "{}", texts[0]);
    // A passing trial's block is among the texts too, with its re-run command.
    assert!(page.contains("<div class=\"detail\" data-html=\""));
    assert!(
        texts
            .iter()
            .any(|t| t.contains("<code>cargo xtask conformance --exact calls/case-0016@stdio"))
    );
}

#[test]
fn the_pages_fetch_nothing_and_escape_what_clients_say() {
    let mut results = run("<img src=x>", 20, 0);
    results.trials[0].transcript = "<script>alert(1)</script>".to_owned();
    for page in [html::report(&results), matrix::render(&[results.clone()])] {
        assert!(!page.contains("<img src=x>") && !page.contains("<script>alert"));
        let texts = detail::page_texts(&page).unwrap();
        assert!(
            texts.iter().any(|t| t == "<script>alert(1)</script>"),
            "kept as text, which the page sets as text"
        );
        assert!(page.contains(".textContent = t[+d.dataset.text]"));
        for needle in ["src=\"", "<link", "@import", "url(", "http://"] {
            assert!(!page.contains(needle), "{needle}");
        }
        // The only absolute addresses are links a reader follows.
        // (in markup, or in the markup of a block kept among the texts until it is opened).
        for (i, _) in page.match_indices("https://") {
            let before = &page[..i];
            assert!(
                before.ends_with("href=\"") || before.ends_with("href=\\\""),
                "an https address outside a link: {}",
                &page[i.saturating_sub(20)..i + 20]
            );
        }
    }
}

#[test]
fn the_matrix_shows_every_client_failures_first() {
    let names = [
        "reference",
        "python",
        "typescript",
        "rmcp",
        "fastmcp",
        "typescript-v2",
    ];
    let runs: Vec<RunResults> = names
        .iter()
        .enumerate()
        .map(|(i, c)| run(c, 40, i))
        .collect();
    let page = matrix::render(&runs);
    for c in names {
        assert!(page.contains(&format!("<th>{c}<br>")), "{c} has a column");
    }
    let rows: Vec<&str> = page.split("<tr data-trial=\"\"").skip(1).collect();
    assert_eq!(rows.len(), 40);
    assert_eq!(rows[0].matches("<td class=\"cell\">").count(), names.len());
    let status_of = |row: &str| {
        let v = row.split("data-status=\"").nth(1).unwrap();
        v.split('"').next().unwrap().to_owned()
    };
    assert!(
        status_of(rows[0]).split(' ').any(|s| s == "fail"),
        "a row where a client fails comes first"
    );
    assert_eq!(status_of(rows[39]), "pass", "all-pass rows last");
    assert!(page.contains("caption>area × client"));
    assert!(page.contains("id=\"differ\""));
    assert!(rows[0].contains("data-differ=\"1\""));
}

/// Five clients × 600 trials: how long rendering takes and how big the pages are. Kept out
/// of the default run; the figures go to stderr, the pages to `REPORT_BENCH_DIR` if set.
#[test]
#[ignore]
fn bench_five_clients_by_six_hundred_trials() {
    let names = ["python", "typescript", "rmcp", "fastmcp", "typescript-v2"];
    let runs: Vec<RunResults> = names
        .iter()
        .enumerate()
        .map(|(i, c)| run(c, 600, i * 3))
        .collect();
    let start = Instant::now();
    let report = html::report(&runs[0]);
    let report_time = start.elapsed();
    let start = Instant::now();
    let page = matrix::render(&runs);
    let matrix_time = start.elapsed();
    eprintln!(
        "report.html: {} bytes in {report_time:?}; matrix.html (5 × 600): {} bytes in {matrix_time:?}",
        report.len(),
        page.len()
    );
    if let Ok(dir) = std::env::var("REPORT_BENCH_DIR") {
        let dir = std::path::Path::new(&dir);
        std::fs::create_dir_all(dir).unwrap();
        std::fs::write(dir.join("report.html"), report).unwrap();
        std::fs::write(dir.join("matrix.html"), page).unwrap();
    }
}

/// Renders real runs for a look in a browser: `REPORT_FROM=a/results.json:b/results.json`
/// `REPORT_BENCH_DIR=dir` writes the first run's report.html and the matrix of them all.
#[test]
#[ignore]
fn render_runs_from_files() {
    let (Ok(from), Ok(dir)) = (
        std::env::var("REPORT_FROM"),
        std::env::var("REPORT_BENCH_DIR"),
    ) else {
        return;
    };
    let runs: Vec<RunResults> = from
        .split(':')
        .map(|p| RunResults::load(std::path::Path::new(p)).unwrap())
        .collect();
    let dir = std::path::Path::new(&dir);
    std::fs::create_dir_all(dir).unwrap();
    std::fs::write(dir.join("report.html"), html::report(&runs[0])).unwrap();
    std::fs::write(dir.join("matrix.html"), matrix::render(&runs)).unwrap();
}

#[test]
fn a_traces_trials_spans_show_under_their_requests_escaped() {
    let mut results = run("rust", 4, 0);
    let t = &mut results.trials[0];
    t.transcript = "outcomes:\ntranscript:\n  server#1 → {\"id\":2,\"jsonrpc\":\"2.0\",\"method\":\"tools/call\",\"params\":{\"name\":\"echo\"}}\n  server#1 ← {\"id\":2,\"jsonrpc\":\"2.0\",\"result\":{}}\n".into();
    t.spans = vec![
        serde_json::json!({"name": "tools/call echo", "kind": "client", "start_ns": 0,
            "end_ns": 2_000_000, "status": {"code": "unset"},
            "attributes": {"jsonrpc.request.id": "2", "mcp.method.name": "tools/call",
                "gen_ai.tool.name": "echo"}, "events": []}),
        serde_json::json!({"name": "<img src=x>", "kind": "internal",
            "status": {"code": "error", "message": "\"><script>"},
            "attributes": {"note": "<b>"}, "events": [{"name": "<i>"}]}),
    ];
    let page = html::report(&results);
    assert!(page.contains("<summary>messages with their spans (2 spans)</summary>"));
    assert!(page.contains("<summary>every span (2)</summary>"));
    let texts = detail::page_texts(&page).unwrap();
    let wire = texts
        .iter()
        .find(|t| t.starts_with("<div class=\"wire\">"))
        .expect("the messages with their spans");
    let call = wire.find("tools/call&quot;").expect("the request");
    let span = wire
        .find("↳ span <b>tools/call echo</b> · client · 2.0 ms")
        .expect("its span");
    assert!(call < span && span < wire.find("← ").unwrap(), "{wire}");
    let every = texts
        .iter()
        .find(|t| t.starts_with("<table class=\"spans\">"))
        .expect("every span");
    assert!(
        every.contains("&lt;img src=x&gt;") && every.contains("note=&lt;b&gt;"),
        "{every}"
    );
    for raw in ["<img src=x>", "<script>", "<i>"] {
        assert!(!every.contains(raw), "{raw} unescaped: {every}");
    }
    assert!(!page.contains("<img src=x>"));
}

/// A library that makes two spans per request (an outer one without `jsonrpc.request.id`
/// around an inner one with it) under one session-wide span.
fn nested_spans_trial() -> TrialResult {
    let mut t = trial("traces/nested@stdio", Grade::Fail, Verdict::Failed, 0);
    let requests = [
        (0, "initialize", "{}"),
        (1, "tools/list", "{}"),
        (2, "tools/call", "{\"name\":\"echo\"}"),
    ];
    let mut transcript = String::from("outcomes:\ntranscript:\n");
    let trace = "4bf92f3577b34da6a3ce929d0e0e4736";
    let mut spans = vec![
        serde_json::json!({"trace_id": trace, "span_id": "aaaaaaaa00000001",
        "name": "mcp session", "kind": "internal", "start_ns": 0, "end_ns": 90_000_000,
        "status": {"code": "unset"}, "attributes": {}, "events": []}),
    ];
    for (i, method, params) in requests {
        transcript.push_str(&format!(
            "  server#1 → {{\"id\":{i},\"jsonrpc\":\"2.0\",\"method\":\"{method}\",\"params\":{params}}}\n  server#1 ← {{\"id\":{i},\"jsonrpc\":\"2.0\",\"result\":{{}}}}\n"
        ));
        let start = 1_000_000 + i * 20_000_000;
        let outer = format!("{i}0f067aa0ba902b7");
        spans.push(serde_json::json!({"trace_id": trace, "span_id": outer,
            "parent_span_id": "aaaaaaaa00000001", "name": method, "kind": "client",
            "start_ns": start, "end_ns": start + 9_000_000, "status": {"code": "unset"},
            "attributes": {"mcp.method.name": method}, "events": []}));
        spans.push(
            serde_json::json!({"trace_id": trace, "span_id": format!("{i}a2b3c4d00000001"),
            "parent_span_id": outer, "name": format!("{method} send"), "kind": "client",
            "start_ns": start + 1_000_000, "end_ns": start + 8_000_000,
            "status": {"code": "unset"},
            "attributes": {"mcp.method.name": method, "jsonrpc.request.id": i.to_string(),
                "network.transport": "pipe"}, "events": []}),
        );
    }
    spans.push(
        serde_json::json!({"trace_id": trace, "span_id": "bbbbbbbb00000002",
        "parent_span_id": "2a2b3c4d00000001", "name": "encode", "kind": "internal",
        "start_ns": 42_500_000, "end_ns": 42_600_000, "status": {"code": "unset"},
        "attributes": {}, "events": []}),
    );
    t.transcript = transcript;
    t.spans = spans;
    t
}

#[test]
fn nested_spans_show_their_ids_and_their_outer_layer_with_the_request() {
    let mut results = run("rust", 4, 0);
    results.trials[0] = nested_spans_trial();
    let page = html::report(&results);
    if let Ok(dir) = std::env::var("REPORT_BENCH_DIR") {
        std::fs::create_dir_all(&dir).unwrap();
        std::fs::write(std::path::Path::new(&dir).join("report.html"), &page).unwrap();
    }
    let texts = detail::page_texts(&page).unwrap();
    let wire = texts
        .iter()
        .find(|t| t.starts_with("<div class=\"wire\">"))
        .expect("the messages with their spans");
    // Under the tools/call request: its outer span, then its own, then its inner one;
    // the session-wide span (above every request) is not one request's layer.
    let call = wire
        .find("tools/call&quot;,&quot;params")
        .expect("the request");
    let outer = wire[call..]
        .find("↳ outer span <b>tools/call</b>")
        .expect("the outer layer");
    let own = wire[call..]
        .find("↳ span <b>tools/call send</b>")
        .expect("its span");
    let inner = wire[call..]
        .find("↳ inner span <b>encode</b>")
        .expect("the inner layer");
    assert!(outer < own && own < inner, "{wire}");
    assert!(!wire.contains("mcp session"), "{wire}");
    assert_eq!(wire.matches("↳ outer span").count(), 3, "{wire}");
    let short = |id: &str| format!(">{id}</span>");
    for id in ["4bf92f35", "2a2b3c4d", "20f067aa"] {
        assert!(wire.contains(&short(id)), "{id}: {wire}");
    }
    let every = texts
        .iter()
        .find(|t| t.starts_with("<table class=\"spans\">"))
        .expect("every span");
    assert!(every.contains("← root</div>"), "{every}");
    assert!(
        every.contains("<td class=\"d3\"><code>encode</code>"),
        "{every}"
    );
    assert_eq!(
        every.matches("<div class=\"ids\">trace ").count(),
        8,
        "{every}"
    );
    assert!(
        every.contains("title=\"2a2b3c4d00000001\">2a2b3c4d</span> ← <span title=\"20f067aa0ba902b7\">20f067aa</span>"),
        "{every}"
    );
}
