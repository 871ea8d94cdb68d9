//! What `serve` prints: how to reach each served server (a command line or a URL with its CA,
//! and one host configuration snippet for them all), each check as it becomes judged, and the
//! summary grouped by verdict.

use std::fmt::Write as _;

use serde_json::{Map, Value, json};

use super::judge::{Graded, Verdict};
use super::setup::{Reach, Served};
use crate::conformance::verdict::level_label;

/// How to reach every server of `served`, and the host configuration snippet naming them all
/// (the common `{"mcpServers": {NAME: {...}}}` shape), on one line so that it pastes whole.
pub fn instructions(served: &[Served<'_>]) -> String {
    let mut out = String::new();
    let mut entries = Map::new();
    let mut ca = None;
    for s in served {
        let _ = writeln!(
            out,
            "serving {} over {}: {}",
            s.case.id,
            s.transport.as_str(),
            s.case.scenario.description
        );
        for server in &s.servers {
            let entry = match &server.reach {
                Reach::Command(argv) => {
                    let shown: Vec<String> = argv.iter().map(|a| shell_word(a)).collect();
                    let _ = writeln!(out, "  {}: command: {}", server.entry, shown.join(" "));
                    json!({"command": argv[0], "args": argv[1..]})
                }
                Reach::Url { url, ca_file } => {
                    let _ = writeln!(out, "  {}: url: {url}", server.entry);
                    ca = Some(ca_file.clone());
                    json!({"url": url})
                }
            };
            entries.insert(server.entry.clone(), entry);
        }
        let _ = writeln!(
            out,
            "  what to make the host do (the case's checks are judged once it has):"
        );
        for step in super::steps::to_do(&s.case.scenario) {
            let _ = writeln!(out, "    {step}");
        }
    }
    if let Some(ca) = ca {
        let _ = writeln!(out, "CA file (trust it in the host): {ca}");
        let _ = writeln!(
            out,
            "  Node hosts: NODE_EXTRA_CA_CERTS={ca}   Python hosts: SSL_CERT_FILE={ca}"
        );
    }
    let _ = writeln!(out, "host configuration:");
    let _ = writeln!(out, "{}", json!({"mcpServers": Value::Object(entries)}));
    out
}

/// One check's line: verdict, level, requirement id, name; a failure adds its expected and
/// actual, a check not exercised its reason.
pub fn check_line(case: &str, g: &Graded) -> String {
    let c = &g.check;
    let level = level_label(c.level, true);
    let mut line = match &g.verdict {
        Verdict::Pass => format!("  pass  [{level}] {} {}", c.requirement_id, c.name),
        Verdict::Fail => format!("  FAIL  [{level}] {} {}", c.requirement_id, c.name),
        Verdict::NotExercised(why) => format!(
            "  not exercised  [{level}] {} {}: {why}",
            c.requirement_id, c.name
        ),
    };
    if g.verdict == Verdict::Fail {
        let _ = write!(
            line,
            "\n      expected: {}\n      actual:   {}",
            c.expected, c.actual
        );
    }
    if !case.is_empty() {
        line = format!("{case}:{line}");
    }
    line
}

/// The summary of one served case: its checks grouped by verdict (failures first), then the
/// tally.
pub fn summary(name: &str, graded: &[Graded]) -> String {
    let mut out = format!("\n{name}\n");
    type Pick = fn(&Verdict) -> bool;
    let groups: [(&str, Pick); 3] = [
        ("failed", |v| *v == Verdict::Fail),
        ("not exercised", |v| matches!(v, Verdict::NotExercised(_))),
        ("passed", |v| *v == Verdict::Pass),
    ];
    let mut tally = Vec::new();
    for (title, pick) in groups {
        let group: Vec<&Graded> = graded.iter().filter(|g| pick(&g.verdict)).collect();
        tally.push(format!("{} {title}", group.len()));
        if group.is_empty() {
            continue;
        }
        let _ = writeln!(out, " {title}:");
        for g in group {
            let _ = writeln!(out, "{}", check_line("", g));
        }
    }
    let _ = writeln!(out, " {}", tally.join(", "));
    out
}

/// A word as a shell reads it back: bare when plain, else single-quoted.
fn shell_word(word: &str) -> String {
    let plain = |c: char| c.is_ascii_alphanumeric() || "-_./=:@%+,".contains(c);
    if !word.is_empty() && word.chars().all(plain) {
        word.to_owned()
    } else {
        format!("'{}'", word.replace('\'', r"'\''"))
    }
}
