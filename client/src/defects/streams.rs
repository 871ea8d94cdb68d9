//! Seam: HTTP streams. What a request does when its SSE response stream breaks before the
//! response, how long a reconnect waits, and whether the standalone GET stream's messages
//! reach the router.
//!
//! Defects here: `resend-on-stream-cut`, `no-post-stream-resume`, `ignore-retry-field`,
//! `ignore-get-stream-messages`, `forget-event-id-on-recut`.

use std::time::Duration;

use super::Defects;
use crate::seams::wire::AfterCut;

impl Defects {
    /// What follows a broken request stream; correct: `correct`. `resent` says whether the
    /// request was already POSTed a second time (the defect re-sends once).
    pub(crate) fn after_stream_cut(&self, correct: AfterCut, resent: bool) -> AfterCut {
        if self.resend_on_stream_cut {
            return match resent {
                false => AfterCut::Resend,
                true => AfterCut::Fail,
            };
        }
        match self.no_post_stream_resume {
            true => AfterCut::Fail,
            false => correct,
        }
    }

    /// How long to wait before reconnecting a stream; correct: `correct` (the defect waits
    /// `backoff`, as if the server sent no `retry:`).
    pub(crate) fn reconnect_delay(&self, correct: Duration, backoff: Duration) -> Duration {
        match self.ignore_retry_field {
            true => backoff,
            false => correct,
        }
    }

    /// Whether the messages of the standalone GET stream reach the router; correct: yes.
    pub(crate) fn get_stream_delivers(&self) -> bool {
        !self.ignore_get_stream_messages
    }

    /// Whether a resumed stream broken again before any event is resumed from the id the
    /// client had; correct: yes.
    pub(crate) fn keeps_event_id_after_recut(&self) -> bool {
        !self.forget_event_id_on_recut
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_defect_bends_one_decision() {
        let ok = Defects::default();
        assert_eq!(
            ok.after_stream_cut(AfterCut::Resume, false),
            AfterCut::Resume
        );
        let ms = Duration::from_millis;
        assert_eq!(ok.reconnect_delay(ms(900), ms(250)), ms(900));
        assert!(ok.get_stream_delivers());
        let resend = Defects::only("resend-on-stream-cut");
        assert_eq!(
            resend.after_stream_cut(AfterCut::Resume, false),
            AfterCut::Resend
        );
        assert_eq!(
            resend.after_stream_cut(AfterCut::Resume, true),
            AfterCut::Fail
        );
        let no_resume = Defects::only("no-post-stream-resume");
        assert_eq!(
            no_resume.after_stream_cut(AfterCut::Reissue, false),
            AfterCut::Fail
        );
        let ignore = Defects::only("ignore-retry-field");
        assert_eq!(ignore.reconnect_delay(ms(900), ms(250)), ms(250));
        assert!(!Defects::only("ignore-get-stream-messages").get_stream_delivers());
        assert!(ok.keeps_event_id_after_recut());
        assert!(!Defects::only("forget-event-id-on-recut").keeps_event_id_after_recut());
    }
}
