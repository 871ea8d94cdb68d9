//! Seam: cursor handling. The rules every listing (tools, resources, resource templates,
//! prompts) enforces.
//!
//! Defects here: `no-cursor-check`, `allow-duplicate-names`, `first-page-only`,
//! `empty-cursor-is-end`, `resume-listing-after-new-session`, `no-page-cap`,
//! `truncate-at-page-cap`, `null-cursor-followed`, `partial-listing-on-error`,
//! `fixed-page-size`. (`mangle-cursor` changes what is sent; see
//! [`super::sent`].)

use super::Defects;
use crate::error::{Error, ErrorKind};
use crate::listing::ListingRules;

/// The pages a listing fetches at most under the `no-cursor-check` defect.
const NAIVE_PAGE_LIMIT: usize = 50;

impl Defects {
    /// The listing rules; correct: [`ListingRules::SPEC`].
    pub(crate) fn listing_rules(&self) -> ListingRules {
        let mut rules = ListingRules::SPEC;
        if self.no_page_cap {
            rules.max_pages = usize::MAX;
        }
        if self.truncate_at_page_cap {
            rules.truncate_at_max = true;
        }
        if self.no_cursor_check {
            rules.reject_repeated_cursors = false;
            rules.max_pages = NAIVE_PAGE_LIMIT;
            rules.truncate_at_max = true;
        }
        if self.allow_duplicate_names {
            rules.reject_duplicate_names = false;
        }
        if self.first_page_only {
            rules.max_pages = 1;
            rules.truncate_at_max = true;
        }
        rules.empty_cursor_ends = self.empty_cursor_is_end;
        rules.null_cursor_followed = self.null_cursor_followed;
        rules.short_page_ends = self.fixed_page_size;
        rules
    }

    /// Whether a listing whose page request failed with a JSON-RPC error returns the entries
    /// of the pages before it as a success; correct: never (the listing fails with the error).
    pub(crate) fn partial_listing_on_error(&self, error: &Error) -> bool {
        self.partial_listing_on_error && error.kind == ErrorKind::ProtocolError
    }

    /// Whether a page request that failed with `error` is sent again, same cursor, once a new
    /// session has been started; correct: never (a cursor belongs to its session, and the
    /// listing fails).
    pub(crate) fn resume_listing(&self, error: &Error) -> bool {
        self.resume_listing_after_new_session
            && error.kind == ErrorKind::HttpStatus
            && error.status == Some(404)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::listing::PAGE_CAP;

    #[test]
    fn page_cap_defects() {
        assert_eq!(Defects::default().listing_rules(), ListingRules::SPEC);
        assert_eq!(ListingRules::SPEC.max_pages, PAGE_CAP);
        let endless = Defects::only("no-page-cap").listing_rules();
        assert_eq!(endless.max_pages, usize::MAX);
        let truncating = Defects::only("truncate-at-page-cap").listing_rules();
        assert_eq!(
            (truncating.max_pages, truncating.truncate_at_max),
            (PAGE_CAP, true)
        );
        let first = Defects::only("first-page-only").listing_rules();
        assert_eq!((first.max_pages, first.truncate_at_max), (1, true));
    }
}
