//! Seam: sampling with tools and URL-mode consent. Whether the tool rules refuse a sampling
//! request, the code a rejection is answered with, and what is done with a url-mode
//! elicitation's URL (fetched, opened, changed) and with a -32042 error's elicitations.
//! (`no-sampling-tools` and `sampling-tools-always` bend the declared capabilities, in
//! `listening.rs`.)
//!
//! Defects here: `accept-unanswered-tool-use`, `accept-mixed-tool-result`,
//! `sampling-rejection-code`, `prefetch-elicitation-url`, `open-url-without-consent`,
//! `open-url-trimmed`, `ignore-url-elicitation-required`, `no-retry-after-url-accept`, `missing-mode-as-url`.

use super::Defects;
use crate::handlers::ToolProblem;
use crate::jsonrpc::INTERNAL_ERROR;

impl Defects {
    /// The code a rejected sampling request gets; correct: `code` (-1).
    pub(crate) fn rejection_code(&self, code: i64) -> i64 {
        match self.sampling_rejection_code {
            true => INTERNAL_ERROR,
            false => code,
        }
    }

    /// Whether a request breaking a tool rule is refused; correct: yes.
    pub(crate) fn refuses_tool_problem(&self, problem: ToolProblem) -> bool {
        match problem {
            ToolProblem::Unanswered => !self.accept_unanswered_tool_use,
            ToolProblem::Mixed => !self.accept_mixed_tool_result,
        }
    }

    /// What is done with a url-mode URL on receipt; correct: nothing. The defect fetches it
    /// (a GET, as a link preview would), whatever comes back.
    pub(crate) fn url_received(&self, url: &str) {
        if self.prefetch_elicitation_url {
            let _ = super::schema::fetch(url);
        }
    }

    /// Whether the URL is opened; correct: only with consent.
    pub(crate) fn opens_url(&self, consented: bool) -> bool {
        consented || self.open_url_without_consent
    }

    /// The URL as opened; correct: unchanged.
    pub(crate) fn url_as_opened(&self, url: String) -> String {
        match self.open_url_trimmed {
            true => url.split(['?', '#']).next().unwrap_or_default().to_owned(),
            false => url,
        }
    }

    /// Whether a -32042 error's elicitations are offered; correct: yes.
    pub(crate) fn offers_required_elicitations(&self) -> bool {
        !self.ignore_url_elicitation_required
    }

    /// The mode of an elicitation request without `mode`; correct: `form`.
    pub(crate) fn mode_when_absent(&self, form: &'static str) -> &'static str {
        match self.missing_mode_as_url {
            true => "url",
            false => form,
        }
    }

    /// Whether a modern call is retried after its URL elicitation was accepted; correct: yes.
    pub(crate) fn retries_after_url_accept(&self) -> bool {
        !self.no_retry_after_url_accept
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_defect_bends_one_decision() {
        let ok = Defects::default();
        assert_eq!(ok.rejection_code(-1), -1);
        assert_eq!(
            Defects::only("sampling-rejection-code").rejection_code(-1),
            INTERNAL_ERROR
        );
        assert!(ok.refuses_tool_problem(ToolProblem::Unanswered));
        assert!(ok.refuses_tool_problem(ToolProblem::Mixed));
        let unanswered = Defects::only("accept-unanswered-tool-use");
        assert!(!unanswered.refuses_tool_problem(ToolProblem::Unanswered));
        assert!(unanswered.refuses_tool_problem(ToolProblem::Mixed));
        let mixed = Defects::only("accept-mixed-tool-result");
        assert!(!mixed.refuses_tool_problem(ToolProblem::Mixed));
        assert!(!ok.opens_url(false) && ok.opens_url(true));
        assert!(Defects::only("open-url-without-consent").opens_url(false));
        let url = "http://127.0.0.1:9/a?b=c#d".to_owned();
        assert_eq!(ok.url_as_opened(url.clone()), url);
        let trimmed = Defects::only("open-url-trimmed").url_as_opened(url);
        assert_eq!(trimmed, "http://127.0.0.1:9/a");
        assert!(ok.offers_required_elicitations() && ok.retries_after_url_accept());
        assert!(!Defects::only("ignore-url-elicitation-required").offers_required_elicitations());
        assert!(!Defects::only("no-retry-after-url-accept").retries_after_url_accept());
        assert_eq!(ok.mode_when_absent("form"), "form");
        assert_eq!(
            Defects::only("missing-mode-as-url").mode_when_absent("form"),
            "url"
        );
    }
}
