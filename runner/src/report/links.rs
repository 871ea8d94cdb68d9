//! Turns a catalogue `source` (free text such as `spec 2025-06-18, 2025-11-25
//! docs/specification/{rev}/basic/lifecycle.mdx § Operation (...)`) into links a reader can
//! follow from the report.
//!
//! Specification sources link to the rendered page on modelcontextprotocol.io, one link per
//! revision the source names, with the section's anchor. The site rather than the GitHub
//! `.mdx` file: the site is what the catalogue quotes (headings, numbered items), its URLs are
//! versioned and stable, and it renders the components (`<Note>`, tabs) an `.mdx` file shows
//! as raw markup. Sources in this repository (`CLIENTS.md`, the boundary profile) and harness
//! advisories have no public address the report could rely on: they are named by their file
//! and anchor for a reader with a checkout, with no link.

use std::fmt::Write as _;

use super::page::esc;

/// The site that renders the specification.
const SPEC_SITE: &str = "https://modelcontextprotocol.io/specification";
/// JSON-RPC 2.0's specification.
const JSONRPC: &str = "https://www.jsonrpc.org/specification";

/// One link: its label and address.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Link {
    /// What the reader sees (a revision, or a file).
    pub label: String,
    /// The address (an `https://` URL), or `None` for a file of this repository.
    pub href: Option<String>,
}

/// The links a source names, in the order it names them, without repeats.
pub fn links(source: &str) -> Vec<Link> {
    let mut out: Vec<Link> = Vec::new();
    // A `spec` part runs on over the parts that follow it until another source begins
    // (`...; E docs/specification/2026-07-28/...` names the page of a revision it listed).
    let mut groups: Vec<String> = Vec::new();
    for part in source.split("; ").map(str::trim) {
        let starts = [
            "spec ",
            "JSON-RPC",
            "boundary profile",
            "CLIENTS.md",
            "harness",
        ];
        match groups.last_mut() {
            Some(g) if g.starts_with("spec ") && !starts.iter().any(|s| part.starts_with(s)) => {
                g.push_str("; ");
                g.push_str(part);
            }
            _ => groups.push(part.to_owned()),
        }
    }
    for part in &groups {
        if let Some(rest) = part.strip_prefix("spec ") {
            out.extend(spec_links(rest));
        } else if part.starts_with("JSON-RPC 2.0") {
            out.push(Link {
                label: "JSON-RPC 2.0".to_owned(),
                href: Some(JSONRPC.to_owned()),
            });
        } else if let Some(rest) = part.strip_prefix("boundary profile § ") {
            let anchor: String = rest
                .chars()
                .take_while(|c| c.is_ascii_alphanumeric() || *c == '-')
                .collect();
            out.push(Link {
                label: format!("scenarios/boundary-profile.md#{anchor}"),
                href: None,
            });
        } else if part.starts_with("CLIENTS.md") {
            out.push(Link {
                label: "CLIENTS.md".to_owned(),
                href: None,
            });
        }
    }
    let mut seen = Vec::new();
    out.retain(|l| {
        let key = (l.label.clone(), l.href.clone());
        let new = !seen.contains(&key);
        seen.push(key);
        new
    });
    out
}

/// A source as HTML: its own words, then the links it names.
pub fn source_html(source: &str) -> String {
    let mut out = esc(source);
    let links = links(source);
    if links.is_empty() {
        return out;
    }
    out.push_str(" <span class=\"links\">→ ");
    for (i, link) in links.iter().enumerate() {
        if i > 0 {
            out.push_str(" · ");
        }
        match &link.href {
            Some(href) => {
                let _ = write!(
                    out,
                    "<a href=\"{}\" rel=\"noreferrer\">{}</a>",
                    esc(href),
                    esc(&link.label)
                );
            }
            None => {
                let _ = write!(out, "<code>{}</code>", esc(&link.label));
            }
        }
    }
    out.push_str("</span>");
    out
}

/// Whether a word is a revision date, `YYYY-MM-DD`.
fn is_date(word: &str) -> bool {
    let b = word.as_bytes();
    b.len() == 10
        && b[4] == b'-'
        && b[7] == b'-'
        && b.iter()
            .enumerate()
            .all(|(i, c)| i == 4 || i == 7 || c.is_ascii_digit())
}

/// A page of one revision (or of whichever revisions do not name their own) and a heading.
struct Page {
    revision: Option<String>,
    path: String,
    heading: Option<String>,
}

/// The links of a `spec ...` part: the revisions it lists first, each to the page the part
/// names for it (a page under `docs/specification/<revision>/` is that revision's; any other
/// is every revision's), at the first heading after that page.
fn spec_links(rest: &str) -> Vec<Link> {
    let mut words = rest.split_whitespace().peekable();
    let mut revisions = Vec::new();
    while let Some(w) = words.peek() {
        let w = w.trim_end_matches(',');
        if !is_date(w) {
            break;
        }
        revisions.push(w.to_owned());
        words.next();
    }
    let pages = pages(rest);
    revisions
        .iter()
        .map(|rev| {
            let page = pages
                .iter()
                .find(|p| p.revision.as_deref() == Some(rev))
                .or_else(|| pages.iter().find(|p| p.revision.is_none()));
            let mut href = format!("{SPEC_SITE}/{rev}");
            if let Some(page) = page {
                if !page.path.is_empty() {
                    href.push('/');
                    href.push_str(&page.path);
                }
                if let Some(h) = &page.heading {
                    href.push('#');
                    href.push_str(&slug(h));
                }
            }
            Link {
                label: rev.clone(),
                href: Some(href),
            }
        })
        .collect()
}

/// Every `.mdx` page a part names, with the heading that follows it.
fn pages(text: &str) -> Vec<Page> {
    let mut out = Vec::new();
    let mut rest = text;
    while let Some(end) = rest.find(".mdx") {
        let start = rest[..end]
            .rfind(|c: char| c.is_whitespace() || c == '(')
            .map_or(0, |i| i + 1);
        let token = &rest[start..end];
        let after = &rest[end + 4..];
        let next_page = after.find(".mdx").unwrap_or(after.len());
        let heading = after[..next_page]
            .split_once("§ ")
            .map(|(_, h)| heading_of(h))
            .filter(|h| !h.is_empty());
        let (revision, path) = page_path(token);
        out.push(Page {
            revision,
            path,
            heading,
        });
        rest = after;
    }
    out
}

/// A heading's words: up to a parenthesis, a quote, a semicolon or an item number.
fn heading_of(text: &str) -> String {
    let cut = text
        .find(['(', '"', ';', '['])
        .unwrap_or(text.len())
        .min(text.find(" item").unwrap_or(text.len()))
        .min(text.find(" and §").unwrap_or(text.len()));
    text[..cut].trim().trim_end_matches([',', '.']).to_owned()
}

/// A page token (`docs/specification/{rev}/basic/index.mdx` without `.mdx`, `.../stdio`,
/// `basic/lifecycle`) as its revision, if it names one, and its path on the site.
fn page_path(token: &str) -> (Option<String>, String) {
    let mut revision = None;
    let mut path = token;
    if let Some(i) = path.find("docs/specification/") {
        let after = &path[i + "docs/specification/".len()..];
        let (rev, tail) = after.split_once('/').unwrap_or((after, ""));
        if is_date(rev) {
            revision = Some(rev.to_owned());
        }
        path = tail;
    }
    let mut path = path.trim_start_matches(".../").trim_matches('/').to_owned();
    // A short name the catalogue abbreviates (`.../stdio.mdx`): the transports live in
    // `basic/transports/` in the revision that split them.
    if matches!(path.as_str(), "stdio" | "streamable-http" | "index") {
        path = format!("basic/transports/{path}");
    } else if path.starts_with("transports/") || path.starts_with("authorization/") {
        path = format!("basic/{path}");
    } else if path == "authorization-server-discovery" || path == "client-registration" {
        path = format!("basic/authorization/{path}");
    }
    if let Some(dir) = path.strip_suffix("/index") {
        path = dir.to_owned();
    } else if path == "index" {
        path.clear();
    }
    if path
        .chars()
        .any(|c| !(c.is_ascii_alphanumeric() || "/-_".contains(c)))
    {
        path.clear();
    }
    (revision, path)
}

/// A heading's anchor as the site writes it: lower case, words joined by `-`.
fn slug(heading: &str) -> String {
    let mut out = String::new();
    for c in heading.trim().chars() {
        if c.is_alphanumeric() {
            out.extend(c.to_lowercase());
        } else if (c == ' ' || c == '-') && !out.ends_with('-') {
            out.push('-');
        }
    }
    out.trim_matches('-').to_owned()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn hrefs(source: &str) -> Vec<String> {
        links(source).into_iter().filter_map(|l| l.href).collect()
    }

    #[test]
    fn a_spec_source_links_each_revision_at_its_heading() {
        let s = "spec 2025-06-18, 2025-11-25 docs/specification/{rev}/basic/lifecycle.mdx § Operation (\"Both parties MUST\")";
        assert_eq!(
            hrefs(s),
            [
                "https://modelcontextprotocol.io/specification/2025-06-18/basic/lifecycle#operation",
                "https://modelcontextprotocol.io/specification/2025-11-25/basic/lifecycle#operation",
            ]
        );
    }

    #[test]
    fn a_revision_with_its_own_page_gets_that_page() {
        let s = "spec 2025-11-25, 2026-07-28 A–D docs/specification/{rev}/basic/transports.mdx § stdio; E docs/specification/2026-07-28/basic/transports/stdio.mdx (intro bullets)";
        assert_eq!(
            hrefs(s),
            [
                "https://modelcontextprotocol.io/specification/2025-11-25/basic/transports#stdio",
                "https://modelcontextprotocol.io/specification/2026-07-28/basic/transports/stdio",
            ]
        );
        let index = "spec 2025-03-26 basic/index.mdx § Requests; spec 2026-07-28 .../stdio.mdx § Receiving Messages";
        assert_eq!(
            hrefs(index),
            [
                "https://modelcontextprotocol.io/specification/2025-03-26/basic#requests",
                "https://modelcontextprotocol.io/specification/2026-07-28/basic/transports/stdio#receiving-messages",
            ]
        );
    }

    #[test]
    fn repository_sources_are_named_not_linked() {
        let l = links("boundary profile § pagination; CLIENTS.md § Environment");
        assert_eq!(l.len(), 2);
        assert_eq!(l[0].label, "scenarios/boundary-profile.md#pagination");
        assert!(l.iter().all(|l| l.href.is_none()));
        assert!(links("harness advisory: no text says").is_empty());
    }

    #[test]
    fn every_catalogue_source_gives_well_formed_links() {
        let text = include_str!("../../../scenarios/requirements.json");
        let catalogue: Vec<serde_json::Value> = serde_json::from_str(text).unwrap();
        for r in catalogue {
            let source = r["source"].as_str().unwrap();
            let found = links(source);
            if source.starts_with("spec ") {
                assert!(!found.is_empty(), "no link for {source}");
            }
            for href in found.iter().filter_map(|l| l.href.as_deref()) {
                assert!(href.starts_with("https://"), "{href}");
                assert!(
                    !href.contains(['{', '}', ' ', '"', '…']) && !href.contains(".mdx"),
                    "{source} gave {href}"
                );
            }
        }
    }

    #[test]
    fn source_html_escapes_the_words() {
        let html = source_html("spec 2025-06-18 basic/index.mdx § <Requests>");
        assert!(html.starts_with("spec 2025-06-18 basic/index.mdx § &lt;Requests&gt;"));
        assert!(html.contains(
            "href=\"https://modelcontextprotocol.io/specification/2025-06-18/basic#requests\""
        ));
    }
}
