//! The wire checks of a case file (its `wire` list): the shape people write, with exactly one
//! rule member among several, and the checked form it becomes.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::model::WireStream;
use crate::model::check::{WireExpectation, WireRule};

/// A check on what the fake received from the client: one line naming it, exactly one rule
/// (`first`, `sequence`, `sent` with an optional `count`, `not_sent`, `every`, or `spaced`
/// with its `min_ms`; each with an optional `filter`), and the broken clients that must fail
/// it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(try_from = "RawWireCheck", into = "RawWireCheck")]
#[schemars(with = "RawWireCheck")]
pub struct WireCheck {
    /// One line saying what is checked; it names the check in reports.
    pub check: String,
    /// What it looks at and the rule.
    pub expectation: WireExpectation,
    /// The requirement this check cites, if not the case's.
    pub requirement: Option<String>,
    /// The broken clients that must fail this check.
    pub broken_by: Vec<String>,
}

/// A check on what the fake received from the client. Exactly one of `first`, `sequence`,
/// `sent`, `not_sent`, `every` and `spaced` is given. Matchers may bind values with
/// `{"$capture": "name"}` and compare later ones with `{"$same": "name"}`.
#[derive(Debug, Clone, Default, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields, rename = "WireCheck")]
pub struct RawWireCheck {
    /// One line saying what is checked; it names the check in reports.
    check: String,
    /// What is checked: the JSON-RPC messages (default), or the HTTP requests, each seen as
    /// `{"method", "path", "headers": {lower-case name: value}, "status"}` where `status` is the
    /// fake's answer and an `authorization` header reads `Bearer [valid]` or `[invalid]`; with a
    /// modern or dual fake, a response stream closed before its answer shows among them, in
    /// order, as `{"stream_closed": <request id>}`; each TCP connection the client
    /// opened shows, as it was accepted, as `{"connected": true}`. Or `canary`: the
    /// connections the trial's canary listener received, each `{"connected": true,
    /// "request": <first line the client sent>}`, for a script that names `{{canary}}`
    /// (the runner's loopback listener, written there as `http://127.0.0.1:PORT`), and in a
    /// case with `"network": "isolated"` the connections the namespace's canaries accepted,
    /// each `{"connected": true, "address": "169.254.169.254:443", "request": "[TLS]"}`
    /// (`request`: the first line of plain text, `[TLS]` for a TLS handshake). Or
    /// `client_output`: what the client printed, each stdout line and each line of the last
    /// 8 KiB of its stderr, as `{"stream": "stdout"|"stderr", "line": L}`.
    #[serde(default, skip_serializing_if = "is_messages")]
    on: WireStream,
    /// Only items matching this are considered (all, if omitted), whatever the rule.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    filter: Option<Value>,
    /// The very first messages the client sent match these, one for one, in order.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    first: Option<Vec<Value>>,
    /// Messages matching these were sent in this order (others may come between).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    sequence: Option<Vec<Value>>,
    /// A message matching this was sent (exactly `count` times, if given).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    sent: Option<Value>,
    /// With `sent`: how many matching messages there must be.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    count: Option<usize>,
    /// No message matching this was sent.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    not_sent: Option<Value>,
    /// Every item considered matches this (and there is at least one).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    every: Option<Value>,
    /// Messages (`on: messages` only) matching this arrived spaced out: each at least
    /// `min_ms` after the one before, by the fake's clock; fewer than two pass. E.g. a
    /// client's `tasks/get` polls honouring the poll interval.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    spaced: Option<Value>,
    /// With `spaced`: the least gap between two matching messages, in milliseconds (scaled
    /// with the trial, like every duration).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    min_ms: Option<u64>,
    /// Check only in trials of these revisions (of the case's `revisions`); all if omitted.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    revisions: Vec<String>,
    /// The rule binds only if an item matching this was sent (among those `filter` keeps);
    /// otherwise the check passes: for something optional that has rules once the client
    /// takes it up (a standalone GET stream, once opened and cut, is opened again).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    when: Option<Value>,
    /// The server whose messages are judged: a name of the case's `servers`. Omitted: the
    /// main server (`server`), whatever other servers the case has.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    server: Option<String>,
    /// The id of the requirement this check cites, if not the case's.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    requirement: Option<String>,
    /// The deliberately broken clients that must fail this check (see a step's `broken_by`).
    #[serde(default)]
    broken_by: Vec<String>,
}

fn is_messages(on: &WireStream) -> bool {
    *on == WireStream::Messages
}

impl TryFrom<RawWireCheck> for WireCheck {
    type Error = String;

    fn try_from(raw: RawWireCheck) -> Result<Self, String> {
        let rule = match (
            raw.first,
            raw.sequence,
            raw.sent,
            raw.not_sent,
            raw.every,
            raw.spaced,
        ) {
            (Some(ms), None, None, None, None, None) => WireRule::First(ms),
            (None, Some(ms), None, None, None, None) => WireRule::Sequence(ms),
            (None, None, Some(matcher), None, None, None) => WireRule::Sent {
                matcher,
                count: raw.count,
            },
            (None, None, None, Some(m), None, None) => WireRule::NotSent(m),
            (None, None, None, None, Some(m), None) => WireRule::Every(m),
            (None, None, None, None, None, Some(matcher)) => {
                let Some(min_ms) = raw.min_ms else {
                    return Err("`spaced` needs `min_ms`: the least gap, in milliseconds".into());
                };
                if raw.on != WireStream::Messages {
                    return Err(
                        "`spaced` judges messages: only the fake's received messages carry \
                         their arrival time (leave `on` out)"
                            .into(),
                    );
                }
                WireRule::Spaced { matcher, min_ms }
            }
            _ => {
                return Err(
                    "expected exactly one of `first`, `sequence`, `sent`, `not_sent`, `every` \
                     and `spaced`"
                        .into(),
                );
            }
        };
        if raw.min_ms.is_some() && !matches!(rule, WireRule::Spaced { .. }) {
            return Err("`min_ms` goes with `spaced`".into());
        }
        if raw.count.is_some() && !matches!(rule, WireRule::Sent { .. }) {
            return Err("`count` goes with `sent`".into());
        }
        Ok(WireCheck {
            check: raw.check,
            expectation: WireExpectation {
                on: raw.on,
                filter: raw.filter,
                rule,
                revisions: raw.revisions,
                when: raw.when,
                server: raw.server,
            },
            requirement: raw.requirement,
            broken_by: raw.broken_by,
        })
    }
}

impl From<WireCheck> for RawWireCheck {
    fn from(w: WireCheck) -> Self {
        let e = w.expectation;
        let mut raw = RawWireCheck {
            check: w.check,
            on: e.on,
            filter: e.filter,
            revisions: e.revisions,
            when: e.when,
            server: e.server,
            requirement: w.requirement,
            broken_by: w.broken_by,
            ..RawWireCheck::default()
        };
        match e.rule {
            WireRule::First(ms) => raw.first = Some(ms),
            WireRule::Sequence(ms) => raw.sequence = Some(ms),
            WireRule::Sent { matcher, count } => {
                raw.sent = Some(matcher);
                raw.count = count;
            }
            WireRule::NotSent(m) => raw.not_sent = Some(m),
            WireRule::Every(m) => raw.every = Some(m),
            WireRule::Spaced { matcher, min_ms } => {
                raw.spaced = Some(matcher);
                raw.min_ms = Some(min_ms);
            }
        }
        raw
    }
}
