//! The conformance matrix as one self-contained HTML page: a row per trial, a column per
//! client, each cell a grade; opening a cell shows the failed checks with Expected/Actual and
//! the transcript behind it. No script and no external resource, so the file can be mailed,
//! archived by CI, or opened offline.

use std::collections::{BTreeMap, BTreeSet};
use std::fmt::Write as _;

use super::{CheckRecord, RunResults, TrialResult};
use crate::conformance::verdict::{Grade, Verdict, level_label};

const STYLE: &str = r#"
body { font: 14px/1.45 system-ui, sans-serif; margin: 24px; color: #1d2330; }
h1 { font-size: 20px; margin: 0 0 4px; }
p.lead { color: #555; margin: 0 0 16px; }
table { border-collapse: collapse; width: 100%; }
th, td { border-bottom: 1px solid #e3e6ec; padding: 6px 8px; vertical-align: top; text-align: left; }
thead th { position: sticky; top: 0; background: #f6f7f9; }
tr.area th { background: #eef1f5; font-weight: 600; }
td.name code { font-size: 13px; }
td.name small { display: block; color: #666; }
.grade { display: inline-block; min-width: 88px; padding: 1px 8px; border-radius: 10px; font-weight: 600; font-size: 12px; text-align: center; }
.pass { background: #d9f2df; color: #17652c; }
.non-strict { background: #fff1c7; color: #7a5800; }
.unimplemented { background: #e4e6eb; color: #4a5060; }
.fail { background: #fbd9d7; color: #9b1c16; }
.xfail { outline: 2px dashed #9b1c16; outline-offset: 1px; }
.flaky { display: inline-block; margin-left: 4px; padding: 1px 6px; border-radius: 10px; font-size: 11px; font-weight: 600; background: #fff3c4; color: #7a5200; border: 1px solid #c99a00; }
details summary { cursor: pointer; list-style: none; }
details[open] { background: #fafbfc; }
pre { white-space: pre-wrap; word-break: break-word; font-size: 12px; max-width: 70ch; margin: 6px 0; }
.totals td { font-weight: 600; }
.note { color: #666; font-size: 12px; }
ul.failed { margin: 6px 0; padding-left: 18px; font-size: 12px; }
ul.failed a, table.reqs a { color: #2457a6; }
table.reqs td { font-size: 13px; }
h2 { font-size: 16px; margin: 28px 0 8px; }
"#;

/// The matrix page for one or more clients' runs.
pub fn render(runs: &[RunResults]) -> String {
    let names: BTreeSet<&str> = runs
        .iter()
        .flat_map(|r| r.trials.iter().map(|t| t.name.as_str()))
        .collect();
    let mut out = String::new();
    let _ = write!(
        out,
        "<!doctype html><html lang=\"en\"><head><meta charset=\"utf-8\"><title>mcp-harness conformance</title><style>{STYLE}</style></head><body>"
    );
    let _ = write!(
        out,
        "<h1>MCP client conformance</h1><p class=\"lead\">{} trials × {} client(s). Open a cell for the failed checks (Expected/Actual) and the transcript. A dashed outline marks a failure the client's baseline expects.</p>",
        names.len(),
        runs.len()
    );
    out.push_str("<table><thead><tr><th>trial</th>");
    for run in runs {
        let _ = write!(
            out,
            "<th>{}<br><span class=\"note\">{:.1} s{}</span></th>",
            esc(&run.client),
            run.seconds,
            if run.profile { "" } else { ", spec only" }
        );
    }
    out.push_str("</tr></thead><tbody><tr class=\"totals\"><td>totals</td>");
    for run in runs {
        out.push_str("<td>");
        for (grade, n) in run.counts() {
            let _ = write!(
                out,
                "<div><span class=\"grade {0}\">{0}</span> {n}</div>",
                grade.as_str()
            );
        }
        out.push_str("</td>");
    }
    out.push_str("</tr>");
    let mut area = "";
    for name in &names {
        let this_area = name.split('/').next().unwrap_or(name);
        if this_area != area {
            area = this_area;
            let _ = write!(
                out,
                "<tr class=\"area\"><th colspan=\"{}\">{}</th></tr>",
                runs.len() + 1,
                esc(area)
            );
        }
        let first = runs
            .iter()
            .find_map(|r| r.trials.iter().find(|t| t.name == *name));
        let (description, level) =
            first.map_or(("", ""), |t| (t.description.as_str(), t.level.as_str()));
        let _ = write!(
            out,
            "<tr><td class=\"name\"><code>{}</code><small>{} · {}</small></td>",
            esc(name),
            esc(description),
            level
        );
        for run in runs {
            match run.trials.iter().find(|t| t.name == *name) {
                Some(trial) => cell(&mut out, trial, run.profile),
                None => out.push_str("<td class=\"note\">not run</td>"),
            }
        }
        out.push_str("</tr>");
    }
    out.push_str("</tbody></table>");
    requirements(&mut out, runs);
    out.push_str("</body></html>\n");
    out
}

/// The anchor of a requirement's row in the page's requirements table.
fn anchor(id: &str) -> String {
    let safe: String = id
        .chars()
        .map(|c| if c.is_ascii_alphanumeric() { c } else { '-' })
        .collect();
    format!("req-{safe}")
}

/// Every requirement a failed check cites, once: id, level, sentence, source. Failed checks
/// in the cells link here.
fn requirements(out: &mut String, runs: &[RunResults]) {
    let mut cited: BTreeMap<&str, &CheckRecord> = BTreeMap::new();
    for check in runs
        .iter()
        .flat_map(|r| &r.trials)
        .flat_map(|t| &t.checks)
        .filter(|c| !c.passed && !c.requirement_id.is_empty())
    {
        cited.entry(check.requirement_id.as_str()).or_insert(check);
    }
    if cited.is_empty() {
        return;
    }
    out.push_str("<h2>Requirements cited by failed checks</h2><table class=\"reqs\"><thead><tr><th>id</th><th>level</th><th>requirement</th><th>source</th></tr></thead><tbody>");
    for (id, c) in cited {
        let _ = write!(
            out,
            "<tr id=\"{}\"><td><code>{}</code></td><td>{}</td><td>{}</td><td>{}</td></tr>",
            anchor(id),
            esc(id),
            c.level.as_str(),
            esc(&c.requirement),
            esc(&c.source)
        );
    }
    out.push_str("</tbody></table>");
}

fn cell(out: &mut String, trial: &TrialResult, profile: bool) {
    let grade = trial.grade.as_str();
    let xfail = if trial.verdict == Verdict::ExpectedFailure {
        " xfail"
    } else {
        ""
    };
    let grades = trial.attempts_shown();
    let flaky = match (trial.flaky, &trial.known_flaky) {
        (false, _) => String::new(),
        (true, known) => format!(
            "<span class=\"flaky\" title=\"attempts: {}\">{}</span>",
            esc(&grades),
            if known.is_some() {
                "known flaky"
            } else {
                "FLAKY"
            }
        ),
    };
    let _ = write!(
        out,
        "<td><details><summary><span class=\"grade {grade}{xfail}\">{grade}</span>{flaky}</summary>"
    );
    if !trial.attempts.is_empty() {
        let _ = write!(out, "<p class=\"note\">attempts: {}</p>", esc(&grades));
    }
    if let Some(reason) = &trial.known_flaky {
        let _ = write!(out, "<p class=\"note\">known flaky: {}</p>", esc(reason));
    }
    if let Some(reason) = &trial.baseline_reason {
        let _ = write!(out, "<p class=\"note\">baseline: {}</p>", esc(reason));
    }
    let failed: Vec<&CheckRecord> = trial.checks.iter().filter(|c| !c.passed).collect();
    if !failed.is_empty() {
        out.push_str("<ul class=\"failed\">");
        for c in failed {
            let level = level_label(c.level, profile);
            let _ = write!(out, "<li>✗ {} [{level}]", esc(&c.name));
            if !c.requirement_id.is_empty() {
                let id = &c.requirement_id;
                let _ = write!(out, " <a href=\"#{}\">{}</a>", anchor(id), esc(id));
            }
            out.push_str("</li>");
        }
        out.push_str("</ul>");
    }
    if trial.grade != Grade::Pass || !trial.attempts.is_empty() {
        let _ = write!(out, "<pre>{}</pre>", esc(&trial.details));
    }
    let _ = write!(out, "<pre>{}</pre></details></td>", esc(&trial.transcript));
}

/// Escapes text for HTML element content and attribute values.
fn esc(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&#39;"),
            c => out.push(c),
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn escapes_markup() {
        assert_eq!(
            esc("<a href=\"x\">&'"),
            "&lt;a href=&quot;x&quot;&gt;&amp;&#39;"
        );
    }
}
