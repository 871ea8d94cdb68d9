//! One task's place in its script over time, computed from the clock when asked: a phase
//! with `ms` ends that long after it began, an `input_required` phase `settles_ms` after its
//! last input request was answered, the last phase never; a cancel freezes the task
//! `cancelled`. Pure (the caller passes `now`), so the rules are tested without waiting.

use std::collections::{BTreeMap, BTreeSet};
use std::time::{Duration, SystemTime};

use mcp_harness_scenarios::model::{TaskPhase, TaskScript, TaskStatus};
use serde_json::Value;
use tokio::time::Instant;

/// One task the fake created.
#[derive(Debug)]
pub struct Task {
    /// Its id.
    pub id: String,
    /// Which of the script's tasks it plays.
    pub script: usize,
    created: Instant,
    created_wall: SystemTime,
    phase: usize,
    phase_started: Instant,
    /// Keys of the current `input_required` phase the client answered.
    answered: BTreeSet<String>,
    /// When the last of them was answered.
    settling_from: Option<Instant>,
    cancelled_at: Option<Instant>,
    /// 2025-11-25: the input requests sent (on a `tasks/result` stream): the key of each,
    /// by request id.
    pub sent: BTreeMap<String, String>,
}

impl Task {
    /// A task of the script's task `script`, created `now`.
    pub fn new(id: String, script: usize, now: Instant) -> Task {
        Task {
            id,
            script,
            created: now,
            created_wall: SystemTime::now(),
            phase: 0,
            phase_started: now,
            answered: BTreeSet::new(),
            settling_from: None,
            cancelled_at: None,
            sent: BTreeMap::new(),
        }
    }

    /// Moves on to the phase in force at `now`.
    pub fn advance(&mut self, script: &TaskScript, now: Instant) {
        while let Some(end) = self.phase_end(script) {
            if now < end {
                return;
            }
            self.phase += 1;
            self.phase_started = end;
            self.answered.clear();
            self.settling_from = None;
        }
    }

    /// When the current phase ends, as far as known now (`None`: not before something
    /// happens, or never).
    pub fn phase_end(&self, script: &TaskScript) -> Option<Instant> {
        if self.cancelled_at.is_some() || self.phase + 1 >= script.phases.len() {
            return None;
        }
        let phase = &script.phases[self.phase];
        match phase.status {
            TaskStatus::InputRequired => self
                .settling_from
                .map(|from| from + Duration::from_millis(phase.settles_ms)),
            _ => Some(self.phase_started + Duration::from_millis(phase.ms.unwrap_or(0))),
        }
    }

    /// The current phase.
    pub fn phase<'a>(&self, script: &'a TaskScript) -> &'a TaskPhase {
        &script.phases[self.phase.min(script.phases.len().saturating_sub(1))]
    }

    /// The status in force.
    pub fn status(&self, script: &TaskScript) -> TaskStatus {
        match self.cancelled_at {
            Some(_) => TaskStatus::Cancelled,
            None => self.phase(script).status,
        }
    }

    /// The status message in force, if any.
    pub fn message<'a>(&self, script: &'a TaskScript) -> Option<&'a str> {
        match self.cancelled_at {
            Some(_) => None,
            None => self.phase(script).message.as_deref(),
        }
    }

    /// The current phase's input requests, while it is `input_required`.
    pub fn input_requests<'a>(
        &self,
        script: &'a TaskScript,
    ) -> Option<&'a BTreeMap<String, mcp_harness_scenarios::model::tasks::InputRequest>> {
        match self.status(script) {
            TaskStatus::InputRequired => self.phase(script).input_requests.as_ref(),
            _ => None,
        }
    }

    /// The client answered the input request `key` at `now`: counted when it is one of the
    /// current phase's and not answered yet (anything else is ignored); the last one starts
    /// the phase's settling. Whether it counted.
    pub fn answer(&mut self, script: &TaskScript, key: &str, now: Instant) -> bool {
        let Some(requests) = self.input_requests(script) else {
            return false;
        };
        if !requests.contains_key(key) || self.answered.contains(key) {
            return false;
        }
        self.answered.insert(key.to_owned());
        if requests.keys().all(|k| self.answered.contains(k)) {
            self.settling_from = Some(now);
        }
        true
    }

    /// Whether the current phase's input request `key` was answered.
    pub fn is_answered(&self, key: &str) -> bool {
        self.answered.contains(key)
    }

    /// Moves the task to `cancelled` at `now`.
    pub fn cancel(&mut self, now: Instant) {
        self.cancelled_at.get_or_insert(now);
    }

    /// Wall-clock time of `at`, as ISO 8601 UTC.
    fn wall(&self, at: Instant) -> String {
        let wall = self.created_wall + at.saturating_duration_since(self.created);
        iso8601(wall)
    }

    /// `createdAt`.
    pub fn created_at(&self) -> String {
        self.wall(self.created)
    }

    /// `lastUpdatedAt`: when the status in force began.
    pub fn last_updated_at(&self) -> String {
        self.wall(self.cancelled_at.unwrap_or(self.phase_started))
    }
}

/// A wall-clock time as RFC 3339 (an ISO 8601 profile), UTC, to the millisecond, always with
/// three digits of it: fixed-width, so two of them compare as text in time order.
fn iso8601(at: SystemTime) -> String {
    let at = time::OffsetDateTime::from(at);
    format!(
        "{:04}-{:02}-{:02}T{:02}:{:02}:{:02}.{:03}Z",
        at.year(),
        u8::from(at.month()),
        at.day(),
        at.hour(),
        at.minute(),
        at.second(),
        at.millisecond()
    )
}

/// The `related-task` `_meta` member's value for `id`.
pub fn related(id: &str) -> Value {
    serde_json::json!({ "taskId": id })
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn script() -> TaskScript {
        serde_json::from_value(json!({"tool": "slow", "phases": [
            {"status": "working", "ms": 100, "message": "started"},
            {"status": "input_required", "settles_ms": 50,
             "input_requests": {"a": {"method": "ping"}, "b": {"method": "ping"}}},
            {"status": "working", "ms": 30},
            {"status": "completed"}],
            "result": {"content": []}}))
        .unwrap()
    }

    #[test]
    fn phases_follow_the_clock_and_the_answers() {
        let s = script();
        let t0 = Instant::now();
        let ms = |n: u64| t0 + Duration::from_millis(n);
        let mut task = Task::new("task-1".into(), 0, t0);
        task.advance(&s, ms(99));
        assert_eq!(task.status(&s), TaskStatus::Working);
        assert_eq!(task.message(&s), Some("started"));
        task.advance(&s, ms(100));
        assert_eq!(task.status(&s), TaskStatus::InputRequired);
        // Waiting for input lasts however long it takes.
        task.advance(&s, ms(10_000));
        assert_eq!(task.status(&s), TaskStatus::InputRequired);
        assert!(task.answer(&s, "a", ms(10_000)));
        assert!(!task.answer(&s, "a", ms(10_001)), "answered once only");
        assert!(
            !task.answer(&s, "zz", ms(10_001)),
            "not one of the phase's keys"
        );
        assert_eq!(task.phase_end(&s), None);
        assert!(task.answer(&s, "b", ms(10_010)));
        // Settling: still input_required for 50 ms after the last answer.
        task.advance(&s, ms(10_059));
        assert_eq!(task.status(&s), TaskStatus::InputRequired);
        task.advance(&s, ms(10_060));
        assert_eq!(task.status(&s), TaskStatus::Working);
        task.advance(&s, ms(10_090));
        assert_eq!(task.status(&s), TaskStatus::Completed);
        assert_eq!(task.phase_end(&s), None, "the last phase lasts for ever");
    }

    #[test]
    fn times_have_a_fixed_width_so_they_compare_as_text() {
        let whole = SystemTime::UNIX_EPOCH + Duration::from_secs(1);
        assert_eq!(iso8601(whole), "1970-01-01T00:00:01.000Z");
        let later = whole + Duration::from_millis(5);
        assert_eq!(iso8601(later), "1970-01-01T00:00:01.005Z");
        assert!(iso8601(later) > iso8601(whole));
    }

    #[test]
    fn a_cancelled_task_stays_cancelled() {
        let s = script();
        let t0 = Instant::now();
        let mut task = Task::new("task-1".into(), 0, t0);
        task.cancel(t0 + Duration::from_millis(5));
        task.advance(&s, t0 + Duration::from_secs(60));
        assert_eq!(task.status(&s), TaskStatus::Cancelled);
        assert_eq!(task.message(&s), None);
        assert!(task.last_updated_at() >= task.created_at());
        assert!(task.created_at().ends_with('Z'), "{}", task.created_at());
    }
}
