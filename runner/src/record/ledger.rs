//! HTTP requests written in the order they arrived. A request is recorded with its status,
//! which only the upstream's answer tells; until then it waits here. Records that must come
//! after it (a later request's, a message of a stream opened later) wait for it too, up to
//! [`SETTLE_WAIT`]; past that, or when the upstream has not answered within
//! [`ANSWER_WAIT`], it is written with status 0 ("no answer yet"). So the file keeps the
//! host's order (a cancellation never comes before the request it cancels), and a request
//! the upstream holds (a JSON answer after a long tool call) is not missing from it.

use std::collections::BTreeMap;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Mutex, PoisonError};
use std::time::Duration;

use mcp_harness_scenarios::transcript::Event;
use tokio::sync::Notify;

use super::writer::Writer;

/// How long a request waits for its status before it is written without one.
pub const ANSWER_WAIT: Duration = Duration::from_secs(2);

/// How long records wait for an earlier request's status before they are written anyway.
pub const SETTLE_WAIT: Duration = Duration::from_millis(250);

/// The status of a request recorded before the upstream answered it.
pub const NO_ANSWER_YET: u16 = 0;

/// Requests not yet written, by arrival.
#[derive(Debug, Default)]
pub struct Ledger {
    next: AtomicU64,
    pending: Mutex<BTreeMap<u64, (u64, Vec<Event>)>>,
    /// Signalled whenever a request is written.
    written: Notify,
}

impl Ledger {
    /// A request arrived at `at_ms`: its records (an `HttpRequest` first, its status to be
    /// set, then its messages) wait for its status. Returns its place in the order.
    pub fn arrive(&self, at_ms: u64, events: Vec<Event>) -> u64 {
        let seq = self.next.fetch_add(1, Ordering::SeqCst);
        self.lock().insert(seq, (at_ms, events));
        seq
    }

    /// The request `seq` got `status`: it is written (after every request before it), with
    /// `extra` after it. If it was written already (without a status), only `extra` is.
    pub async fn settle(&self, writer: &Writer, seq: u64, status: u16, extra: Vec<Event>) {
        self.wait_for_earlier(seq).await;
        let mut pending = self.lock();
        write_before(&mut pending, writer, seq);
        if let Some((at_ms, mut events)) = pending.remove(&seq) {
            if let Some(Event::HttpRequest { status: s, .. }) = events.first_mut() {
                *s = status;
            }
            events.extend(extra);
            writer.write_at(Some(at_ms), events);
        } else if !extra.is_empty() {
            writer.write_at(None, extra);
        }
        drop(pending);
        self.written.notify_waiters();
    }

    /// Writes `events` of the stream opened by request `seq`, after every request before it
    /// and itself.
    pub async fn write_after(&self, writer: &Writer, seq: u64, events: Vec<Event>) {
        self.wait_for_earlier(seq).await;
        let mut pending = self.lock();
        write_before(&mut pending, writer, seq + 1);
        writer.write_at(None, events);
        drop(pending);
        self.written.notify_waiters();
    }

    /// Writes request `seq` (and those before it) now, without a status if it has none.
    pub fn give_up_waiting(&self, writer: &Writer, seq: u64) {
        write_before(&mut self.lock(), writer, seq + 1);
        self.written.notify_waiters();
    }

    /// Writes every request still waiting (the recorder is stopping).
    pub fn flush(&self, writer: &Writer) {
        write_before(&mut self.lock(), writer, u64::MAX);
        self.written.notify_waiters();
    }

    /// Waits up to [`SETTLE_WAIT`] for every request before `seq` to be written.
    async fn wait_for_earlier(&self, seq: u64) {
        let deadline = tokio::time::Instant::now() + SETTLE_WAIT;
        loop {
            let notified = self.written.notified();
            let mut notified = std::pin::pin!(notified);
            notified.as_mut().enable();
            if self.lock().range(..seq).next().is_none() {
                return;
            }
            if tokio::time::timeout_at(deadline, notified).await.is_err() {
                return;
            }
        }
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, BTreeMap<u64, (u64, Vec<Event>)>> {
        self.pending.lock().unwrap_or_else(PoisonError::into_inner)
    }
}

/// Writes every waiting request that arrived before `seq`, with the status it has.
fn write_before(pending: &mut BTreeMap<u64, (u64, Vec<Event>)>, writer: &Writer, seq: u64) {
    let later = pending.split_off(&seq);
    for (_, (at_ms, events)) in std::mem::replace(pending, later) {
        writer.write_at(Some(at_ms), events);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use mcp_harness_scenarios::transcript;
    use std::collections::BTreeMap;

    fn request(path: &str) -> Vec<Event> {
        vec![Event::HttpRequest {
            method: "POST".into(),
            path: path.into(),
            headers: BTreeMap::new(),
            status: NO_ANSWER_YET,
            origin: None,
            endpoint: None,
            params: None,
        }]
    }

    fn written(path: &std::path::Path) -> Vec<(String, u16)> {
        let text = std::fs::read_to_string(path).unwrap();
        transcript::parse(&text)
            .unwrap()
            .into_iter()
            .filter_map(|r| match r.event {
                Event::HttpRequest { path, status, .. } => Some((path, status)),
                _ => None,
            })
            .collect()
    }

    #[tokio::test]
    async fn requests_keep_their_arrival_order_and_a_late_status_is_zero() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("r.jsonl");
        let writer = Writer::create(&path).unwrap();
        let ledger = Ledger::default();
        let a = ledger.arrive(1, request("/a"));
        let b = ledger.arrive(2, request("/b"));
        let c = ledger.arrive(3, request("/c"));
        // `a` settles while `b` waits: `b` keeps its place after it.
        ledger.settle(&writer, a, 200, Vec::new()).await;
        assert_eq!(written(&path), [("/a".into(), 200)]);
        // `c` answers first: it waits for `b`, which settles meanwhile, so both keep status.
        let (_, ()) = tokio::join!(ledger.settle(&writer, c, 202, Vec::new()), async {
            tokio::time::sleep(Duration::from_millis(50)).await;
            ledger.settle(&writer, b, 404, Vec::new()).await;
        });
        let all = [("/a".into(), 200), ("/b".into(), 404), ("/c".into(), 202)];
        assert_eq!(written(&path), all);
        // A request never answered is written with status 0 once a later one must be.
        let d = ledger.arrive(4, request("/d"));
        let e = ledger.arrive(5, request("/e"));
        ledger.settle(&writer, e, 200, Vec::new()).await;
        ledger.settle(&writer, d, 500, Vec::new()).await;
        assert_eq!(&written(&path)[3..], [("/d".into(), 0), ("/e".into(), 200)]);
    }
}
