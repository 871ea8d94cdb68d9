//! `report.html`: one client's run as a page a client author reads in seconds. At the top,
//! whether the run fails, what to fix first (the failing trials grouped by cause, see
//! [`super::causes`]), the count of each status (what fails the run first), a grade ×
//! level table and an area × grade table whose cells filter the list; then a filter bar
//! (status, grade, level, transport, area, text); then every trial, failures first, the ones
//! that fail the run open on their failed checks. Self-contained: inline style and script,
//! nothing fetched. The matrix of several clients is [`super::matrix`].

use std::collections::BTreeMap;
use std::fmt::Write as _;

use super::detail::{Texts, requirements, trial_detail};
use super::page::{Facet, esc, filter_bar, shell};
use super::status::{GRADES, Status, area, transport};
use super::{RunResults, TrialResult};
use mcp_harness_scenarios::model::Level;

/// The levels in report order.
pub const LEVELS: [Level; 4] = [Level::Must, Level::Profile, Level::Should, Level::Advisory];

/// The report page of one client's run.
pub fn report(run: &RunResults) -> String {
    let mut trials: Vec<&TrialResult> = run.trials.iter().collect();
    trials.sort_by(|a, b| (Status::of(a), &a.name).cmp(&(Status::of(b), &b.name)));
    let mut body = String::new();
    let _ = write!(
        body,
        "<h1>MCP client conformance: {}</h1><p class=\"lead\">{} trials · {:.1} s · boundary profile {} · time scale {}</p>",
        esc(&run.client),
        run.trials.len(),
        run.seconds,
        if run.profile {
            "on"
        } else {
            "off (--spec-only)"
        },
        time_scales(run)
    );
    let failing = trials.iter().filter(|t| t.verdict.fails_run()).count();
    if failing == 0 {
        body.push_str(
            "<p class=\"verdict good\">The run meets its baseline: no trial fails it.</p>",
        );
    } else {
        let _ = write!(
            body,
            "<p class=\"verdict bad\">The run fails: {failing} trial(s) fail it (listed first, open).</p>"
        );
    }
    causes_section(&mut body, run);
    status_chips(&mut body, &trials);
    body.push_str("<div class=\"summaries\">");
    grade_by_level(&mut body, &trials);
    area_by_grade(&mut body, &trials);
    body.push_str("</div>");
    body.push_str(&filter_bar(&facets(&trials), false));
    body.push_str("<h2>Trials, failures first</h2>");
    let mut texts = Texts::default();
    for trial in &trials {
        trial_row(&mut body, &mut texts, trial, run.profile);
    }
    requirements(&mut body, std::slice::from_ref(run));
    body.push_str(&texts.script());
    let title = format!("mcp-harness: {}", run.client);
    shell(&title, &body)
}

/// The facets of a set of trials, with counts.
pub fn facets(trials: &[&TrialResult]) -> Vec<Facet> {
    let count = |f: &dyn Fn(&TrialResult) -> String| {
        let mut m: BTreeMap<String, usize> = BTreeMap::new();
        for t in trials {
            *m.entry(f(t)).or_default() += 1;
        }
        m
    };
    let ordered = |all: Vec<&str>, m: BTreeMap<String, usize>| {
        all.into_iter()
            .filter_map(|v| m.get(v).map(|n| (v.to_owned(), *n)))
            .collect::<Vec<_>>()
    };
    let statuses = count(&|t| Status::of(t).as_str().to_owned());
    let grades = count(&|t| t.grade.as_str().to_owned());
    let levels = count(&|t| t.level.as_str().to_owned());
    vec![
        Facet {
            key: "status",
            label: "result",
            values: ordered(Status::ALL.iter().map(|s| s.as_str()).collect(), statuses),
        },
        Facet {
            key: "grade",
            label: "grade",
            values: ordered(GRADES.iter().map(|g| g.as_str()).collect(), grades),
        },
        Facet {
            key: "level",
            label: "level",
            values: ordered(LEVELS.iter().map(|l| l.as_str()).collect(), levels),
        },
        Facet::counted(
            "transport",
            "transport",
            count(&|t| transport(&t.name).to_owned()),
        ),
        Facet::counted("area", "area", count(&|t| area(&t.name).to_owned())),
    ]
}

/// A chip per status: its count, clickable to show only it.
fn status_chips(out: &mut String, trials: &[&TrialResult]) {
    out.push_str("<div class=\"chips\">");
    for s in Status::ALL {
        let n = trials.iter().filter(|t| Status::of(t) == s).count();
        let _ = write!(
            out,
            "<button type=\"button\" class=\"chip {0}{1}\" data-pick=\"status={0}\" title=\"{2}\"><b>{n}</b>{0}</button>",
            s.as_str(),
            if n == 0 { " zero" } else { "" },
            s.meaning()
        );
    }
    out.push_str("</div>");
}

/// A count cell that filters the list on click; coloured when failures are counted.
pub fn count_cell(out: &mut String, n: usize, pick: &str, grade: &str) {
    let class = match (n, grade) {
        (0, _) => " z",
        (_, "fail") => " hot",
        (_, "non-strict" | "unimplemented") => " warm",
        _ => "",
    };
    let _ = write!(
        out,
        "<td class=\"n pick{class}\" data-pick=\"{}\">{n}</td>",
        esc(pick)
    );
}

fn grade_by_level(out: &mut String, trials: &[&TrialResult]) {
    out.push_str(
        "<table class=\"sum\"><caption>grade × case level</caption><thead><tr><th>level</th>",
    );
    for g in GRADES {
        let _ = write!(out, "<th>{}</th>", g.as_str());
    }
    out.push_str("<th>all</th></tr></thead><tbody>");
    for level in LEVELS {
        let of_level: Vec<_> = trials.iter().filter(|t| t.level == level).collect();
        if of_level.is_empty() {
            continue;
        }
        let l = level.as_str();
        let _ = write!(out, "<tr><th>{l}</th>");
        for g in GRADES {
            let n = of_level.iter().filter(|t| t.grade == g).count();
            count_cell(
                out,
                n,
                &format!("level={l};grade={}", g.as_str()),
                g.as_str(),
            );
        }
        count_cell(out, of_level.len(), &format!("level={l}"), "");
        out.push_str("</tr>");
    }
    out.push_str("</tbody></table>");
}

fn area_by_grade(out: &mut String, trials: &[&TrialResult]) {
    let mut areas: BTreeMap<&str, Vec<&TrialResult>> = BTreeMap::new();
    for t in trials {
        areas.entry(area(&t.name)).or_default().push(t);
    }
    out.push_str("<table class=\"sum\"><caption>area × grade</caption><thead><tr><th>area</th>");
    for g in GRADES {
        let _ = write!(out, "<th>{}</th>", g.as_str());
    }
    out.push_str("<th>all</th></tr></thead><tbody>");
    for (name, of_area) in areas {
        let _ = write!(out, "<tr><th>{}</th>", esc(name));
        for g in GRADES {
            let n = of_area.iter().filter(|t| t.grade == g).count();
            count_cell(
                out,
                n,
                &format!("area={name};grade={}", g.as_str()),
                g.as_str(),
            );
        }
        count_cell(out, of_area.len(), &format!("area={name}"), "");
        out.push_str("</tr>");
    }
    out.push_str("</tbody></table>");
}

/// One trial: a summary line (status, name and description, level · transport · time) that
/// opens on the detail; open already when the trial fails the run.
fn trial_row(out: &mut String, texts: &mut Texts, trial: &TrialResult, profile: bool) {
    let status = Status::of(trial);
    let _ = write!(
        out,
        "<details class=\"trial\" data-trial=\"\" data-status=\"{}\" data-grade=\"{}\" data-level=\"{}\" data-transport=\"{}\" data-area=\"{}\"{}>",
        status.as_str(),
        trial.grade.as_str(),
        trial.level.as_str(),
        esc(transport(&trial.name)),
        esc(area(&trial.name)),
        if trial.verdict.fails_run() {
            " open"
        } else {
            ""
        }
    );
    let grade_note = if status.as_str() == trial.grade.as_str() {
        String::new()
    } else {
        format!(" · graded {}", trial.grade.as_str())
    };
    let _ = write!(
        out,
        "<summary><span><span class=\"badge {0}\" title=\"{1}\">{0}</span></span><span class=\"name\"><code>{2}</code><small>{3}</small></span><span class=\"meta\">{4}{grade_note} · {5} ms</span></summary>",
        status.as_str(),
        status.meaning(),
        esc(&trial.name),
        esc(&trial.description),
        trial.level.as_str(),
        trial.elapsed_ms
    );
    trial_detail(out, texts, trial, profile, "", !trial.verdict.fails_run());
    out.push_str("</details>");
}

/// The factor trials ran at: one number, or the range when the machine's load changed it
/// between trials (`1–2.5`).
fn time_scales(run: &RunResults) -> String {
    let factors = run.trials.iter().map(|t| t.time_scale);
    let low = factors.clone().fold(f64::INFINITY, f64::min);
    let high = factors.fold(f64::NEG_INFINITY, f64::max);
    if run.trials.is_empty() || low == high {
        return format!(
            "{}",
            if run.trials.is_empty() {
                run.time_scale
            } else {
                low
            }
        );
    }
    format!("{low}–{high}")
}

/// What to fix first: each cause of the failing trials with its count, the fix and its
/// trials (folded into `case@*` patterns, closed).
fn causes_section(out: &mut String, run: &RunResults) {
    let causes = super::causes::causes(run);
    if causes.is_empty() {
        return;
    }
    out.push_str("<section class=\"causes\"><h2>What to fix first</h2><p class=\"note\">Each trial that fails the run is counted once, under the cause most of the failing trials share; fixing a cause turns its trials unless they fail for another reason too.</p><ol>");
    for cause in &causes {
        let folded = super::causes::folded(cause, run);
        let n = cause.trials.len();
        let _ = write!(
            out,
            "<li><p><b class=\"count\">{n} trial{}</b> {}</p><p class=\"fix\">fix: {}</p><details><summary>{} trial name{} or pattern{}</summary><p class=\"trials\">",
            if n == 1 { "" } else { "s" },
            esc(&cause.title),
            esc(&cause.fix),
            folded.len(),
            if folded.len() == 1 { "" } else { "s" },
            if folded.len() == 1 { "" } else { "s" },
        );
        for name in &folded {
            let _ = write!(out, "<code>{}</code> ", esc(name));
        }
        out.push_str("</p></details></li>");
    }
    out.push_str("</ol></section>");
}
