//! One timing model: every duration a resolved case uses derives from the durations its file
//! states (or the named budgets, [`super::file::DEFAULT_TIMEOUT_MS`],
//! [`super::file::DEFAULT_SHUTDOWN_GRACE_MS`] and [`super::file::DEFAULT_DEADLINE_MS`], where
//! it states none), multiplied by one run-wide factor F (see [`TimeScale`]). Scaling every
//! duration by the same factor keeps every relation between them — a delay longer than the
//! timeout still outlasts it, a cancel still comes before the answer, the deadline still
//! covers the plan — while a slow machine (or a client that starts slowly, as Python and Node
//! do) gets room in proportion, so a slow start never turns into a verdict.
//!
//! The scaled fields ([`SCALED_FIELDS`]), all in milliseconds:
//! - the case's `timeout_ms` (handed to the client, `MCP_HARNESS_TIMEOUT_MS`),
//!   `shutdown_grace_ms` (`MCP_HARNESS_SHUTDOWN_GRACE_MS`) and `deadline_ms` (the trial's
//!   wall-clock limit, and the lifecycle check "exit within N ms");
//! - the fake's `handlers[].delay_ms`, `handlers[].sends[].delay_ms`,
//!   `handlers[].faults.drip_ms`, `handlers[].faults.duplicate_after_ms`, `http.retry_ms`
//!   and `http.keepalive_ms` (both fakes: the runner scales the script the HTTPS fake plays
//!   in-process, and hands the stdio fake `--time-scale F`);
//! - a task's `phases[].ms`, `phases[].settles_ms` and `poll_interval_ms` (not its `ttl_ms`,
//!   a value the client sees: [`UNSCALED_FIELDS`]);
//! - the `spaced` wire rule's `min_ms`, scaled by the judge ([`JUDGED_FIELDS`]);
//! - the plan's `call_tool.cancel_after_ms`, `call_tool.max_timeout_ms` and `sleep.ms` (in
//!   `MCP_HARNESS_PLAN`).
//!
//! A unit test walks the case schema and fails when a field named `*_ms` (or `ms`) appears
//! that this list does not hold, and another checks that scaling doubles every one of them.
//! The fakes' own pacing constants (SSE keep-alives, the cut stream's gaps) are not case
//! durations and are not scaled.

use serde::{Deserialize, Serialize};

use super::{Scenario, ServerScript, Step};

/// Every field of the case model that holds a duration, by its name in case files. Each is
/// multiplied by the time scale.
pub const SCALED_FIELDS: &[&str] = &[
    "timeout_ms",
    "shutdown_grace_ms",
    "deadline_ms",
    "delay_ms",
    "drip_ms",
    "duplicate_after_ms",
    "cancel_after_ms",
    "max_timeout_ms",
    "retry_ms",
    "keepalive_ms",
    "ms",
    "settles_ms",
    "poll_interval_ms",
];

/// Duration fields a check compares with what it saw (the `spaced` wire rule's `min_ms`):
/// the judge multiplies them by the trial's time scale ([`Scenario::time_scale`]).
pub const JUDGED_FIELDS: &[&str] = &["min_ms"];

/// Fields named like durations that are never scaled: values the client sees and may
/// compare, not waits (a task's `ttl_ms`).
pub const UNSCALED_FIELDS: &[&str] = &["ttl_ms"];

/// The run-wide factor every case duration is multiplied by: 1 on an idle machine, more on a
/// loaded or slow one. Between [`TimeScale::MIN`] and [`TimeScale::MAX`].
#[derive(Debug, Clone, Copy, PartialEq, PartialOrd, Serialize, Deserialize)]
#[serde(transparent)]
pub struct TimeScale(f64);

impl Default for TimeScale {
    fn default() -> TimeScale {
        TimeScale::ONE
    }
}

impl TimeScale {
    /// No scaling.
    pub const ONE: TimeScale = TimeScale(1.0);
    /// The smallest factor accepted (below 1 only to test the harness itself).
    pub const MIN: f64 = 0.5;
    /// The largest factor accepted.
    pub const MAX: f64 = 20.0;

    /// A factor, checked to lie in `MIN..=MAX`.
    pub fn new(factor: f64) -> Result<TimeScale, String> {
        if factor.is_finite() && (Self::MIN..=Self::MAX).contains(&factor) {
            Ok(TimeScale(factor))
        } else {
            Err(format!(
                "the time scale must be a number from {} to {}, found {factor}",
                Self::MIN,
                Self::MAX
            ))
        }
    }

    /// Parses a factor as given on a command line (`2`, `1.5`).
    pub fn parse(text: &str) -> Result<TimeScale, String> {
        let factor: f64 = text
            .trim()
            .parse()
            .map_err(|_| format!("the time scale must be a number, found {text:?}"))?;
        TimeScale::new(factor)
    }

    /// The factor.
    pub fn factor(self) -> f64 {
        self.0
    }

    /// Whether this is no scaling at all.
    pub fn is_one(self) -> bool {
        self.0 == 1.0
    }

    /// `ms` scaled, rounded to the nearest millisecond (0 stays 0; saturates).
    pub fn ms(self, ms: u64) -> u64 {
        let scaled = (ms as f64 * self.0).round();
        if scaled >= u64::MAX as f64 {
            u64::MAX
        } else {
            scaled as u64
        }
    }

    /// The inverse of [`TimeScale::ms`] (exact for factors of at least 1): the duration as
    /// the case states it, from the scaled one.
    pub fn unscaled_ms(self, ms: u64) -> u64 {
        (ms as f64 / self.0).round() as u64
    }
}

impl std::fmt::Display for TimeScale {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}", self.0)
    }
}

impl Scenario {
    /// This scenario with every duration ([`SCALED_FIELDS`]) multiplied by `scale`, and
    /// `time_scale` recording it. Scaling an already scaled scenario multiplies again.
    pub fn scaled(mut self, scale: TimeScale) -> Scenario {
        self.timeout_ms = scale.ms(self.timeout_ms);
        self.shutdown_grace_ms = scale.ms(self.shutdown_grace_ms);
        self.deadline_ms = scale.ms(self.deadline_ms);
        self.server.scale(scale);
        for server in self.servers.values_mut() {
            server.scale(scale);
        }
        for step in &mut self.plan {
            step.scale(scale);
        }
        self.time_scale = TimeScale(self.time_scale.0 * scale.0);
        self
    }
}

impl ServerScript {
    /// Multiplies every duration of the script (handler delays, drips, duplicate delays).
    pub fn scale(&mut self, scale: TimeScale) {
        self.http.retry_ms = self.http.retry_ms.map(|ms| scale.ms(ms));
        self.http.keepalive_ms = self.http.keepalive_ms.map(|ms| scale.ms(ms));
        for task in &mut self.tasks {
            task.scale(scale);
        }
        for handler in &mut self.handlers {
            handler.delay_ms = scale.ms(handler.delay_ms);
            for send in &mut handler.sends {
                send.delay_ms = scale.ms(send.delay_ms);
            }
            if let Some(faults) = &mut handler.faults {
                faults.drip_ms = faults.drip_ms.map(|ms| scale.ms(ms));
                faults.duplicate_after_ms = faults.duplicate_after_ms.map(|ms| scale.ms(ms));
            }
        }
    }
}

/// Scales the `delay_ms` of one handler answer (CLIENTS.md), when it is a number of ms.
fn scale_delay(answer: &mut serde_json::Value, scale: TimeScale) {
    if let Some(delay) = answer.get_mut("delay_ms")
        && let Some(ms) = delay.as_u64()
    {
        *delay = serde_json::Value::from(scale.ms(ms));
    }
}

impl Step {
    /// Multiplies the step's durations (a call's `cancel_after_ms`, a sleep's `ms`).
    pub fn scale(&mut self, scale: TimeScale) {
        match self {
            Step::CallTool {
                cancel_after_ms,
                max_timeout_ms,
                ..
            } => {
                *cancel_after_ms = cancel_after_ms.map(|ms| scale.ms(ms));
                *max_timeout_ms = max_timeout_ms.map(|ms| scale.ms(ms));
            }
            Step::Sleep { ms } => *ms = scale.ms(*ms),
            Step::Together { steps } => steps.iter_mut().for_each(|s| s.scale(scale)),
            Step::Connect {
                handlers: Some(handlers),
                ..
            } => {
                // An answer's `delay_ms`, and each of an elicitation's answers by mode.
                for answer in handlers.values_mut() {
                    scale_delay(answer, scale);
                    for mode in ["form", "url"] {
                        if let Some(by_mode) = answer.get_mut(mode) {
                            scale_delay(by_mode, scale);
                        }
                    }
                }
            }
            Step::Connect { handlers: None, .. }
            | Step::ListTools
            | Step::Close
            | Step::Discover
            | Step::ListResources
            | Step::ListResourceTemplates
            | Step::ReadResource { .. }
            | Step::ListPrompts
            | Step::FetchIcons
            | Step::GetPrompt { .. }
            | Step::Complete { .. }
            | Step::Ping
            | Step::SetLoggingLevel { .. }
            | Step::SetRoots { .. }
            | Step::Events { .. }
            | Step::SubscribeResource { .. }
            | Step::UnsubscribeResource { .. }
            | Step::Listen { .. }
            | Step::GetTask { .. }
            | Step::CancelTask { .. }
            | Step::TaskResult { .. }
            | Step::ListTasks
            | Step::ExposedTools => {}
        }
    }
}

#[cfg(test)]
mod tests {
    use std::collections::BTreeSet;

    use serde_json::{Value, json};

    use super::*;
    use crate::model::{CaseFile, Fixture};

    fn is_duration(key: &str) -> bool {
        key == "ms" || key.ends_with("_ms")
    }

    fn property_names(schema: &Value, out: &mut BTreeSet<String>) {
        match schema {
            Value::Object(map) => {
                if let Some(Value::Object(props)) = map.get("properties") {
                    out.extend(props.keys().filter(|k| is_duration(k)).cloned());
                }
                map.values().for_each(|v| property_names(v, out));
            }
            Value::Array(items) => items.iter().for_each(|v| property_names(v, out)),
            _ => {}
        }
    }

    #[test]
    fn every_duration_field_of_the_model_is_scaled() {
        let mut found = BTreeSet::new();
        for schema in [
            schemars::schema_for!(CaseFile),
            schemars::schema_for!(Fixture),
        ] {
            property_names(&serde_json::to_value(schema).unwrap(), &mut found);
        }
        let listed: BTreeSet<String> = SCALED_FIELDS
            .iter()
            .chain(JUDGED_FIELDS)
            .chain(UNSCALED_FIELDS)
            .map(|s| s.to_string())
            .collect();
        assert_eq!(
            found, listed,
            "a duration field was added to (or removed from) the case model: scale it in \
             model/timing.rs and list it in SCALED_FIELDS"
        );
    }

    /// Every number under a duration key, by its path.
    fn durations(v: &Value, at: String, out: &mut Vec<(String, u64)>) {
        match v {
            Value::Object(map) => {
                for (k, v) in map {
                    let here = format!("{at}.{k}");
                    match v.as_u64() {
                        Some(n) if is_duration(k) => out.push((here, n)),
                        _ => durations(v, here, out),
                    }
                }
            }
            Value::Array(items) => {
                for (i, v) in items.iter().enumerate() {
                    durations(v, format!("{at}[{i}]"), out);
                }
            }
            _ => {}
        }
    }

    fn seen(s: &Scenario) -> Vec<(String, u64)> {
        let mut out = vec![
            ("timeout_ms".into(), s.timeout_ms),
            ("shutdown_grace_ms".into(), s.shutdown_grace_ms),
            ("deadline_ms".into(), s.deadline_ms),
        ];
        durations(
            &serde_json::to_value(&s.server).unwrap(),
            "server".into(),
            &mut out,
        );
        durations(
            &serde_json::to_value(&s.plan).unwrap(),
            "plan".into(),
            &mut out,
        );
        out
    }

    #[test]
    fn scaling_multiplies_every_duration_and_keeps_everything_else() {
        let server: ServerScript = serde_json::from_value(json!({
            "handlers": [
                {"method": "tools/call", "delay_ms": 1500, "reply": {"result": {}},
                 "faults": {"drip_ms": 3, "duplicate_after_ms": 40, "padding_bytes": 7},
                 "sends": [{"message": {"jsonrpc": "2.0", "method": "notifications/progress"},
                            "delay_ms": 30}]},
                {"method": "tools/list", "reply": "hang"}
            ],
            "http": {"retry_ms": 500, "keepalive_ms": 250},
            "stderr_noise_bytes": 100,
            "tasks": [{"tool": "slow", "poll_interval_ms": 100, "ttl_ms": 5000,
                       "phases": [{"status": "working", "ms": 300},
                                  {"status": "input_required", "settles_ms": 20,
                                   "input_requests": {"a": {"method": "ping"}}},
                                  {"status": "completed"}],
                       "result": {"content": []}}]
        }))
        .unwrap();
        let plan: Vec<Step> = serde_json::from_value(json!([
            {"op": "connect", "handlers": {"sampling/createMessage": {"delay_ms": 40},
             "elicitation/create": {"form": {"action": "accept", "delay_ms": 10}}}},
            {"op": "call_tool", "name": "slow", "cancel_after_ms": 200},
            {"op": "call_tool", "name": "slow", "progress": true, "max_timeout_ms": 900},
            {"op": "sleep", "ms": 250},
            {"op": "close"}
        ]))
        .unwrap();
        let mut s = Scenario::serving(server);
        s.plan = plan;
        s.timeout_ms = 1000;
        let before: Vec<(String, u64)> = seen(&s)
            .into_iter()
            .filter(|(p, _)| {
                !UNSCALED_FIELDS
                    .iter()
                    .any(|f| p.ends_with(&format!(".{f}")))
            })
            .collect();
        let keys: BTreeSet<String> = before
            .iter()
            .map(|(p, _)| p.rsplit(['.']).next().unwrap().to_owned())
            .collect();
        let listed: BTreeSet<String> = SCALED_FIELDS.iter().map(|s| s.to_string()).collect();
        assert_eq!(
            keys, listed,
            "the test scenario must hold every duration field"
        );

        let scaled = s.clone().scaled(TimeScale::new(2.0).unwrap());
        let after: Vec<(String, u64)> = seen(&scaled)
            .into_iter()
            .filter(|(p, _)| !p.ends_with(".ttl_ms"))
            .collect();
        assert_eq!(
            scaled.server.tasks[0].ttl_ms,
            Some(5000),
            "a ttl is never scaled"
        );
        let doubled: Vec<(String, u64)> = before.iter().map(|(p, n)| (p.clone(), n * 2)).collect();
        assert_eq!(after, doubled);
        assert_eq!(scaled.time_scale, TimeScale::new(2.0).unwrap());
        // Nothing but durations changes: halving the doubled scenario gives back the original,
        // server script and plan included.
        let mut back = scaled.clone().scaled(TimeScale::new(0.5).unwrap());
        back.time_scale = s.time_scale;
        assert_eq!(format!("{back:?}"), format!("{s:?}"));
        // A scale of 1 is the identity.
        assert_eq!(
            format!("{:?}", s.clone().scaled(TimeScale::ONE)),
            format!("{s:?}")
        );
    }

    #[test]
    fn factors_are_checked_and_round_trip() {
        assert!(TimeScale::parse("0").is_err());
        assert!(TimeScale::parse("-1").is_err());
        assert!(TimeScale::parse("NaN").is_err());
        assert!(TimeScale::parse("21").is_err());
        assert!(TimeScale::parse("fast").is_err());
        let f = TimeScale::parse("1.37").unwrap();
        for ms in [0, 1, 7, 300, 1000, 1500, 5000, 10_000] {
            assert_eq!(f.unscaled_ms(f.ms(ms)), ms);
        }
        assert_eq!(TimeScale::parse("2").unwrap().ms(1500), 3000);
    }
}
