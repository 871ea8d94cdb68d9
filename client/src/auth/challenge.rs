//! Reading `WWW-Authenticate` (RFC 9110 §11.6.1, RFC 6750 §3, RFC 9728 §5.1): the `Bearer`
//! challenge of a 401 or 403, and the parameters the client acts on: `resource_metadata`
//! (where Protected Resource Metadata is), `scope` (what the request needs), `error`
//! (`invalid_token`, `insufficient_scope`).
//!
//! A header may carry several challenges (`Basic realm="x", Bearer error="invalid_token"`),
//! and a response several header fields; parameter names are case-insensitive, values are
//! tokens or quoted strings with backslash escapes. Anything unreadable is skipped rather than
//! failing: a challenge the client cannot read is treated like one without parameters.

use reqwest::header::{HeaderMap, WWW_AUTHENTICATE};

/// The parameters of the `Bearer` challenge the client uses.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(crate) struct Challenge {
    /// `resource_metadata`: the Protected Resource Metadata URL.
    pub(crate) resource_metadata: Option<String>,
    /// `scope`, split on spaces (empty when absent).
    pub(crate) scope: Vec<String>,
    /// `error`, e.g. `invalid_token` or `insufficient_scope`.
    pub(crate) error: Option<String>,
}

impl Challenge {
    /// The `Bearer` challenge among every `WWW-Authenticate` field of `headers`; a default
    /// (empty) challenge when there is none.
    pub(crate) fn from_headers(headers: &HeaderMap) -> Challenge {
        headers
            .get_all(WWW_AUTHENTICATE)
            .iter()
            .filter_map(|v| v.to_str().ok())
            .flat_map(parse)
            .find(|(scheme, _)| scheme.eq_ignore_ascii_case("bearer"))
            .map(|(_, params)| {
                let get = |name: &str| {
                    params
                        .iter()
                        .find(|(k, _)| k == name)
                        .map(|(_, v)| v.clone())
                };
                Challenge {
                    resource_metadata: get("resource_metadata").filter(|v| !v.is_empty()),
                    scope: get("scope")
                        .map(|s| s.split_ascii_whitespace().map(str::to_owned).collect())
                        .unwrap_or_default(),
                    error: get("error"),
                }
            })
            .unwrap_or_default()
    }
}

/// The `error` of the `DPoP` challenge among `headers` (RFC 9449 §7.1), e.g.
/// `use_dpop_nonce`.
pub(crate) fn dpop_error(headers: &HeaderMap) -> Option<String> {
    headers
        .get_all(WWW_AUTHENTICATE)
        .iter()
        .filter_map(|v| v.to_str().ok())
        .flat_map(parse)
        .find(|(scheme, _)| scheme.eq_ignore_ascii_case("dpop"))
        .and_then(|(_, params)| {
            params
                .into_iter()
                .find(|(k, _)| k == "error")
                .map(|(_, v)| v)
        })
}

fn is_tchar(c: char) -> bool {
    c.is_ascii_alphanumeric() || "!#$%&'*+-.^_`|~".contains(c)
}

/// A small cursor over a header value.
struct Cursor<'a> {
    text: &'a str,
    at: usize,
}

impl Cursor<'_> {
    fn peek(&self) -> Option<char> {
        self.text[self.at..].chars().next()
    }

    fn skip_spaces(&mut self) {
        while matches!(self.peek(), Some(' ' | '\t')) {
            self.at += 1;
        }
    }

    fn skip_spaces_and_commas(&mut self) {
        while matches!(self.peek(), Some(' ' | '\t' | ',')) {
            self.at += 1;
        }
    }

    fn token(&mut self) -> &str {
        let start = self.at;
        while self.peek().is_some_and(is_tchar) {
            self.at += 1;
        }
        &self.text[start..self.at]
    }

    /// A quoted string (the cursor is on the opening quote), unescaped.
    fn quoted(&mut self) -> String {
        let mut out = String::new();
        self.at += 1;
        let mut chars = self.text[self.at..].char_indices();
        while let Some((i, c)) = chars.next() {
            match c {
                '"' => {
                    self.at += i + 1;
                    return out;
                }
                '\\' => {
                    if let Some((_, escaped)) = chars.next() {
                        out.push(escaped);
                    }
                }
                c => out.push(c),
            }
        }
        self.at = self.text.len();
        out
    }

    /// A parameter value: a quoted string, or anything up to a comma or a space (a token,
    /// leniently: URLs and token68-like values are read whole).
    fn value(&mut self) -> String {
        if self.peek() == Some('"') {
            return self.quoted();
        }
        let start = self.at;
        while self.peek().is_some_and(|c| !matches!(c, ',' | ' ' | '\t')) {
            self.at += self.peek().map_or(1, char::len_utf8);
        }
        self.text[start..self.at].to_owned()
    }
}

/// Every challenge of one header value: (scheme, parameters with lower-cased names).
pub(crate) fn parse(text: &str) -> Vec<(String, Vec<(String, String)>)> {
    let mut c = Cursor { text, at: 0 };
    let mut challenges = Vec::new();
    loop {
        c.skip_spaces_and_commas();
        if c.peek().is_none() {
            return challenges;
        }
        let scheme = c.token().to_owned();
        if scheme.is_empty() {
            // Not a token: skip one character and look for the next challenge.
            c.at += c.peek().map_or(1, char::len_utf8);
            continue;
        }
        let mut params = Vec::new();
        loop {
            let before = c.at;
            c.skip_spaces_and_commas();
            let name = c.token().to_ascii_lowercase();
            c.skip_spaces();
            if name.is_empty() || c.peek() != Some('=') {
                // The next challenge's scheme (or a token68, ignored).
                if name.is_empty() {
                    // Skip whatever is there up to the next comma.
                    while c.peek().is_some_and(|ch| ch != ',') {
                        c.at += c.peek().map_or(1, char::len_utf8);
                    }
                    if c.peek().is_none() {
                        break;
                    }
                    continue;
                }
                c.at = before;
                break;
            }
            c.at += 1;
            // A token68 ends in `=` signs: `abc==` has nothing after them.
            while c.peek() == Some('=') {
                c.at += 1;
            }
            c.skip_spaces();
            let value = c.value();
            params.push((name, value));
        }
        challenges.push((scheme, params));
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use reqwest::header::HeaderValue;

    fn challenge(values: &[&str]) -> Challenge {
        let mut headers = HeaderMap::new();
        for v in values {
            headers.append(WWW_AUTHENTICATE, HeaderValue::from_str(v).unwrap());
        }
        Challenge::from_headers(&headers)
    }

    #[test]
    fn the_spec_examples_are_read() {
        let c = challenge(&[
            "Bearer resource_metadata=\"https://mcp.example.com/.well-known/oauth-protected-resource\",  scope=\"files:read\"",
        ]);
        assert_eq!(
            c.resource_metadata.as_deref(),
            Some("https://mcp.example.com/.well-known/oauth-protected-resource")
        );
        assert_eq!(c.scope, ["files:read"]);
        let c = challenge(&[
            "Bearer error=\"insufficient_scope\", scope=\"files:read files:write user:profile\", \
             resource_metadata=\"https://m/x\", error_description=\"Additional \\\"file\\\" write\"",
        ]);
        assert_eq!(c.error.as_deref(), Some("insufficient_scope"));
        assert_eq!(c.scope, ["files:read", "files:write", "user:profile"]);
        assert_eq!(c.resource_metadata.as_deref(), Some("https://m/x"));
    }

    #[test]
    fn the_bearer_challenge_is_found_among_others() {
        let c = challenge(&["Basic realm=\"a, b\", BEARER Error=invalid_token , Scope=x"]);
        assert_eq!(c.error.as_deref(), Some("invalid_token"));
        assert_eq!(c.scope, ["x"]);
        let c = challenge(&[
            "Negotiate abc==",
            "Bearer realm=\"r\", resource_metadata=https://h/p",
        ]);
        assert_eq!(c.resource_metadata.as_deref(), Some("https://h/p"));
        let parsed = parse("Negotiate abc==, Basic realm=x");
        assert_eq!(parsed.len(), 2, "{parsed:?}");
        assert_eq!(parsed[1].0, "Basic");
    }

    #[test]
    fn a_bare_or_garbled_challenge_has_no_parameters() {
        assert_eq!(challenge(&["Bearer"]), Challenge::default());
        assert_eq!(challenge(&[]), Challenge::default());
        assert_eq!(challenge(&["Basic realm=x"]), Challenge::default());
        let c = challenge(&["Bearer scope=\"unterminated"]);
        assert_eq!(c.scope, ["unterminated"]);
        let c = challenge(&["Bearer ===, @@@, scope=a"]);
        assert_eq!(c.scope, ["a"]);
        assert_eq!(
            challenge(&["Bearer resource_metadata=\"\""]).resource_metadata,
            None
        );
    }
}
