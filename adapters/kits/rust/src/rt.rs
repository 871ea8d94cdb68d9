//! The little asynchrony the kit needs, without tying adapters to one runtime: a timer future
//! (the plan's `sleep`, the `events` step's wait), [`block_on`] for adapters of blocking
//! libraries, and the [`Events`] queue the `events` step reads.
//!
//! The timer parks a short-lived thread until its deadline and then wakes the task, so it works
//! under tokio, async-std, or [`block_on`] alike; plans hold a handful of sleeps at most.

use std::future::Future;
use std::pin::{Pin, pin};
use std::sync::{Arc, Mutex};
use std::task::{Context, Poll, Wake, Waker};
use std::thread;
use std::time::{Duration, Instant};

use serde_json::Value;

fn lock<T>(mutex: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    mutex
        .lock()
        .unwrap_or_else(|poisoned| poisoned.into_inner())
}

/// A future that completes `duration` after its first poll.
pub fn sleep(duration: Duration) -> Sleep {
    Sleep {
        duration,
        shared: None,
    }
}

pub struct Sleep {
    duration: Duration,
    shared: Option<Arc<Mutex<Timer>>>,
}

/// (done, the waker to wake), shared with the timer thread once started.
type Timer = (bool, Option<Waker>);

impl Future for Sleep {
    type Output = ();

    fn poll(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<()> {
        if self.duration.is_zero() {
            return Poll::Ready(());
        }
        let duration = self.duration;
        let shared = self.shared.get_or_insert_with(|| {
            let shared = Arc::new(Mutex::new((false, None::<Waker>)));
            let timer = shared.clone();
            let deadline = Instant::now() + duration;
            thread::spawn(move || {
                // `sleep` may wake early on some platforms; sleep out the remainder.
                while let Some(left) = deadline.checked_duration_since(Instant::now()) {
                    if left.is_zero() {
                        break;
                    }
                    thread::sleep(left);
                }
                let mut state = lock(&timer);
                state.0 = true;
                if let Some(waker) = state.1.take() {
                    waker.wake();
                }
            });
            shared
        });
        let mut state = lock(shared);
        if state.0 {
            Poll::Ready(())
        } else {
            state.1 = Some(cx.waker().clone());
            Poll::Pending
        }
    }
}

struct ThreadWaker(thread::Thread);

impl Wake for ThreadWaker {
    fn wake(self: Arc<Self>) {
        self.0.unpark();
    }
}

/// Runs a future to completion on the current thread (for adapters of blocking libraries,
/// which need no runtime: `block_on(mcp_harness_kit::run(...))`).
pub fn block_on<F: Future>(future: F) -> F::Output {
    let mut future = pin!(future);
    let waker = Waker::from(Arc::new(ThreadWaker(thread::current())));
    let mut cx = Context::from_waker(&waker);
    loop {
        if let Poll::Ready(output) = future.as_mut().poll(&mut cx) {
            return output;
        }
        thread::park();
    }
}

/// What the client surfaced to its caller since the last `events` step (CLIENTS.md, "What the
/// server starts"), in arrival order. Cloned into the library's callbacks; read by the adapter's
/// `events` step through [`Events::take`].
#[derive(Clone, Default)]
pub struct Events {
    inner: Arc<Mutex<Queue>>,
}

#[derive(Default)]
struct Queue {
    events: Vec<Value>,
    wakers: Vec<Waker>,
    dropped: bool,
}

impl Events {
    /// The most events kept for one `events` step; a flood beyond is dropped (noted once on
    /// stderr), so a server's notification storm cannot grow the adapter without bound.
    pub const CAP: usize = 10_000;

    pub fn push(&self, event: Value) {
        let mut queue = lock(&self.inner);
        if queue.events.len() < Self::CAP {
            queue.events.push(event);
        } else if !queue.dropped {
            queue.dropped = true;
            eprintln!(
                "mcp-harness-kit: more than {} events before an events step; dropping the rest",
                Self::CAP
            );
        }
        for waker in queue.wakers.drain(..) {
            waker.wake();
        }
    }

    /// Waits until at least `min` events have arrived or `limit` has passed, then takes them all.
    pub async fn take(&self, min: usize, limit: Duration) -> Vec<Value> {
        let mut timer = pin!(sleep(limit));
        std::future::poll_fn(|cx| {
            let mut queue = lock(&self.inner);
            if queue.events.len() >= min || timer.as_mut().poll(cx).is_ready() {
                return Poll::Ready(std::mem::take(&mut queue.events));
            }
            queue.wakers.push(cx.waker().clone());
            Poll::Pending
        })
        .await
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn sleep_waits_about_as_long_as_asked() {
        let started = Instant::now();
        block_on(sleep(Duration::from_millis(50)));
        let took = started.elapsed();
        assert!(
            took >= Duration::from_millis(50) && took < Duration::from_secs(2),
            "{took:?}"
        );
    }

    #[test]
    fn take_returns_once_min_events_arrived_or_the_limit_passed() {
        let events = Events::default();
        let pusher = events.clone();
        let started = Instant::now();
        let handle = thread::spawn(move || {
            thread::sleep(Duration::from_millis(30));
            pusher.push(json!({"type":"log"}));
            pusher.push(json!({"type":"log"}));
        });
        let taken = block_on(events.take(2, Duration::from_secs(5)));
        handle.join().unwrap();
        assert_eq!(taken.len(), 2);
        assert!(started.elapsed() < Duration::from_secs(4));
        let started = Instant::now();
        assert!(block_on(events.take(1, Duration::from_millis(40))).is_empty());
        assert!(started.elapsed() >= Duration::from_millis(40));
    }
}
