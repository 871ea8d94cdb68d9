//! Seam: where discovered URLs may lead (the destination policy of
//! `transport/http/security/destination.rs` and the redirect policy).
//!
//! - `ssrf-unchecked`: no destination check at all: a discovered URL is fetched wherever it
//!   leads, a name's addresses are not judged, and a redirect to any `https` origin is
//!   followed (plain `http://` is still refused: that is another rule).
//! - `ssrf-check-name-once`: the destination is checked, but by resolving the name once for
//!   the check and connecting by resolving it again (time of check to time of use): a
//!   redirect to another `https` origin is followed when that first resolution was public,
//!   and a discovered URL's name is judged the same way; DNS rebinding gets through.

use reqwest::Url;
use reqwest::redirect::Policy;

use super::Defects;
use crate::seams::SsrfDefects;
use crate::transport::http::security::resolve_and_judge;

impl SsrfDefects {
    /// The names this seam accepts.
    pub(crate) const NAMES: [&'static str; 2] = ["ssrf-unchecked", "ssrf-check-name-once"];

    /// Switches on `name`; false if it is not this seam's.
    pub(crate) fn enable(&mut self, name: &str) -> bool {
        match name {
            "ssrf-unchecked" => self.unchecked = true,
            "ssrf-check-name-once" => self.check_name_once = true,
            _ => return false,
        }
        true
    }
}

impl Defects {
    /// Whether the guarded resolver judges the addresses it hands the connector.
    pub(crate) fn ssrf_filter_resolved(&self) -> bool {
        !(self.ssrf.unchecked || self.ssrf.check_name_once)
    }

    /// The destination check of a discovered URL: `correct` unless a defect replaces it.
    pub(crate) fn ssrf_check(
        &self,
        url: &Url,
        correct: impl FnOnce() -> Result<(), String>,
    ) -> Result<(), String> {
        if self.ssrf.unchecked {
            return Ok(());
        }
        correct()?;
        match (self.ssrf.check_name_once, url.host_str()) {
            (true, Some(host)) => resolve_and_judge(host),
            _ => Ok(()),
        }
    }

    /// The redirect policy: `policy` unless a defect follows redirects to other origins.
    pub(crate) fn ssrf_redirects(&self, policy: Policy) -> Policy {
        let (unchecked, once) = (self.ssrf.unchecked, self.ssrf.check_name_once);
        if !unchecked && !once {
            return policy;
        }
        Policy::custom(move |attempt| {
            if attempt.url().scheme() != "https" || attempt.previous().len() > 10 {
                return attempt.stop();
            }
            if once {
                let host = attempt.url().host_str().unwrap_or("").to_owned();
                // A refused hop is left unfollowed (reported as the 3xx itself).
                if resolve_and_judge(host.trim_matches(['[', ']'])).is_err() {
                    return attempt.stop();
                }
            }
            attempt.follow()
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_name_switches_its_flag_and_only_then_the_check_is_skipped() {
        let url = Url::parse("https://10.0.0.1/x").unwrap();
        let refuse = || Err("internal".to_owned());
        assert!(Defects::default().ssrf_check(&url, refuse).is_err());
        assert!(Defects::default().ssrf_filter_resolved());
        let mut lax = Defects::default();
        assert!(lax.enable("ssrf-unchecked"));
        assert!(lax.ssrf_check(&url, refuse).is_ok());
        assert!(!lax.ssrf_filter_resolved());
        let mut once = Defects::default();
        assert!(once.enable("ssrf-check-name-once"));
        assert!(once.ssrf_check(&url, refuse).is_err());
        assert!(!once.ssrf_filter_resolved());
    }
}
