//! Seam: the deprecated HTTP+SSE transport (2024-11-05). Whether a refused first POST leads to
//! the GET that looks for an HTTP+SSE server, and where messages go once there.
//!
//! Defects here: `no-sse-fallback`, `sse-fallback-on-modern-error`, `sse-post-to-mcp-url`.

use reqwest::Url;

use super::Defects;

impl Defects {
    /// Whether a refused first POST is followed by the HTTP+SSE GET; correct: `correct`.
    pub(crate) fn sse_fallback(&self, correct: bool, modern_error: bool) -> bool {
        if self.no_sse_fallback {
            return false;
        }
        correct || (modern_error && self.sse_fallback_on_modern_error)
    }

    /// Where an HTTP+SSE message goes; correct: the `endpoint` event's URI.
    pub(crate) fn sse_post_url<'a>(&self, endpoint: &'a Url, given: &'a Url) -> &'a Url {
        match self.sse_post_to_mcp_url {
            true => given,
            false => endpoint,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_defect_bends_one_decision() {
        let ok = Defects::default();
        assert!(ok.sse_fallback(true, false));
        assert!(!ok.sse_fallback(false, true));
        assert!(!Defects::only("no-sse-fallback").sse_fallback(true, false));
        let eager = Defects::only("sse-fallback-on-modern-error");
        assert!(eager.sse_fallback(false, true));
        assert!(!eager.sse_fallback(false, false));
        let endpoint = Url::parse("https://localhost/messages?session=s1").unwrap();
        let given = Url::parse("https://localhost/mcp").unwrap();
        assert_eq!(ok.sse_post_url(&endpoint, &given), &endpoint);
        let wrong = Defects::only("sse-post-to-mcp-url");
        assert_eq!(wrong.sse_post_url(&endpoint, &given), &given);
    }
}
