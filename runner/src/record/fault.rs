//! Faults the recorder applies to live traffic (`--fault SPEC`, repeatable), the case
//! model's server faults played on a real server's answers.
//!
//! `SPEC` is `KIND[=VALUE][:METHOD][@N]`: `:METHOD` limits the fault to answers of requests of
//! that method (over HTTP, `status` and `session-loss` also take `GET` or `DELETE`, the
//! request's own verb), `@N` to the N-th such answer (1-based; default every one, except
//! `session-loss`, which is once: `@1`). Every fault applied is recorded (a `fault` record
//! naming the spec, besides what the client saw: a raw line, a status, a rewritten cursor).

use std::sync::atomic::{AtomicU64, Ordering};

/// What a fault does.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    /// Holds the answer this many milliseconds.
    Delay(u64),
    /// A line (stdio) or SSE event (HTTP) that is not JSON, ahead of the answer; over HTTP a
    /// JSON answer's body gets the line in front of it.
    Malformed,
    /// stdio: the answer is dropped and the client's stdout closed. HTTP: the response body
    /// is cut before the answer.
    Cut,
    /// A list result's `nextCursor` rewritten to the cursor its request carried (a first
    /// page, asked for without a cursor, is left as it is: the next page then repeats it).
    RepeatCursor,
    /// HTTP: the request answered with this status (500–599), not forwarded.
    Status(u16),
    /// HTTP: a request carrying `Mcp-Session-Id` answered 404, not forwarded.
    SessionLoss,
}

impl Kind {
    /// Whether the fault needs HTTP (it makes no sense over stdio).
    pub fn http_only(self) -> bool {
        matches!(self, Kind::Status(_) | Kind::SessionLoss)
    }
}

/// One `--fault`.
#[derive(Debug)]
pub struct Fault {
    /// What it does.
    pub kind: Kind,
    /// Only answers to requests of this method (or requests of this HTTP verb).
    pub method: Option<String>,
    /// Only the N-th matching answer.
    pub nth: Option<u64>,
    /// The spec as given (what the transcript names).
    pub spec: String,
    seen: AtomicU64,
}

const EXPECTED: &str = "expected KIND[=VALUE][:METHOD][@N] with KIND one of delay=MS, malformed, cut, repeat-cursor, status=5xx, session-loss (e.g. `delay=500:tools/call@2`)";

/// Parses one `--fault` value; the error names the value and what was expected.
pub fn parse(spec: &str) -> Result<Fault, String> {
    let bad = |why: &str| format!("--fault {spec:?}: {why}; {EXPECTED}");
    let (rest, nth) = match spec.rsplit_once('@') {
        Some((rest, n)) => match n.parse::<u64>() {
            Ok(n) if n >= 1 => (rest, Some(n)),
            _ => return Err(bad(&format!("@{n} is not a positive whole number"))),
        },
        None => (spec, None),
    };
    let (rest, method) = match rest.split_once(':') {
        Some((_, "")) => return Err(bad("the method after `:` is empty")),
        Some((rest, method)) => (rest, Some(method.to_owned())),
        None => (rest, None),
    };
    let (name, value) = match rest.split_once('=') {
        Some((name, value)) => (name, Some(value)),
        None => (rest, None),
    };
    let number = |what: &str| -> Result<u64, String> {
        value
            .ok_or_else(|| bad(&format!("{name} needs ={what}")))?
            .parse::<u64>()
            .map_err(|_| bad(&format!("{name}={} is not {what}", value.unwrap_or(""))))
    };
    let no_value = |kind: Kind| match value {
        Some(v) => Err(bad(&format!("{name} takes no value (got ={v})"))),
        None => Ok(kind),
    };
    let kind = match name {
        "delay" => Kind::Delay(number("a number of milliseconds")?),
        "status" => match number("an HTTP status 500-599")? {
            status @ 500..=599 => Kind::Status(status as u16),
            other => return Err(bad(&format!("status={other} is not a 5xx status"))),
        },
        "malformed" => no_value(Kind::Malformed)?,
        "cut" => no_value(Kind::Cut)?,
        "repeat-cursor" => no_value(Kind::RepeatCursor)?,
        "session-loss" => no_value(Kind::SessionLoss)?,
        "" => return Err(bad("no fault kind")),
        other => return Err(bad(&format!("unknown fault kind {other:?}"))),
    };
    let nth = nth.or((kind == Kind::SessionLoss).then_some(1));
    Ok(Fault {
        kind,
        method,
        nth,
        spec: spec.to_owned(),
        seen: AtomicU64::new(0),
    })
}

impl Fault {
    /// Counts an answer (or HTTP request) of `method` and says whether the fault applies to
    /// it. Call once per answer, for each fault.
    pub fn applies(&self, method: &str) -> bool {
        if self.method.as_deref().is_some_and(|m| m != method) {
            return false;
        }
        let n = self.seen.fetch_add(1, Ordering::SeqCst) + 1;
        self.nth.is_none_or(|nth| nth == n)
    }
}

/// The faults of one recording.
#[derive(Debug, Default)]
pub struct Faults(pub Vec<Fault>);

impl Faults {
    /// Parses every spec; `http` false refuses the HTTP-only kinds.
    pub fn parse(specs: &[String], http: bool) -> Result<Faults, String> {
        let mut all = Vec::new();
        for spec in specs {
            let fault = parse(spec)?;
            if !http && fault.kind.http_only() {
                return Err(format!(
                    "--fault {spec:?}: status and session-loss apply to HTTP only (record --upstream URL)"
                ));
            }
            all.push(fault);
        }
        Ok(Faults(all))
    }

    /// The faults that apply to this answer of `method` among those `pick` selects (each
    /// counted), in the order given.
    pub fn take(&self, method: &str, pick: impl Fn(Kind) -> bool) -> Vec<&Fault> {
        self.0
            .iter()
            .filter(|f| pick(f.kind))
            .filter(|f| f.applies(method))
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_every_kind_with_method_and_count() {
        let f = parse("delay=250:tools/call@2").unwrap();
        assert_eq!(
            (f.kind, f.method.as_deref(), f.nth),
            (Kind::Delay(250), Some("tools/call"), Some(2))
        );
        assert!(!f.applies("tools/call") && !f.applies("tools/list") && f.applies("tools/call"));
        assert!(!f.applies("tools/call"));
        assert_eq!(parse("status=503").unwrap().kind, Kind::Status(503));
        assert_eq!(parse("session-loss").unwrap().nth, Some(1));
        assert_eq!(parse("repeat-cursor:tools/list").unwrap().nth, None);
        let every = parse("malformed").unwrap();
        assert!(every.applies("a") && every.applies("b"));
    }

    #[test]
    fn errors_name_the_value_and_what_was_expected() {
        for (spec, why) in [
            ("delay", "delay needs =a number of milliseconds"),
            ("delay=soon", "delay=soon is not a number"),
            ("status=404", "not a 5xx status"),
            ("cut=1", "cut takes no value"),
            ("explode", "unknown fault kind \"explode\""),
            ("cut@0", "@0 is not a positive"),
            ("cut:", "method after `:` is empty"),
        ] {
            let e = parse(spec).unwrap_err();
            assert!(
                e.contains(&format!("{spec:?}")) && e.contains(why) && e.contains("KIND[=VALUE]"),
                "{e}"
            );
        }
        let e = Faults::parse(&["status=500".into()], false).unwrap_err();
        assert!(e.contains("HTTP only"), "{e}");
    }
}
