//! Seam: TLS policy. Which server URLs may be reached and which redirects followed.
//!
//! Defects here: `allow-insecure-http`, `follow-redirects`.

use reqwest::Url;
use reqwest::redirect::Policy;

use super::Defects;
use crate::error::Error;

impl Defects {
    /// Judges the server URL; correct: `check`'s verdict.
    pub(crate) fn server_url(
        &self,
        text: &str,
        check: impl FnOnce(&str) -> Result<Url, Error>,
    ) -> Result<Url, Error> {
        match Url::parse(text) {
            Ok(url) if url.scheme() == "http" && self.allow_insecure_http => Ok(url),
            _ => check(text),
        }
    }

    /// The redirect policy; correct: `policy`.
    pub(crate) fn redirects(&self, policy: Policy) -> Policy {
        match self.follow_redirects {
            true => Policy::limited(10),
            false => self.auth_redirects(policy),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::error::ErrorKind;

    #[test]
    fn insecure_http_passes_only_under_its_defect() {
        let refuse = |_: &str| Err(Error::new(ErrorKind::InsecureUrl, "no"));
        let remote = "http://example.invalid/mcp";
        assert!(Defects::default().server_url(remote, refuse).is_err());
        let mut lax = Defects::default();
        lax.enable("allow-insecure-http");
        assert!(lax.server_url(remote, refuse).is_ok());
        assert!(lax.server_url("ftp://example.invalid/mcp", refuse).is_err());
    }
}
