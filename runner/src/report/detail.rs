//! What a reader sees when they open a trial: each failed check with its requirement (linked
//! to the catalogue's source), its level and Expected / Actual; the commands that re-run just
//! this trial, ready to copy; then, collapsed, the transcript and the full failure report
//! (which carries the client's stderr). Shared by the report and the matrix.
//!
//! The long texts (transcripts, failure reports: most of a page's bytes), and the markup of
//! every block closed when the page loads, are not parsed as markup: they go into one JSON
//! array at the end of the page, compressed ([`Texts`]) and the script fills a `<pre>` or a block when
//! its `<details>` is first opened. The browser then builds a few thousand elements
//! instead of tens of thousands, which is what makes a five-client matrix load quickly.

use std::collections::BTreeMap;
use std::fmt::Write as _;

use super::links::source_html;
use super::page::{anchor, esc};
use super::status::{installed_rerun, rerun_label};
use super::{CheckRecord, RunResults, TrialResult};
use crate::conformance::verdict::level_label;
use mcp_harness_scenarios::model::Level;

/// Writes a trial's detail block (`<div class="detail">`); `lazy` leaves it empty and puts
/// its markup among the page's texts, for the script to fill in when the block is opened
/// (for blocks closed when the page loads: matrix cells, trials that do not fail the run).
pub fn trial_detail(
    out: &mut String,
    texts: &mut Texts,
    trial: &TrialResult,
    profile: bool,
    head: &str,
    lazy: bool,
) {
    let mut inner = String::new();
    detail_inner(&mut inner, texts, trial, profile, head);
    if lazy {
        let _ = write!(
            out,
            "<div class=\"detail\" data-html=\"{}\"></div>",
            texts.0.len()
        );
        texts.0.push(inner);
    } else {
        let _ = write!(out, "<div class=\"detail\">{inner}</div>");
    }
}

fn detail_inner(
    out: &mut String,
    texts: &mut Texts,
    trial: &TrialResult,
    profile: bool,
    head: &str,
) {
    out.push_str(head);
    if !trial.attempts.is_empty() {
        let _ = write!(
            out,
            "<p class=\"note\">attempts: {}</p>",
            esc(&trial.attempts_shown())
        );
    }
    if let Some(reason) = &trial.known_flaky {
        let _ = write!(out, "<p class=\"note\">known flaky: {}</p>", esc(reason));
    }
    if let Some(reason) = &trial.baseline_reason {
        let _ = write!(out, "<p class=\"note\">baseline: {}</p>", esc(reason));
    }
    let baselined = trial.baseline_reason.is_some();
    for check in trial.checks.iter().filter(|c| !c.passed) {
        failed_check(out, check, profile, baselined);
    }
    not_judged(out, &trial.not_judged);
    if !trial.rerun.is_empty() {
        rerun_line(out, rerun_label(&trial.rerun), &trial.rerun);
        if let Some(installed) = installed_rerun(&trial.rerun) {
            rerun_line(out, "mcp-harness", &installed);
        }
    }
    if !trial.case_path.is_empty() {
        let _ = write!(
            out,
            "<p class=\"note\">case: <code>{}</code> · client time {} ms</p>",
            esc(&trial.case_path),
            trial.elapsed_ms
        );
    }
    if !trial.transcript.is_empty() {
        texts.collapsed(out, "transcript", &trial.transcript);
    }
    super::spans::trial_spans(out, texts, trial);
    if !trial.details.is_empty() {
        texts.collapsed(
            out,
            "full failure report (outcome lines, transcript tail, client stderr)",
            &trial.details,
        );
    }
}

/// The long texts of a page, written once at its end as a JSON array of strings.
#[derive(Debug, Default)]
pub struct Texts(Vec<String>);

impl Texts {
    /// Writes a collapsed `<details>` whose `<pre>` the script fills with `text` on opening.
    pub fn collapsed(&mut self, out: &mut String, summary: &str, text: &str) {
        let _ = write!(
            out,
            "<details class=\"more\" data-text=\"{}\"><summary>{}</summary><pre></pre></details>",
            self.0.len(),
            esc(summary)
        );
        self.0.push(text.to_owned());
    }

    /// Writes a collapsed `<details>` whose block the script fills with the markup `html`
    /// on opening.
    pub fn collapsed_html(&mut self, out: &mut String, summary: &str, html: String) {
        let _ = write!(
            out,
            "<details class=\"more\"><summary>{}</summary><div data-html=\"{}\"></div></details>",
            esc(summary),
            self.0.len()
        );
        self.0.push(html);
    }

    /// The `<script type="application/octet-stream" id="texts">` holding every text: the JSON
    /// array, gzip-compressed and in base64 (transcripts repeat themselves: a tenth of the
    /// bytes or less), which the script opens with the browser's own `DecompressionStream`.
    /// Base64 has no `<`, so no text can end the script element.
    pub fn script(&self) -> String {
        format!(
            "<script type=\"application/octet-stream\" id=\"texts\">{}</script><noscript><p class=\"note\">Transcripts and failure reports open with JavaScript; results.json has them too.</p></noscript>",
            encode(&self.0)
        )
    }
}

/// Texts as the page carries them: JSON, gzip, base64.
fn encode(texts: &[String]) -> String {
    use base64::Engine as _;
    use std::io::Write as _;
    let json = serde_json::to_vec(texts).unwrap_or_else(|_| b"[]".to_vec());
    let mut gz = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::default());
    // Writing to a Vec cannot fail.
    let _ = gz.write_all(&json);
    let bytes = gz.finish().unwrap_or_default();
    base64::engine::general_purpose::STANDARD.encode(bytes)
}

/// The texts a page carries (transcripts, failure reports, the markup of closed blocks),
/// decoded: for tests that look into a page, such as the one proving no token is in it.
pub fn page_texts(page: &str) -> Result<Vec<String>, String> {
    use base64::Engine as _;
    use std::io::Read as _;
    let start = "<script type=\"application/octet-stream\" id=\"texts\">";
    let Some((_, rest)) = page.split_once(start) else {
        return Ok(Vec::new());
    };
    let b64 = rest.split("</script>").next().unwrap_or("");
    let bytes = base64::engine::general_purpose::STANDARD
        .decode(b64.trim())
        .map_err(|e| format!("the page's texts are not base64: {e}"))?;
    let mut json = Vec::new();
    flate2::read::GzDecoder::new(&bytes[..])
        .read_to_end(&mut json)
        .map_err(|e| format!("the page's texts are not gzip: {e}"))?;
    serde_json::from_slice(&json).map_err(|e| format!("the page's texts are not a JSON array: {e}"))
}

/// One failed check; in a trial the baseline names, whether the baseline expects this check
/// (`baselined: <reason>`) or not (a new failure, when the check fails the trial).
fn failed_check(out: &mut String, c: &CheckRecord, profile: bool, in_baselined_trial: bool) {
    let level = level_label(c.level, profile);
    let soft = matches!(c.level, Level::Should | Level::Advisory)
        || (c.level == Level::Profile && !profile);
    let _ = write!(
        out,
        "<div class=\"check{}\"><div>✗ <b>{}</b> <span class=\"note\">[{level}]</span>",
        if soft { " soft" } else { "" },
        esc(&c.name)
    );
    if !c.requirement_id.is_empty() {
        let _ = write!(
            out,
            " <a href=\"#{}\"><code>{}</code></a>",
            anchor(&c.requirement_id),
            esc(&c.requirement_id)
        );
    }
    out.push_str("</div>");
    // Per check: which failures the baseline expects, and which are new.
    match &c.baseline {
        Some(reason) => {
            let _ = write!(out, "<div class=\"note\">baselined: {}</div>", esc(reason));
        }
        None if in_baselined_trial && !soft => {
            out.push_str(
                "<div class=\"note\"><b>new: the baseline does not name this check</b></div>",
            );
        }
        None => {}
    }
    if !c.requirement.is_empty() {
        let _ = write!(out, "<div class=\"req\">{}</div>", esc(&c.requirement));
    }
    if !c.source.is_empty() {
        let _ = write!(out, "<div class=\"src\">{}</div>", source_html(&c.source));
    }
    if !c.expected.is_empty() || !c.actual.is_empty() {
        let _ = write!(
            out,
            "<dl class=\"ea\"><dt>Expected</dt><dd><pre>{}</pre></dd><dt>Actual</dt><dd><pre>{}</pre></dd></dl>",
            esc(&c.expected),
            esc(&c.actual)
        );
    }
    out.push_str("</div>");
}

/// The requirements a trial did not judge, one line each, after its failed checks.
fn not_judged(out: &mut String, rows: &[super::NotJudged]) {
    if rows.is_empty() {
        return;
    }
    out.push_str("<div class=\"note\">not judged (neither a pass nor a failure):</div><ul class=\"unjudged\">");
    for row in rows {
        let _ = write!(
            out,
            "<li>{} <span class=\"note\">[{}]</span> <code>{}</code> {}: {}</li>",
            esc(&row.verdict),
            row.level.as_str(),
            esc(&row.requirement_id),
            esc(&row.name),
            esc(&row.why)
        );
    }
    out.push_str("</ul>");
}

fn rerun_line(out: &mut String, label: &str, command: &str) {
    let _ = write!(
        out,
        "<div class=\"rerun\"><span>re-run ({label})</span><code>{}</code><button type=\"button\" class=\"copy\">copy</button></div>",
        esc(command)
    );
}

/// Every requirement a failed check cites, once: id, level, sentence, source with its links.
/// Failed checks link here.
pub fn requirements(out: &mut String, runs: &[RunResults]) {
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
            source_html(&c.source)
        );
    }
    out.push_str("</tbody></table>");
}
