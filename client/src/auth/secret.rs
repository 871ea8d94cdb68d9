//! A secret value (access or refresh token, authorization code, PKCE verifier, client secret)
//! that cannot end up in a log line, an error message or a panic by accident.
//!
//! There is no `Display`, and `Debug` prints `<redacted>`; the value is read only where it is
//! put on the wire, through [`Secret::expose`].

use std::fmt;

/// A secret string; see the module doc.
#[derive(Clone, PartialEq, Eq)]
pub struct Secret(String);

impl Secret {
    /// Wraps a secret value.
    pub fn new(value: impl Into<String>) -> Self {
        Secret(value.into())
    }

    /// The value itself, for the one place that sends it.
    pub(crate) fn expose(&self) -> &str {
        &self.0
    }
}

impl fmt::Debug for Secret {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("<redacted>")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn debug_never_shows_the_value() {
        let s = Secret::new("tok-s3cret");
        let shown = format!("{s:?} {s:#?} {:?}", Some(&s));
        assert!(!shown.contains("s3cret"), "{shown}");
        assert_eq!(s.expose(), "tok-s3cret");
    }
}
