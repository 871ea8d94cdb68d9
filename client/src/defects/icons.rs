//! Seam: which icons are fetched (`client/icons.rs`, the `fetch_icons` step).
//!
//! Defects here: `icons-any-scheme` (every icon with an address is reached whatever its scheme
//! or origin: `http:` and `https:` fetched, `ws:` and `ftp:` connected to, `file:` read),
//! `icon-credentials` (an `Authorization` header on each icon fetch),
//! `icon-follows-redirects` (a redirect answering an icon fetch is followed).

use reqwest::Url;

use super::Defects;
use crate::icons::Verdict;

impl Defects {
    /// What is done with the icon `src`; correct: `verdict`.
    pub(crate) fn icon_verdict(&self, verdict: Verdict, src: &str) -> Verdict {
        match Url::parse(src) {
            Ok(url) if self.icons_any_scheme && url.scheme() != "data" => Verdict::Reach(url),
            _ => verdict,
        }
    }

    /// The `Authorization` value sent with an icon fetch; correct: none.
    pub(crate) fn icon_credentials(&self) -> Option<&'static str> {
        self.icon_credentials
            .then_some("Bearer icon-credentials-defect")
    }
}
