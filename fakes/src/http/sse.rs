//! Server-sent events framing, and the paced response bodies the scripted faults need: a
//! stream written a few bytes at a time, a body cut off halfway, a stream held open.
//!
//! Bodies are plain streams polled by the connection's own task, never by a spawned one,
//! so aborting the connection (at `stop`) ends them too.

use std::collections::VecDeque;
use std::time::Duration;

use axum::body::{Body, Bytes};

/// Sizes of the pieces a split stream is written in, in turn: small and uneven, so that
/// field names, values and event boundaries all land across pieces somewhere.
const SPLIT_SIZES: [usize; 5] = [3, 5, 2, 7, 4];

/// Pause between the pieces of a split stream.
pub const SPLIT_GAP: Duration = Duration::from_millis(1);

/// Pause before cutting a connection, so the bytes already handed over leave first.
const CUT_FLUSH: Duration = Duration::from_millis(20);

/// How often an open GET stream carries a keep-alive comment when the script sets no
/// `keepalive_ms`.
pub const KEEP_ALIVE_EVERY: Duration = Duration::from_secs(1);

/// A keep-alive: an SSE comment, which clients must ignore.
pub const KEEP_ALIVE: &str = ": keep-alive\n\n";

/// One `message` event carrying `data`; a multi-line `data` becomes several `data:` lines,
/// which the client joins back with newlines.
pub fn event(data: &str) -> String {
    let mut out = String::from("event: message\n");
    for line in data.split('\n') {
        out.push_str("data: ");
        out.push_str(line.strip_suffix('\r').unwrap_or(line));
        out.push('\n');
    }
    out.push('\n');
    out
}

/// One `message` event whose data is `data` verbatim, on one line (bytes that need not be
/// UTF-8, for the faults that send such).
pub fn event_bytes(data: &[u8]) -> Vec<u8> {
    let mut out = b"event: message\ndata: ".to_vec();
    out.extend_from_slice(data);
    out.extend_from_slice(b"\n\n");
    out
}

/// What a paced body does after its last piece.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum End {
    /// Ends the body normally.
    Finish,
    /// Fails the body, which makes the server drop the connection mid-response.
    Cut,
    /// Never ends, and sends nothing more.
    Hold,
}

/// A response body given as pieces written with a pause between them, then an [`End`].
#[derive(Debug)]
pub struct Paced {
    pieces: VecDeque<Bytes>,
    gap: Duration,
    end: End,
    /// Dropped with the body (see `reply::CloseGuard`).
    guard: Option<Box<dyn std::fmt::Debug + Send + Sync>>,
}

impl Paced {
    /// `bytes` in one piece, or in small uneven pieces with [`SPLIT_GAP`] between them when
    /// `split`, then `end`.
    pub fn new(bytes: &[u8], split: bool, end: End) -> Paced {
        let mut pieces = VecDeque::new();
        let mut rest = bytes;
        let sizes = SPLIT_SIZES
            .iter()
            .cycle()
            .map(|&n| if split { n } else { usize::MAX });
        for size in sizes {
            if rest.is_empty() {
                break;
            }
            let (piece, tail) = rest.split_at(size.min(rest.len()));
            pieces.push_back(Bytes::copy_from_slice(piece));
            rest = tail;
        }
        let gap = if split { SPLIT_GAP } else { Duration::ZERO };
        Paced {
            pieces,
            gap,
            end,
            guard: None,
        }
    }

    /// Keeps `guard` alive as long as the body: it is dropped when the body ends or goes away.
    pub fn with_guard(mut self, guard: impl std::fmt::Debug + Send + Sync + 'static) -> Paced {
        self.guard = Some(Box::new(guard));
        self
    }

    /// `bytes` one byte at a time with `gap` between them, then `end`.
    pub fn dripped(bytes: &[u8], gap: Duration, end: End) -> Paced {
        Paced::in_pieces(bytes.chunks(1), gap, end)
    }

    /// `pieces` in turn with `gap` between them, then `end`.
    pub fn in_pieces<'a>(
        pieces: impl IntoIterator<Item = &'a [u8]>,
        gap: Duration,
        end: End,
    ) -> Paced {
        Paced {
            pieces: pieces.into_iter().map(Bytes::copy_from_slice).collect(),
            gap,
            end,
            guard: None,
        }
    }

    /// Turns the plan into a response body.
    pub fn into_body(self) -> Body {
        let stream = futures_util::stream::unfold((self, true), |(mut paced, first)| async move {
            if let Some(piece) = paced.pieces.pop_front() {
                if !first && !paced.gap.is_zero() {
                    tokio::time::sleep(paced.gap).await;
                }
                return Some((Ok(piece), (paced, false)));
            }
            match paced.end {
                End::Finish => None,
                End::Cut => {
                    tokio::time::sleep(CUT_FLUSH).await;
                    paced.end = End::Finish;
                    let cut = std::io::Error::other("scripted cut: the body stops halfway");
                    Some((Err(cut), (paced, false)))
                }
                End::Hold => std::future::pending().await,
            }
        });
        Body::from_stream(stream)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn events_frame_each_line_of_data() {
        assert_eq!(event(r#"{"a":1}"#), "event: message\ndata: {\"a\":1}\n\n");
        assert_eq!(event("x\r\ny"), "event: message\ndata: x\ndata: y\n\n");
    }

    #[test]
    fn split_keeps_every_byte_in_small_pieces() {
        let text = event(r#"{"jsonrpc":"2.0","id":1,"result":{}}"#);
        let paced = Paced::new(text.as_bytes(), true, End::Finish);
        assert!(paced.pieces.len() > 5);
        assert!(paced.pieces.iter().all(|p| !p.is_empty() && p.len() <= 7));
        let joined: Vec<u8> = paced.pieces.iter().flat_map(|p| p.to_vec()).collect();
        assert_eq!(joined, text.as_bytes());
        assert_eq!(
            Paced::new(text.as_bytes(), false, End::Hold).pieces.len(),
            1
        );
        assert!(Paced::new(b"", false, End::Finish).pieces.is_empty());
    }
}
