//! Seam: `x-mcp-header` (modern HTTP). Which tools a listing keeps, which `Mcp-Param-*`
//! headers a `tools/call` carries and how their values are written, and whether a
//! `HeaderMismatch` leads to a new listing and a retry.
//!
//! Defects here: `keep-invalid-header-tools`, `no-param-headers`, `param-header-when-absent`,
//! `raw-header-values`, `no-relist-on-header-mismatch`.

use super::Defects;

impl Defects {
    /// Whether a tool with an invalid `x-mcp-header` annotation stays in the listing;
    /// correct: no.
    pub(crate) fn keep_invalid_header_tools(&self) -> bool {
        self.keep_invalid_header_tools
    }

    /// The `Mcp-Param-*` headers of a call (`present`: each header name with its value text;
    /// `absent`: the header names whose argument is absent or null); correct: `present`.
    pub(crate) fn param_headers(
        &self,
        mut present: Vec<(String, String)>,
        absent: Vec<String>,
    ) -> Vec<(String, String)> {
        if self.no_param_headers {
            return Vec::new();
        }
        if self.param_header_when_absent {
            present.extend(absent.into_iter().map(|name| (name, String::new())));
        }
        present
    }

    /// Whether `Mcp-Name` and `Mcp-Param-*` values go out as they are, unsafe or not;
    /// correct: no (unsafe values are sent in the `=?base64?…?=` form).
    pub(crate) fn raw_header_values(&self) -> bool {
        self.raw_header_values
    }

    /// Whether a `tools/call` refused with `HeaderMismatch` lists the tools again and retries
    /// when the tool's annotations changed; correct: yes.
    pub(crate) fn relist_on_header_mismatch(&self) -> bool {
        !self.no_relist_on_header_mismatch
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_present_values_become_headers() {
        let present = || vec![("Mcp-Param-A".to_owned(), "1".to_owned())];
        let absent = || vec!["Mcp-Param-B".to_owned()];
        let ok = Defects::default().param_headers(present(), absent());
        assert_eq!(ok, present());
        let none = Defects::only("no-param-headers").param_headers(present(), absent());
        assert_eq!(none, []);
        let both = Defects::only("param-header-when-absent").param_headers(present(), absent());
        assert_eq!(both.len(), 2);
        assert!(!Defects::default().keep_invalid_header_tools());
        assert!(Defects::default().relist_on_header_mismatch());
        assert!(!Defects::default().raw_header_values());
    }
}
