//! What the report page and the matrix page share: the page shell with its inline style and
//! script (the files are mailed, archived by CI and opened offline, so nothing is fetched),
//! the filter bar, and HTML escaping.
//!
//! Filtering is done in the page: every trial row carries its facets as `data-*` attributes
//! (`data-status`, `data-grade`, `data-level`, `data-transport`, `data-area`; a matrix row
//! lists every client's value, space-separated), and the script hides the rows no checked
//! box matches. The page reads whole without the script; only filtering and copying need it.

use std::collections::BTreeMap;
use std::fmt::Write as _;

const STYLE: &str = r#"
:root { --fail: #b3261e; --fail-bg: #fbd9d7; --warn-bg: #fff1c7; --warn: #7a5800; --ok-bg: #d9f2df; --ok: #17652c; --grey-bg: #e4e6eb; --grey: #4a5060; --line: #e3e6ec; }
* { box-sizing: border-box; }
body { font: 14px/1.45 system-ui, sans-serif; margin: 0; color: #1d2330; }
main { padding: 16px 24px 48px; }
h1 { font-size: 20px; margin: 0 0 4px; }
h2 { font-size: 16px; margin: 24px 0 8px; }
p.lead { color: #555; margin: 0 0 12px; }
.verdict { font-size: 16px; font-weight: 600; margin: 8px 0 12px; }
.verdict.bad { color: var(--fail); } .verdict.good { color: var(--ok); }
.chips { display: flex; flex-wrap: wrap; gap: 8px; margin: 0 0 12px; }
.chip { border: 1px solid var(--line); border-radius: 8px; padding: 6px 12px; min-width: 92px; cursor: pointer; background: #fff; text-align: left; font: inherit; }
.chip b { display: block; font-size: 22px; line-height: 1.1; }
.chip.zero { opacity: .45; }
.summaries { display: flex; flex-wrap: wrap; gap: 24px; align-items: flex-start; }
table { border-collapse: collapse; }
th, td { border-bottom: 1px solid var(--line); padding: 4px 8px; vertical-align: top; text-align: left; }
table.sum th, table.sum td { padding: 2px 8px; font-size: 13px; }
table.sum caption { font-weight: 600; text-align: left; padding: 0 8px 4px; }
.mini { display: inline-block; min-width: 26px; margin-left: 3px; padding: 0 4px; border-radius: 8px; font-size: 12px; text-align: center; }
table.sum td.n { text-align: right; font-variant-numeric: tabular-nums; min-width: 44px; }
table.sum td.n.pick { cursor: pointer; }
table.sum td.n.z { color: #bbb; }
table.sum td.hot { background: var(--fail-bg); color: var(--fail); font-weight: 600; }
table.sum td.warm { background: var(--warn-bg); color: var(--warn); }
.badge { display: inline-block; min-width: 92px; padding: 1px 8px; border-radius: 10px; font-weight: 600; font-size: 12px; text-align: center; white-space: nowrap; }
.fail { background: var(--fail-bg); color: var(--fail); }
.flaky, .stale { background: #ffe0b2; color: #8a4b00; }
.baselined { background: #fbd9d7; color: #9b1c16; outline: 2px dashed #9b1c16; outline-offset: -2px; }
.non-strict { background: var(--warn-bg); color: var(--warn); }
.unimplemented, .not-run { background: var(--grey-bg); color: var(--grey); }
.pass { background: var(--ok-bg); color: var(--ok); }
form.filters { position: sticky; top: 0; z-index: 5; background: #f6f7f9; border-bottom: 1px solid #d5d9e0; margin: 16px -24px 0; padding: 8px 24px; display: flex; flex-wrap: wrap; gap: 6px 14px; align-items: center; font-size: 13px; }
form.filters fieldset { border: 0; padding: 0; margin: 0; display: flex; flex-wrap: wrap; gap: 2px 8px; align-items: center; }
form.filters legend { float: left; font-weight: 600; margin-right: 4px; }
form.filters label { white-space: nowrap; }
form.filters input[type=search] { width: 260px; padding: 3px 6px; }
form.filters button { font-size: 12px; }
#shown { color: #555; margin-left: auto; }
.trial { border-bottom: 1px solid var(--line); }
.trial > summary { display: grid; grid-template-columns: 110px 1fr 240px; gap: 8px; padding: 5px 0; cursor: pointer; list-style: none; }
.trial > summary::-webkit-details-marker { display: none; }
.trial[open] > summary { background: #f6f7f9; }
.name code { font-size: 13px; }
.name small { display: block; color: #666; }
.meta { color: #555; font-size: 12px; }
.detail { padding: 6px 0 12px 118px; }
.check { margin: 0 0 10px; padding: 6px 10px; border-left: 3px solid var(--fail); background: #fdf6f5; }
.check.soft { border-left-color: #c99a00; background: #fffbeb; }
.check .req, .check .src { font-size: 12px; color: #444; }
.links a { color: #2457a6; }
dl.ea { display: grid; grid-template-columns: 70px 1fr; gap: 2px 8px; margin: 6px 0 0; }
dl.ea dt { font-weight: 600; font-size: 12px; } dl.ea dd { margin: 0; }
pre { white-space: pre-wrap; word-break: break-word; font-size: 12px; margin: 0; max-width: 110ch; }
.rerun { display: flex; gap: 6px; align-items: baseline; margin: 4px 0; font-size: 12px; }
.rerun span { color: #555; min-width: 90px; }
.rerun code { user-select: all; background: #f0f2f5; padding: 2px 6px; border-radius: 4px; word-break: break-all; }
details.more > summary { cursor: pointer; color: #2457a6; font-size: 12px; margin-top: 4px; }
details.more pre { background: #f6f7f9; padding: 6px; }
.note { color: #666; font-size: 12px; margin: 2px 0; }
.causes { border: 1px solid var(--line); border-left: 4px solid var(--fail); border-radius: 6px; padding: 4px 16px 8px; margin: 0 0 14px; background: #fffafa; }
.causes h2 { margin: 8px 0 2px; }
.causes ol { margin: 6px 0 0; padding-left: 22px; }
.causes li { margin: 0 0 8px; }
.causes li p { margin: 0; }
.causes .count { display: inline-block; min-width: 78px; color: var(--fail); }
.causes .fix { font-size: 13px; color: #333; padding-left: 82px; }
.causes details { padding-left: 82px; font-size: 12px; }
.causes details summary { cursor: pointer; color: #2457a6; }
.causes .trials code { font-size: 12px; background: #f0f2f5; padding: 0 4px; border-radius: 3px; line-height: 1.9; }
table.grid { width: 100%; }
table.grid thead th { position: sticky; top: var(--bar, 0px); background: #f6f7f9; z-index: 2; }
table.grid td.cell { white-space: nowrap; }
table.grid td.cell > details > summary { list-style: none; cursor: pointer; }
table.grid td.cell > details[open] > summary .badge { box-shadow: 0 0 0 2px #2457a6; }
table.grid td.cell > details[open] > .detail { position: fixed; top: 0; right: 0; bottom: 0; width: min(980px, 70vw); overflow: auto; background: #fff; box-shadow: -4px 0 16px rgba(0,0,0,.2); padding: 12px 16px; z-index: 10; white-space: normal; }
.panel-head { display: flex; justify-content: space-between; gap: 8px; margin-bottom: 8px; }
table.reqs td { font-size: 13px; }
.wire { font: 12px/1.5 ui-monospace, monospace; background: #f6f7f9; padding: 6px; max-width: 130ch; white-space: pre-wrap; word-break: break-word; }
.wire .span { font-family: system-ui, sans-serif; margin: 1px 0 4px 4ch; padding: 2px 8px; border-left: 3px solid #2457a6; background: #eef3fb; }
.wire .span.missing { border-left-color: #c99a00; background: #fffbeb; color: #7a5800; }
.wire .span .badge { min-width: 0; } .wire .span .attrs { font-family: ui-monospace, monospace; color: #333; }
.wire .span .events { font-size: 12px; color: #444; }
.wire .span.layer { border-left-color: #8fa8cf; background: #f4f7fc; color: #333; }
.wire .span.d1 { margin-left: 7ch; } .wire .span.d2 { margin-left: 10ch; } .wire .span.d3 { margin-left: 13ch; }
.ids { font: 11px/1.4 ui-monospace, monospace; color: #888; }
table.spans td { font-size: 12px; } table.spans td pre { max-width: 70ch; }
table.spans td.d1 { padding-left: 3ch; } table.spans td.d2 { padding-left: 6ch; } table.spans td.d3 { padding-left: 9ch; }
[hidden] { display: none !important; }
"#;

const SCRIPT: &str = r#"
(function () {
  var form = document.getElementById('filters');
  if (!form) return;
  var rows = Array.prototype.slice.call(document.querySelectorAll('[data-trial]'));
  var q = document.getElementById('q'), shown = document.getElementById('shown'), differ = document.getElementById('differ');
  var sets = Array.prototype.map.call(form.querySelectorAll('fieldset[data-facet]'), function (fs) { return fs.dataset.facet; });
  function chosen(facet) {
    var s = {};
    form.querySelectorAll('fieldset[data-facet="' + facet + '"] input:checked').forEach(function (i) { s[i.value] = 1; });
    return s;
  }
  function apply() {
    var sel = sets.map(function (k) { return [k, chosen(k)]; });
    var text = q.value.trim().toLowerCase(), n = 0;
    rows.forEach(function (r) {
      var ok = sel.every(function (p) { return r.dataset[p[0]].split(' ').some(function (v) { return p[1][v]; }); });
      if (ok && differ && differ.checked) ok = r.dataset.differ === '1';
      if (ok && text) {
        if (r._s === undefined) r._s = (r.querySelector('.name') || r).textContent.toLowerCase();
        ok = r._s.indexOf(text) >= 0;
      }
      r.hidden = !ok;
      if (ok) n++;
    });
    shown.textContent = n + ' of ' + rows.length + ' shown';
  }
  function pick(spec) {
    spec.split(';').forEach(function (kv) {
      var p = kv.split('=');
      form.querySelectorAll('fieldset[data-facet="' + p[0] + '"] input').forEach(function (i) { i.checked = i.value === p[1]; });
    });
    apply();
    form.scrollIntoView();
  }
  form.addEventListener('input', apply);
  form.addEventListener('submit', function (e) { e.preventDefault(); });
  document.addEventListener('click', function (e) {
    var t = e.target, b;
    if ((b = t.closest('button[data-all]'))) {
      e.preventDefault();
      b.closest('fieldset').querySelectorAll('input').forEach(function (i) { i.checked = b.dataset.all === '1'; });
      apply();
    } else if ((b = t.closest('button[data-reset]'))) {
      e.preventDefault();
      form.querySelectorAll('fieldset input').forEach(function (i) { i.checked = true; });
      q.value = ''; if (differ) differ.checked = false;
      apply();
    } else if ((b = t.closest('[data-pick]'))) {
      pick(b.dataset.pick);
    } else if ((b = t.closest('button.copy'))) {
      var code = b.previousElementSibling, text = code.textContent;
      var select = function () { var r = document.createRange(); r.selectNodeContents(code); var s = getSelection(); s.removeAllRanges(); s.addRange(r); b.textContent = 'selected'; };
      if (navigator.clipboard) navigator.clipboard.writeText(text).then(function () { b.textContent = 'copied'; }, select); else select();
    } else if ((b = t.closest('button.close'))) {
      b.closest('details').open = false;
    }
  });
  var textsP = null;
  function texts() {
    if (!textsP) {
      var el = document.getElementById('texts');
      textsP = new Promise(function (ok, no) {
        if (!el || !window.DecompressionStream) return no(new Error('this browser cannot decompress the texts (no DecompressionStream); results.json has them'));
        var bin = atob(el.textContent.trim()), bytes = new Uint8Array(bin.length);
        for (var i = 0; i < bin.length; i++) bytes[i] = bin.charCodeAt(i);
        new Response(new Blob([bytes]).stream().pipeThrough(new DecompressionStream('gzip'))).text().then(function (t) { ok(JSON.parse(t)); }, no);
      });
    }
    return textsP;
  }
  function fill(d) {
    var lazy = d.querySelector(':scope > [data-html]');
    var pre = d.dataset.text !== undefined ? d.querySelector(':scope > pre') : null;
    if (!lazy && !(pre && !pre.textContent)) return;
    texts().then(function (t) {
      if (lazy && lazy.dataset.html !== undefined) { lazy.innerHTML = t[+lazy.dataset.html]; lazy.removeAttribute('data-html'); }
      if (pre && !pre.textContent) pre.textContent = t[+d.dataset.text];
    }, function (err) {
      (lazy || pre).textContent = String(err.message || err);
    });
  }
  document.addEventListener('toggle', function (e) {
    var d = e.target;
    if (d.open) fill(d);
    if (d.open && d.parentElement && d.parentElement.classList.contains('cell')) {
      document.querySelectorAll('td.cell > details[open]').forEach(function (o) { if (o !== d) o.open = false; });
    }
  }, true);
  document.documentElement.style.setProperty('--bar', form.offsetHeight + 'px');
  apply();
  document.querySelectorAll('details[open]').forEach(fill);
  setTimeout(function () { texts().catch(function () {}); }, 200);
})();
"#;

/// A whole page: the head with the style, the body (which holds the filter bar), the script.
pub fn shell(title: &str, body: &str) -> String {
    format!(
        "<!doctype html><html lang=\"en\"><head><meta charset=\"utf-8\"><meta name=\"viewport\" content=\"width=device-width\"><title>{}</title><style>{STYLE}</style></head><body><main>{body}</main><script>{SCRIPT}</script></body></html>\n",
        esc(title)
    )
}

/// The values of one facet and how many trials have each, in the order they are shown.
pub struct Facet {
    /// The `data-*` name (`status`, `grade`, `level`, `transport`, `area`).
    pub key: &'static str,
    /// What the bar calls it.
    pub label: &'static str,
    /// Each value and its count.
    pub values: Vec<(String, usize)>,
}

impl Facet {
    /// A facet from values counted in a map (sorted by name).
    pub fn counted(
        key: &'static str,
        label: &'static str,
        counts: BTreeMap<String, usize>,
    ) -> Facet {
        Facet {
            key,
            label,
            values: counts.into_iter().collect(),
        }
    }
}

/// The filter bar: a checkbox per value of each facet, all checked, a search box, and, for
/// the matrix, "only where clients differ".
pub fn filter_bar(facets: &[Facet], matrix: bool) -> String {
    let mut out = String::from(
        "<form class=\"filters\" id=\"filters\" role=\"search\" aria-label=\"filter trials\">",
    );
    for facet in facets {
        let _ = write!(
            out,
            "<fieldset data-facet=\"{}\"><legend>{}</legend>",
            facet.key, facet.label
        );
        for (value, n) in &facet.values {
            let _ = write!(
                out,
                "<label><input type=\"checkbox\" value=\"{0}\" checked> {0} <span class=\"note\">{n}</span></label>",
                esc(value)
            );
        }
        if facet.values.len() > 3 {
            out.push_str("<button type=\"button\" data-all=\"1\">all</button><button type=\"button\" data-all=\"0\">none</button>");
        }
        out.push_str("</fieldset>");
    }
    out.push_str("<input type=\"search\" id=\"q\" placeholder=\"search trial names and descriptions\" aria-label=\"search\">");
    if matrix {
        out.push_str(
            "<label><input type=\"checkbox\" id=\"differ\"> only where clients differ</label>",
        );
    }
    out.push_str(
        "<button type=\"button\" data-reset=\"1\">reset</button><span id=\"shown\"></span></form>",
    );
    out
}

/// Escapes text for HTML element content and attribute values.
pub fn esc(text: &str) -> String {
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

/// The anchor of a requirement's row in a page's requirements table.
pub fn anchor(id: &str) -> String {
    let safe: String = id
        .chars()
        .map(|c| if c.is_ascii_alphanumeric() { c } else { '-' })
        .collect();
    format!("req-{safe}")
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

    #[test]
    fn the_page_fetches_nothing() {
        let page = shell("t", &filter_bar(&[], true));
        for needle in [
            "src=", "<link", "@import", "url(", "http://", "https://", "fetch(",
        ] {
            assert!(!page.contains(needle), "{needle}");
        }
    }
}
