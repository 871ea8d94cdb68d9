//! Reading the client's outcome lines: one JSON object per plan step, in order, as the
//! driver contract defines them. Anything else a client prints on stdout is garbage and is
//! reported with the line that showed it.

use serde_json::Value;

use mcp_harness_scenarios::model::{ErrorKind, Step};

/// What one step reported.
#[derive(Debug, Clone, PartialEq)]
pub enum Reported {
    /// `ok`, with its object.
    Ok(Value),
    /// `error`, with its kind and the JSON-RPC code if any.
    Error {
        /// The kind, from the contract's vocabulary.
        kind: ErrorKind,
        /// The JSON-RPC error code that caused it.
        code: Option<i64>,
        /// The HTTP status, with `http_status`.
        status: Option<u16>,
    },
}

impl Reported {
    /// A one-line rendering for Expected/Actual output.
    pub fn describe(&self) -> String {
        match self {
            Reported::Ok(v) => format!("ok {}", mcp_harness_scenarios::matcher::short(v)),
            Reported::Error { kind, code, status } => describe_error(*kind, *code, *status),
        }
    }
}

/// `error kind K (code C, status S)`, for expectations and reports alike.
pub fn describe_error(kind: ErrorKind, code: Option<i64>, status: Option<u16>) -> String {
    let mut extra: Vec<String> = Vec::new();
    extra.extend(code.map(|c| format!("code {c}")));
    extra.extend(status.map(|s| format!("status {s}")));
    match extra.is_empty() {
        true => format!("error kind {}", kind.as_str()),
        false => format!("error kind {} ({})", kind.as_str(), extra.join(", ")),
    }
}

/// The outcome lines of one trial, by step.
#[derive(Debug, Clone, Default)]
pub struct Outcomes {
    /// What each step reported; `None` where no valid line came.
    pub by_step: Vec<Option<Reported>>,
    /// The first problem with the lines, if any: what was expected and what came.
    pub problem: Option<(String, String)>,
    /// The `message` of each step's `error`, where the client gave one (escaped, bounded).
    pub messages: Vec<Option<String>>,
    /// What the adapter declared its library cannot do (`"limits"` on the connect line).
    pub limits: Vec<String>,
}

impl Outcomes {
    /// Whether any step answered `unsupported_op`.
    pub fn has_unsupported_op(&self) -> bool {
        self.by_step.iter().flatten().any(|r| {
            matches!(
                r,
                Reported::Error {
                    kind: ErrorKind::UnsupportedOp,
                    ..
                }
            )
        })
    }
}

/// Parses the stdout lines against the plan.
pub fn parse(lines: &[String], plan: &[Step]) -> Outcomes {
    let mut out = Outcomes {
        by_step: vec![None; plan.len()],
        problem: None,
        messages: vec![None; plan.len()],
        limits: Vec::new(),
    };
    for (i, line) in lines.iter().enumerate() {
        let Some(step) = plan.get(i) else {
            out.problem = Some((
                format!("exactly {} outcome lines, one per step", plan.len()),
                format!("an extra line {}: {}", i + 1, cut(line)),
            ));
            return out;
        };
        match parse_line(line, i, step.op()) {
            Ok(reported) => {
                out.messages[i] = error_message(line);
                if matches!(step, Step::Connect { .. }) {
                    out.limits.extend(limits(line));
                }
                out.by_step[i] = Some(reported);
            }
            Err(expected) => {
                let actual = match serde_json::from_str::<Value>(line) {
                    Ok(_) => format!("line {}: {}", i + 1, cut(line)),
                    Err(_) => format!("garbage on line {} (not JSON): {}", i + 1, cut(line)),
                };
                out.problem = Some((expected, actual));
                return out;
            }
        }
    }
    if lines.len() < plan.len() {
        out.problem = Some((
            format!("{} outcome lines, one per step", plan.len()),
            format!("{} lines", lines.len()),
        ));
    }
    out
}

fn parse_line(line: &str, index: usize, op: &str) -> Result<Reported, String> {
    let expected_shape = format!(
        r#"{{"step":{index},"op":"{op}","ok":{{…}}}} or {{"step":{index},"op":"{op}","error":{{"kind":…}}}}"#
    );
    let value: Value =
        serde_json::from_str(line).map_err(|_| format!("a JSON line {expected_shape}"))?;
    if value.get("step").and_then(Value::as_u64) != Some(index as u64)
        || value.get("op").and_then(Value::as_str) != Some(op)
    {
        return Err(expected_shape);
    }
    match (value.get("ok"), value.get("error")) {
        (Some(ok @ Value::Object(_)), None) => Ok(Reported::Ok(ok.clone())),
        (None, Some(Value::Object(error))) => {
            let kind = error
                .get("kind")
                .cloned()
                .and_then(|k| serde_json::from_value::<ErrorKind>(k).ok())
                .ok_or_else(|| "an error `kind` from the contract's vocabulary".to_owned())?;
            let code = error.get("code").and_then(Value::as_i64);
            let status = error
                .get("status")
                .and_then(Value::as_u64)
                .and_then(|s| u16::try_from(s).ok());
            Ok(Reported::Error { kind, code, status })
        }
        _ => Err(expected_shape),
    }
}

/// The names in a line's `"limits"` array: what the adapter says its library cannot do.
fn limits(line: &str) -> Vec<String> {
    let Ok(value) = serde_json::from_str::<Value>(line) else {
        return Vec::new();
    };
    let names = value.get("limits").and_then(Value::as_array);
    names
        .into_iter()
        .flatten()
        .filter_map(Value::as_str)
        .map(|n| super::output::printable(n, false))
        .collect()
}

/// The longest error message kept from an outcome line, in characters.
const MESSAGE_CAP: usize = 500;

/// The `error.message` of an outcome line, made printable (the JSON string may encode control
/// characters the raw line did not show) and cut to [`MESSAGE_CAP`] characters.
fn error_message(line: &str) -> Option<String> {
    let value: Value = serde_json::from_str(line).ok()?;
    let message = value.get("error")?.get("message")?.as_str()?;
    let text = super::output::printable(message, false);
    Some(match text.chars().count() > MESSAGE_CAP {
        true => format!("{}...", text.chars().take(MESSAGE_CAP).collect::<String>()),
        false => text,
    })
}

/// A short preview of a line (already escaped by the reader): its first 120 characters.
fn cut(line: &str) -> String {
    if line.chars().count() > 120 {
        format!(
            "{}... ({} bytes)",
            line.chars().take(117).collect::<String>(),
            line.len()
        )
    } else {
        line.to_owned()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn plan() -> Vec<Step> {
        vec![
            Step::Connect {
                handlers: None,
                tasks: None,
                trace_context: None,
            },
            Step::ListTools,
        ]
    }

    #[test]
    fn the_connect_line_may_declare_limits() {
        let lines = vec![
            r#"{"step":0,"op":"connect","ok":{},"limits":["choose_version"]}"#.to_owned(),
            r#"{"step":1,"op":"list_tools","ok":{"tools":[]},"limits":["ignored"]}"#.to_owned(),
        ];
        let out = parse(&lines, &plan());
        assert!(out.problem.is_none());
        assert_eq!(out.limits, vec!["choose_version".to_owned()]);
    }

    #[test]
    fn good_lines_parse() {
        let lines = vec![
            r#"{"step":0,"op":"connect","ok":{"protocolVersion":"2025-03-26"}}"#.to_owned(),
            r#"{"step":1,"op":"list_tools","error":{"kind":"repeated_cursor","message":"x"}}"#
                .to_owned(),
        ];
        let out = parse(&lines, &plan());
        assert!(out.problem.is_none());
        assert_eq!(out.messages, vec![None, Some("x".to_owned())]);
        assert_eq!(
            out.by_step[1],
            Some(Reported::Error {
                kind: ErrorKind::RepeatedCursor,
                code: None,
                status: None,
            })
        );
    }

    #[test]
    fn error_messages_are_kept_printable_and_bounded() {
        let line = |message: &str| {
            vec![
                serde_json::json!({"step": 0, "op": "connect", "error": {"kind": "timeout", "message": message}})
                    .to_string(),
            ]
        };
        let out = parse(&line("a\u{1b}[2Jb"), &plan());
        assert_eq!(out.messages[0].as_deref(), Some("a\\u{1b}[2Jb"));
        let long = "m".repeat(2000);
        let out = parse(&line(&long), &plan());
        assert_eq!(
            out.messages[0].as_ref().unwrap().chars().count(),
            MESSAGE_CAP + 3
        );
    }

    #[test]
    fn garbage_missing_and_unknown_kinds_are_problems() {
        let garbage = vec!["hello".to_owned()];
        assert!(
            parse(&garbage, &plan())
                .problem
                .unwrap()
                .1
                .contains("garbage on line 1 (not JSON): hello")
        );
        let short = vec![r#"{"step":0,"op":"connect","ok":{}}"#.to_owned()];
        assert!(parse(&short, &plan()).problem.is_some());
        let unknown = vec![r#"{"step":0,"op":"connect","error":{"kind":"oops"}}"#.to_owned()];
        assert!(parse(&unknown, &plan()).problem.is_some());
        let wrong_op = vec![r#"{"step":0,"op":"close","ok":{}}"#.to_owned()];
        assert!(parse(&wrong_op, &plan()).problem.is_some());
    }
}
