//! Seam: giving up on a request. When a waiter stops waiting (its timeout, the caller's
//! cancel) and how the server learns of it.
//!
//! Defects here: `no-timeout`, `ignore-cancel`, `no-cancel-notification`, `cancel-initialize`,
//! `cancel-with-notification-over-http`, `keep-stream-on-cancel`, `cancel-answered` (in
//! `hooks.rs`: a flag read as it is).

use std::future::{Future, pending};

use super::Defects;
use crate::seams::wire::Telling;

impl Defects {
    /// When a request times out; correct: when `timer` completes.
    pub(crate) fn timer(&self, timer: impl Future<Output = ()>) -> impl Future<Output = ()> {
        let never = self.no_timeout;
        async move {
            if never {
                pending::<()>().await;
            }
            timer.await;
        }
    }

    /// When the caller's cancel is heeded; correct: when `cancel` completes.
    pub(crate) fn cancel<C: Future<Output = ()>>(&self, cancel: C) -> impl Future<Output = ()> {
        let never = self.ignore_cancel;
        async move {
            if never {
                pending::<()>().await;
            }
            cancel.await;
        }
    }

    /// How the server is told that `method` was given up, and whether the request's exchange
    /// is dropped (`closes`: the transport cancels by closing the response stream, as modern
    /// HTTP does); correct: `telling`, and the exchange always dropped.
    pub(crate) fn telling(&self, telling: Telling, method: &str, closes: bool) -> (bool, Telling) {
        let telling = match telling {
            Telling::Not(_) if method == "initialize" && self.cancel_initialize => match closes {
                true => Telling::ByClosingTheStream,
                false => Telling::ByNotification,
            },
            Telling::ByClosingTheStream if self.cancel_with_notification_over_http => {
                Telling::ByNotification
            }
            Telling::ByNotification if self.no_cancel_notification => {
                Telling::Not("no notifications/cancelled was sent")
            }
            telling => telling,
        };
        (!self.keep_stream_on_cancel, telling)
    }
}
