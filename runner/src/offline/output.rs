//! How `check` shows a graded recording: lines grouped by verdict (failures with Expected /
//! Actual, passes, then what was not observed, with what the recording lacked), the same
//! as JSON, and the recording itself as a report's transcript.

use serde_json::json;

use mcp_harness_scenarios::transcript::{Event, Record};

use super::{Graded, Grading, Verdict};
use crate::conformance::verdict::level_label;

/// One recording's verdicts as lines (what `check` prints): a header, then failures, passes and not observed.
pub fn text(name: &str, g: &Grading) -> String {
    let (revision, source) = &g.revision;
    let mut out = format!(
        "{name}: {}, revision {revision} ({}), {} message(s) from the client\n",
        g.transport.as_str(),
        source.as_str(),
        g.client_messages
    );
    let groups = [
        (Verdict::Fail, "failed"),
        (Verdict::Pass, "passed"),
        (
            Verdict::NotObserved,
            "not observed (not a pass: nothing in the recording exercised it)",
        ),
    ];
    for (verdict, title) in groups {
        let rows: Vec<&Graded> = g.with(verdict).collect();
        if rows.is_empty() {
            continue;
        }
        out.push_str(&format!("  {title}: {}\n", rows.len()));
        for row in rows {
            let c = &row.check;
            let mark = match verdict {
                Verdict::Fail => "✗",
                Verdict::Pass => "✓",
                Verdict::NotObserved => "-",
            };
            out.push_str(&format!(
                "    {mark} {} [{}] {}",
                c.requirement_id,
                level_label(c.level, true),
                c.name
            ));
            match verdict {
                Verdict::NotObserved => out.push_str(&format!(": {}\n", row.why)),
                Verdict::Pass => out.push('\n'),
                Verdict::Fail => out.push_str(&format!(
                    "\n        Expected: {}\n        Actual:   {}\n        Source:   {}\n",
                    c.expected, c.actual, c.source
                )),
            }
        }
    }
    let count = |v| g.with(v).count();
    out.push_str(&format!(
        "  {} failed, {} passed, {} not observed\n",
        count(Verdict::Fail),
        count(Verdict::Pass),
        count(Verdict::NotObserved)
    ));
    out
}

/// One recording's verdicts as the JSON `check --json` prints.
pub fn json(name: &str, g: &Grading) -> serde_json::Value {
    let checks: Vec<_> = g
        .checks
        .iter()
        .map(|row| {
            let c = &row.check;
            let mut v = json!({
                "verdict": row.verdict.as_str(),
                "requirement_id": c.requirement_id,
                "name": c.name,
                "level": c.level.as_str(),
                "requirement": c.requirement,
                "source": c.source,
            });
            match row.verdict {
                Verdict::Fail => {
                    v["expected"] = json!(c.expected);
                    v["actual"] = json!(c.actual);
                }
                Verdict::NotObserved => v["why"] = json!(row.why),
                Verdict::Pass => {}
            }
            v
        })
        .collect();
    json!({
        "recording": name,
        "transport": g.transport.as_str(),
        "revision": g.revision.0,
        "revision_source": g.revision.1.as_str(),
        "client_messages": g.client_messages,
        "fails": g.fails(),
        "checks": checks,
    })
}

/// The recording as a report shows it: `client →` and `server ←` messages, other records
/// as they are written.
pub fn transcript(records: &[Record]) -> String {
    let mut out = String::new();
    for r in records {
        let line = match &r.event {
            Event::Received { message } => format!("client → {message}"),
            Event::Sent { message } => format!("server ← {message}"),
            _ => serde_json::to_string(r).unwrap_or_default(),
        };
        out.push_str(&line);
        out.push('\n');
    }
    out
}
