//! `matrix.html`: several clients' runs side by side. A per-client summary (the count of each
//! status), an area × client table, the filter bar, then a trial × client grid whose rows
//! come failures first (the worst status any client has, then how many clients do not
//! pass); a cell opens its trial's detail in a side panel. Works for any number of clients.

use std::collections::{BTreeMap, BTreeSet};
use std::fmt::Write as _;

use super::detail::{Texts, requirements, trial_detail};
use super::html::facets;
use super::page::{Facet, esc, filter_bar, shell};
use super::status::{GRADES, Status, area, transport};
use super::{RunResults, TrialResult};
use crate::conformance::verdict::Grade;

/// One row of the grid: a trial name and each client's result for it.
struct Row<'a> {
    name: &'a str,
    cells: Vec<Option<&'a TrialResult>>,
}

impl Row<'_> {
    fn worst(&self) -> Status {
        self.cells
            .iter()
            .flatten()
            .map(|t| Status::of(t))
            .min()
            .unwrap_or(Status::Pass)
    }

    fn not_passing(&self) -> usize {
        self.cells
            .iter()
            .flatten()
            .filter(|t| t.grade != Grade::Pass)
            .count()
    }

    fn first(&self) -> Option<&TrialResult> {
        self.cells.iter().flatten().next().copied()
    }
}

/// The matrix page of one or more clients' runs.
pub fn render(runs: &[RunResults]) -> String {
    let names: BTreeSet<&str> = runs
        .iter()
        .flat_map(|r| r.trials.iter().map(|t| t.name.as_str()))
        .collect();
    let index: Vec<BTreeMap<&str, &TrialResult>> = runs
        .iter()
        .map(|r| r.trials.iter().map(|t| (t.name.as_str(), t)).collect())
        .collect();
    let mut rows: Vec<Row> = names
        .iter()
        .map(|name| Row {
            name,
            cells: index.iter().map(|m| m.get(name).copied()).collect(),
        })
        .collect();
    rows.sort_by(|a, b| {
        (a.worst(), std::cmp::Reverse(a.not_passing()), a.name).cmp(&(
            b.worst(),
            std::cmp::Reverse(b.not_passing()),
            b.name,
        ))
    });

    let mut body = String::new();
    let _ = write!(
        body,
        "<h1>MCP client conformance matrix</h1><p class=\"lead\">{} trials × {} clients. Rows come failures first; a cell opens that client's failed checks, the re-run command and the transcript. Filters keep a row when any client matches.</p>",
        names.len(),
        runs.len()
    );
    client_summary(&mut body, runs);
    area_by_client(&mut body, runs);
    body.push_str(&filter_bar(&row_facets(runs, &rows), true));
    body.push_str("<h2>Trials × clients</h2><table class=\"grid\"><thead><tr><th>trial</th>");
    for run in runs {
        let _ = write!(
            body,
            "<th>{}<br><span class=\"note\">{:.1} s{}</span></th>",
            esc(&run.client),
            run.seconds,
            if run.profile { "" } else { ", spec only" }
        );
    }
    body.push_str("</tr></thead><tbody>");
    let mut texts = Texts::default();
    for row in &rows {
        grid_row(&mut body, &mut texts, row, runs);
    }
    body.push_str("</tbody></table>");
    requirements(&mut body, runs);
    body.push_str(&texts.script());
    shell("mcp-harness: conformance matrix", &body)
}

/// The facets of the grid: a row counts once per value any client gives it.
fn row_facets(runs: &[RunResults], rows: &[Row]) -> Vec<Facet> {
    let all: Vec<&TrialResult> = runs.iter().flat_map(|r| &r.trials).collect();
    let mut out = facets(&all);
    for facet in &mut out {
        for (value, n) in &mut facet.values {
            *n = rows
                .iter()
                .filter(|row| row_values(row, facet.key).contains(value))
                .count();
        }
    }
    out
}

/// A row's values of one facet, across clients.
fn row_values(row: &Row, key: &str) -> BTreeSet<String> {
    row.cells
        .iter()
        .flatten()
        .map(|t| match key {
            "status" => Status::of(t).as_str().to_owned(),
            "grade" => t.grade.as_str().to_owned(),
            "level" => t.level.as_str().to_owned(),
            "transport" => transport(&t.name).to_owned(),
            _ => area(&t.name).to_owned(),
        })
        .collect()
}

fn client_summary(out: &mut String, runs: &[RunResults]) {
    out.push_str("<div class=\"summaries\"><table class=\"sum\"><caption>result by client</caption><thead><tr><th>client</th>");
    for s in Status::ALL {
        let _ = write!(out, "<th title=\"{}\">{}</th>", s.meaning(), s.as_str());
    }
    out.push_str("<th>trials</th></tr></thead><tbody>");
    for run in runs {
        let _ = write!(out, "<tr><th>{}</th>", esc(&run.client));
        for s in Status::ALL {
            let n = run.trials.iter().filter(|t| Status::of(t) == s).count();
            let grade = match s {
                Status::Fail | Status::Unimplemented | Status::Flaky | Status::Stale => "fail",
                Status::Baselined | Status::NonStrict => "non-strict",
                Status::NotRun | Status::Pass => "",
            };
            super::html::count_cell(out, n, &format!("status={}", s.as_str()), grade);
        }
        let _ = write!(out, "<td class=\"n\">{}</td></tr>", run.trials.len());
    }
    out.push_str("</tbody></table>");
}

fn area_by_client(out: &mut String, runs: &[RunResults]) {
    let areas: BTreeSet<&str> = runs
        .iter()
        .flat_map(|r| r.trials.iter().map(|t| area(&t.name)))
        .collect();
    out.push_str("<table class=\"sum\"><caption>area × client (trials by grade)</caption><thead><tr><th>area</th>");
    for run in runs {
        let _ = write!(out, "<th>{}</th>", esc(&run.client));
    }
    out.push_str("</tr></thead><tbody>");
    for a in areas {
        let _ = write!(
            out,
            "<tr><th class=\"pick\" data-pick=\"area={0}\">{0}</th>",
            esc(a)
        );
        for run in runs {
            let of_area: Vec<&TrialResult> =
                run.trials.iter().filter(|t| area(&t.name) == a).collect();
            if of_area.is_empty() {
                out.push_str("<td class=\"n z\">—</td>");
                continue;
            }
            let _ = write!(out, "<td class=\"n pick\" data-pick=\"area={}\">", esc(a));
            for g in GRADES {
                let n = of_area.iter().filter(|t| t.grade == g).count();
                if n > 0 {
                    let _ = write!(
                        out,
                        "<span class=\"mini {0}\" title=\"{n} {0}\">{n}</span>",
                        g.as_str()
                    );
                }
            }
            out.push_str("</td>");
        }
        out.push_str("</tr>");
    }
    out.push_str("</tbody></table></div>");
}

fn grid_row(out: &mut String, texts: &mut Texts, row: &Row, runs: &[RunResults]) {
    let values = |key| {
        let v: Vec<String> = row_values(row, key).into_iter().map(|s| esc(&s)).collect();
        v.join(" ")
    };
    let grades: BTreeSet<&str> = row
        .cells
        .iter()
        .flatten()
        .map(|t| t.grade.as_str())
        .collect();
    let differ = grades.len() > 1 || row.cells.iter().any(Option::is_none);
    let (description, level) = row
        .first()
        .map_or(("", ""), |t| (t.description.as_str(), t.level.as_str()));
    let _ = write!(
        out,
        "<tr data-trial=\"\" data-status=\"{}\" data-grade=\"{}\" data-level=\"{}\" data-transport=\"{}\" data-area=\"{}\" data-differ=\"{}\"><td class=\"name\"><code>{}</code><small>{} · {level}</small></td>",
        values("status"),
        values("grade"),
        values("level"),
        values("transport"),
        values("area"),
        u8::from(differ),
        esc(row.name),
        esc(description),
    );
    for (cell, run) in row.cells.iter().zip(runs) {
        match cell {
            None => out.push_str("<td class=\"cell note\">not run</td>"),
            Some(trial) => {
                let status = Status::of(trial);
                let _ = write!(
                    out,
                    "<td class=\"cell\"><details><summary><span class=\"badge {0}\" title=\"{1}\">{0}</span></summary>",
                    status.as_str(),
                    status.meaning()
                );
                let head = format!(
                    "<div class=\"panel-head\"><div><b>{}</b> · <code>{}</code><br><span class=\"note\">{} · graded {}</span></div><button type=\"button\" class=\"close\">close</button></div>",
                    esc(&run.client),
                    esc(row.name),
                    esc(&trial.description),
                    trial.grade.as_str()
                );
                trial_detail(out, texts, trial, run.profile, &head, true);
                out.push_str("</details></td>");
            }
        }
    }
    out.push_str("</tr>");
}
