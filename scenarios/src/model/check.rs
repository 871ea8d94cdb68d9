//! A case's checks once resolved: what each judges (a plan step's outcome, the wire, the
//! server's lifecycle), the requirement it cites, and the broken clients that must fail it.

use serde_json::Value;

use super::{ErrorKind, LifecycleEvent, Requirement, Transport, WireStream};
use crate::matcher;

/// One check of a case.
#[derive(Debug, Clone)]
pub struct CaseCheck {
    /// Its name in reports: the `check` line of a wire or lifecycle check, or for a step
    /// expectation `step N (op) succeeds …` / `fails with …`.
    pub name: String,
    /// The requirement it cites (the case's unless the check names its own); its level
    /// grades the check.
    pub requirement: Requirement,
    /// The deliberately broken clients that must fail it.
    pub broken_by: Vec<BrokenBy>,
    /// What it judges.
    pub rule: Rule,
}

/// What a check judges.
#[derive(Debug, Clone)]
pub enum Rule {
    /// What plan step `index` reported.
    Step {
        /// Index of the plan step, from 0.
        index: usize,
        /// What it must report.
        outcome: StepOutcome,
        /// When set, the check binds only once the client sent a message matching it (what the
        /// step reports about an exchange that never happened judges nothing).
        when: Option<Value>,
    },
    /// What the fake received.
    Wire(WireExpectation),
    /// The stdio server process's lifecycle events, exactly and in order.
    Lifecycle(Vec<LifecycleEvent>),
}

/// What a step must report.
#[derive(Debug, Clone, PartialEq)]
pub enum StepOutcome {
    /// Success, with an `ok` object matching this matcher (`{}` accepts any success).
    Ok(Value),
    /// Failure with this error.
    Error(ErrorExpectation),
    /// Either: success matching `ok`, or failure with one of `error`'s kinds. For a behaviour
    /// the requirement leaves open between going on and refusing (a `null` cursor, which no
    /// schema allows, may end the listing or be refused).
    Either {
        /// The success that is right.
        ok: Value,
        /// The failure that is right too.
        error: ErrorExpectation,
    },
}

/// The error a step must report.
#[derive(Debug, Clone, PartialEq)]
pub struct ErrorExpectation {
    /// The kinds that are right (one, or several equally right ones); never empty. The first
    /// is the main kind, the one `code` and `status` belong to.
    pub kinds: Vec<ErrorKind>,
    /// The JSON-RPC error code that caused it, when one did; required only when the first
    /// kind is reported.
    pub code: Option<i64>,
    /// With `http_status`: the HTTP status; required only when the first kind is reported.
    pub status: Option<u16>,
}

impl ErrorExpectation {
    /// `error kind K (code C, status S) or K2 …`, as check names and reports show it.
    pub fn describe(&self) -> String {
        let first = self.kinds.first().map_or("?", |k| k.as_str());
        let mut extra: Vec<String> = Vec::new();
        extra.extend(self.code.map(|c| format!("code {c}")));
        extra.extend(self.status.map(|s| format!("status {s}")));
        let mut shown = match extra.is_empty() {
            true => format!("error kind {first}"),
            false => format!("error kind {first} ({})", extra.join(", ")),
        };
        for other in self.kinds.iter().skip(1) {
            shown.push_str(" or ");
            shown.push_str(other.as_str());
        }
        shown
    }
}

impl StepOutcome {
    /// The check's name for plan step `index` doing `op`.
    pub fn check_name(&self, index: usize, op: &str) -> String {
        match self {
            StepOutcome::Ok(m) if m.as_object().is_some_and(|m| m.is_empty()) => {
                format!("step {index} ({op}) succeeds")
            }
            StepOutcome::Ok(m) => {
                format!("step {index} ({op}) succeeds with {}", matcher::short(m))
            }
            StepOutcome::Error(e) => format!("step {index} ({op}) fails with {}", e.describe()),
            StepOutcome::Either { ok, error } => {
                let ok = StepOutcome::Ok(ok.clone()).check_name(index, op);
                format!("{ok}, or fails with {}", error.describe())
            }
        }
    }
}

/// A check on what the fake received from the client.
#[derive(Debug, Clone, PartialEq)]
pub struct WireExpectation {
    /// Messages or HTTP requests.
    pub on: WireStream,
    /// Only items matching this are considered (all, if `None`), whatever the rule.
    pub filter: Option<Value>,
    /// The rule the items must follow.
    pub rule: WireRule,
    /// Check only in trials of these revisions; all if empty.
    pub revisions: Vec<String>,
    /// The rule binds only when an item matching this was sent (of those `filter` keeps);
    /// otherwise the check passes. For behaviour that is optional as a whole but has rules
    /// once taken up (a standalone GET stream that, once opened and cut, is reopened).
    pub when: Option<Value>,
    /// The extra server (a name of the case's `servers`) whose transcript is judged; `None`:
    /// the main server.
    pub server: Option<String>,
}

/// The one rule of a wire check.
#[derive(Debug, Clone, PartialEq)]
pub enum WireRule {
    /// The very first items match these, one for one, in order.
    First(Vec<Value>),
    /// Items matching these came in this order (others may come between).
    Sequence(Vec<Value>),
    /// An item matching this came (exactly `count` times, if given).
    Sent {
        /// The matcher.
        matcher: Value,
        /// How many matching items there must be.
        count: Option<usize>,
    },
    /// No item matching this came.
    NotSent(Value),
    /// Every item considered matches this (and there is at least one).
    Every(Value),
    /// Consecutive messages matching `matcher` arrived at least `min_ms` apart, as the fake's
    /// clock saw them (`at_ms`); fewer than two such messages pass.
    Spaced {
        /// The matcher.
        matcher: Value,
        /// The least gap, in milliseconds as the case states it: the judge scales it by the
        /// trial's time scale.
        min_ms: u64,
    },
}

impl WireRule {
    /// Every matcher of the rule.
    pub fn matchers(&self) -> Vec<&Value> {
        match self {
            WireRule::First(ms) | WireRule::Sequence(ms) => ms.iter().collect(),
            WireRule::Sent { matcher, .. }
            | WireRule::NotSent(matcher)
            | WireRule::Every(matcher)
            | WireRule::Spaced { matcher, .. } => {
                vec![matcher]
            }
        }
    }
}

/// A broken client that must fail a check, and the trial it must fail it in.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BrokenBy {
    /// A `--defect` of the reference driver, or the name of a double (`runner/tests/doubles.json`).
    pub client: String,
    /// The transport of the trial; `None`: the case's first transport where the check applies.
    pub transport: Option<Transport>,
    /// The revision of the trial, for a case with `revisions`; `None`: the first one where the
    /// check applies.
    pub revision: Option<String>,
    /// The variant of the trial, for a case with `variants`; `None`: the first.
    pub variant: Option<String>,
    /// `@*`: every trial (revision and variant) on the transport where the check is made,
    /// not only the first.
    pub every: bool,
    /// The entry as written.
    pub written: String,
}

impl BrokenBy {
    /// Parses `client[@transport[@revision-or-variant…]]`; `revisions` and `variants` are the
    /// case's, so each part after the transport names one of them, or is `*`: every revision
    /// and variant.
    pub fn parse(
        text: &str,
        revisions: &[String],
        variants: &[String],
    ) -> Result<BrokenBy, String> {
        let mut parts = text.split('@');
        let client = parts.next().unwrap_or_default();
        let kebab = !client.is_empty()
            && client
                .chars()
                .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '-');
        if !kebab {
            return Err(format!(
                "{text:?}: expected a defect or double name in kebab-case, optionally followed by @stdio or @https"
            ));
        }
        let mut out = BrokenBy {
            client: client.to_owned(),
            transport: None,
            revision: None,
            variant: None,
            every: false,
            written: text.to_owned(),
        };
        if let Some(t) = parts.next() {
            out.transport = Some(match t {
                "stdio" => Transport::Stdio,
                "https" => Transport::Https,
                other => {
                    return Err(format!(
                        "{text:?}: expected the transport `stdio` or `https` after the first @, found {other:?}"
                    ));
                }
            });
        }
        for part in parts {
            if part == "*" && !out.every {
                out.every = true;
            } else if revisions.iter().any(|r| r == part) && out.revision.is_none() {
                out.revision = Some(part.to_owned());
            } else if variants.iter().any(|v| v == part) && out.variant.is_none() {
                out.variant = Some(part.to_owned());
            } else {
                return Err(format!(
                    "{text:?}: {part:?} is none of the case's revisions {revisions:?} or variants {variants:?}, nor `*` (all of them)"
                ));
            }
        }
        Ok(out)
    }
}
