//! Which icons may be fetched (2025-11-25 and 2026-07-28 `basic/index.mdx` § Icons, security
//! considerations): only `https:` on the server's own origin, or a `data:` URI, which is
//! decoded and never fetched. Every other scheme (`http:`, `javascript:`, `file:`, `ftp:`,
//! `ws:`, an application's own scheme) is refused, as is `https:` on another origin. A stdio
//! server has no origin, so none of its network icons can be verified as same-origin: only its
//! `data:` icons are taken. Pure: the fetching is in `client/icons.rs`.

use base64::Engine;
use base64::engine::general_purpose::STANDARD;
use reqwest::Url;

/// What the client does with one icon `src`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Verdict {
    /// A `data:` URI: decoded in place, no traffic.
    Decode,
    /// An `https:` URL on the server's origin: fetched without credentials or redirects.
    Fetch(Url),
    /// Not taken, for this reason.
    Refuse(String),
    /// Reached whatever its scheme (only a deliberate defect decides this).
    #[cfg_attr(not(feature = "defects"), allow(dead_code))]
    Reach(Url),
}

/// The verdict on `src` for a server at `server` (`None`: a stdio server, with no origin).
pub(crate) fn judge(src: &str, server: Option<&Url>) -> Verdict {
    let Ok(url) = Url::parse(src) else {
        return Verdict::Refuse("not an absolute URI".into());
    };
    match url.scheme() {
        "data" => match decoded(src) {
            Some(_) => Verdict::Decode,
            None => Verdict::Refuse("a data: URI that is not base64 image data".into()),
        },
        "https" => match server {
            Some(server) if server.origin() == url.origin() => Verdict::Fetch(url),
            Some(_) => Verdict::Refuse("another origin than the server's".into()),
            None => Verdict::Refuse("a stdio server has no origin to match".into()),
        },
        other => Verdict::Refuse(format!("the scheme {other}: is neither https: nor data:")),
    }
}

/// The bytes of a `data:image/…;base64,` URI, if it is one.
pub(crate) fn decoded(src: &str) -> Option<Vec<u8>> {
    let rest = src.strip_prefix("data:")?;
    let (header, data) = rest.split_once(',')?;
    let media = header.strip_suffix(";base64")?;
    if !media.starts_with("image/") {
        return None;
    }
    STANDARD.decode(data).ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    const PNG: &str = "data:image/png;base64,iVBORw0KGgo=";

    #[test]
    fn only_https_on_the_server_origin_and_data_are_taken() {
        let server = Url::parse("https://localhost:8443/mcp").unwrap();
        let at = |src: &str| judge(src, Some(&server));
        assert_eq!(at(PNG), Verdict::Decode);
        assert!(matches!(
            at("https://localhost:8443/icons/a.png"),
            Verdict::Fetch(_)
        ));
        for refused in [
            "https://localhost:9443/icons/a.png",
            "https://example.com/a.png",
            "http://localhost:8443/icons/a.png",
            "javascript:alert(1)",
            "file:///etc/hostname",
            "ftp://localhost/a.png",
            "ws://localhost:8443/a",
            "slack://icons/a.png",
            "data:text/html;base64,PGI+",
            "icons/a.png",
        ] {
            assert!(matches!(at(refused), Verdict::Refuse(_)), "{refused} taken");
        }
        assert!(matches!(
            judge("https://localhost:8443/a.png", None),
            Verdict::Refuse(_)
        ));
        assert_eq!(judge(PNG, None), Verdict::Decode);
    }
}
