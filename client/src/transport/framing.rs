//! Cutting received bytes into messages, with a size cap, and nothing else: no I/O, no tasks.
//!
//! Both live transports read through this module (stdio through [`LineFramer`], HTTP event
//! streams through [`sse_events`]), and so do the fuzz targets in `fuzz/`, so what is fuzzed is
//! exactly what runs. Whatever the bytes, nothing here panics, and memory stays bounded by the
//! cap plus one chunk:
//! - **Lines (stdio).** A line longer than the cap is not buffered past it: the framer reports
//!   it once with its first bytes (enough to tell whose response it was) and discards the rest
//!   up to the next newline. Invalid UTF-8 is left for the JSON parser to refuse.
//! - **Events (SSE).** [`SseFramer`] splits the stream into lines and groups them into events
//!   before eventsource-stream sees them, so that eventsource-stream (which parses fields and
//!   builds events) only ever gets whole, valid UTF-8 lines ending in `\n`. An event over the
//!   cap, or with a line that is not UTF-8, becomes one error in its place and the stream goes
//!   on with the next event. Feeding whole lines also keeps eventsource-stream linear: fed a
//!   long line in small chunks it rescans its buffer on every chunk, and an undecodable byte
//!   makes it buffer the rest of the stream.

use std::collections::VecDeque;
use std::fmt;
use std::pin::Pin;
use std::task::{Context, Poll};

use eventsource_stream::{Event, EventStreamError, Eventsource};
use futures_util::{Stream, StreamExt};

/// How many leading bytes of an over-long message are kept, to find whose response it was.
pub const HEAD_BYTES: usize = 64 * 1024;

/// One result of [`LineFramer::push`].
#[derive(Debug, PartialEq, Eq)]
pub enum Frame {
    /// A whole line, without its `\n` (nor a `\r` just before it).
    Line(Vec<u8>),
    /// A line longer than the cap: its first bytes (at most [`HEAD_BYTES`]); the rest of it is
    /// being discarded.
    TooLong {
        /// The line's first bytes.
        head: Vec<u8>,
    },
}

/// Splits a byte stream into newline-terminated lines of at most `max` bytes each.
#[derive(Debug)]
pub struct LineFramer {
    max: usize,
    line: Vec<u8>,
    /// Inside a line that was already reported as too long.
    discarding: bool,
}

impl LineFramer {
    /// A framer for lines of at most `max` bytes (the `\n` not counted).
    pub fn new(max: usize) -> Self {
        LineFramer {
            max,
            line: Vec::new(),
            discarding: false,
        }
    }

    /// Takes the next chunk of the stream; returns the lines it completed, in order.
    pub fn push(&mut self, mut chunk: &[u8]) -> Vec<Frame> {
        let mut out = Vec::new();
        while !chunk.is_empty() {
            let (part, ended) = match chunk.iter().position(|&b| b == b'\n') {
                Some(i) => (&chunk[..i], true),
                None => (chunk, false),
            };
            chunk = &chunk[(part.len() + usize::from(ended))..];
            if self.discarding {
                self.discarding = !ended;
                continue;
            }
            if part.len() > self.max - self.line.len() {
                let mut head = std::mem::take(&mut self.line);
                let room = HEAD_BYTES.saturating_sub(head.len()).min(part.len());
                head.extend_from_slice(&part[..room]);
                head.truncate(HEAD_BYTES);
                head.shrink_to_fit();
                out.push(Frame::TooLong { head });
                self.discarding = !ended;
                continue;
            }
            self.line.extend_from_slice(part);
            if ended {
                let mut line = std::mem::take(&mut self.line);
                if line.last() == Some(&b'\r') {
                    line.pop();
                }
                out.push(Frame::Line(line));
            }
        }
        out
    }

    /// The stream has ended: the number of bytes of an unfinished line, which is dropped (a
    /// message is not complete without its newline). `None` when nothing was pending (or the
    /// unfinished line was already reported as too long).
    pub fn finish(self) -> Option<usize> {
        match (self.discarding, self.line.len()) {
            (true, _) | (false, 0) => None,
            (false, n) => Some(n),
        }
    }
}

/// Why one server-sent event could not be decoded.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum EventError {
    /// Its lines add up to more than the cap (in bytes).
    TooLarge {
        /// The cap.
        max: usize,
    },
    /// One of its lines is not UTF-8.
    InvalidUtf8,
    /// eventsource-stream refused it (not expected once lines are whole and UTF-8).
    Malformed(String),
}

impl fmt::Display for EventError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            EventError::TooLarge { max } => {
                write!(f, "an event larger than the {max}-byte message size cap")
            }
            EventError::InvalidUtf8 => f.write_str("an event that is not valid UTF-8"),
            EventError::Malformed(why) => write!(f, "a malformed event ({why})"),
        }
    }
}

/// Splits an SSE byte stream into lines (`\r\n`, `\r` or `\n`) and groups them into events.
///
/// The output is the event's field lines, each as valid UTF-8 ending in `\n`, followed by the
/// blank line that ends the event, or one [`EventError`] in place of an event that cannot be
/// decoded. Comment lines are dropped (eventsource-stream ignores them anyway) and not counted
/// toward the cap, so a long-lived stream may send keep-alive comments forever. A leading
/// byte-order mark is stripped here: eventsource-stream 0.2.3 panics on one (it slices it as
/// if it were one byte long), so [`sse_events`] also starts its input with an empty comment,
/// after which eventsource-stream never looks for a mark again.
#[derive(Debug)]
pub struct SseFramer {
    max: usize,
    /// The event's finished field lines, each ending in `\n`.
    lines: Vec<Vec<u8>>,
    /// The current line so far (not kept once the event has failed).
    partial: Vec<u8>,
    /// Bytes of the event so far: its field lines and the current line, terminators excluded.
    event_len: usize,
    /// Length of the current line, counted even while discarding (a blank line ends an event).
    line_len: usize,
    /// The last byte was a `\r`: a `\n` right after it belongs to the same line ending.
    after_cr: bool,
    /// No line has ended yet (where a byte-order mark may be).
    first_line: bool,
    /// The current line is a comment (starts with `:`): neither kept nor counted.
    comment: bool,
    /// The current event has failed; it is discarded up to its blank line.
    failed: Option<EventError>,
}

const BOM: &[u8] = "\u{feff}".as_bytes();

impl SseFramer {
    /// A framer for events of at most `max` bytes.
    pub fn new(max: usize) -> Self {
        SseFramer {
            max,
            lines: Vec::new(),
            partial: Vec::new(),
            event_len: 0,
            line_len: 0,
            after_cr: false,
            first_line: true,
            comment: false,
            failed: None,
        }
    }

    /// Takes the next chunk of the stream; returns what it completed, in order.
    pub fn push(&mut self, chunk: &[u8]) -> Vec<Result<Vec<u8>, EventError>> {
        let mut out = Vec::new();
        let mut rest = chunk;
        if rest.is_empty() {
            return out;
        }
        if self.after_cr && rest.first() == Some(&b'\n') {
            rest = &rest[1..];
        }
        self.after_cr = false;
        while !rest.is_empty() {
            let end = rest.iter().position(|&b| b == b'\n' || b == b'\r');
            let part = &rest[..end.unwrap_or(rest.len())];
            self.take_bytes(part);
            let Some(end) = end else {
                break;
            };
            let cr = rest[end] == b'\r';
            rest = &rest[end + 1..];
            if cr {
                match rest.first() {
                    Some(b'\n') => rest = &rest[1..],
                    Some(_) => {}
                    None => self.after_cr = true,
                }
            }
            self.end_line(&mut out);
        }
        out
    }

    /// Adds bytes of the current line, failing the event when it outgrows the cap.
    fn take_bytes(&mut self, part: &[u8]) {
        if self.line_len == 0 && part.first() == Some(&b':') {
            self.comment = true;
        }
        self.line_len += part.len();
        if self.failed.is_some() || self.comment {
            return;
        }
        if part.len() > self.max - self.event_len {
            self.fail(EventError::TooLarge { max: self.max });
            return;
        }
        self.event_len += part.len();
        self.partial.extend_from_slice(part);
    }

    fn fail(&mut self, why: EventError) {
        self.failed = Some(why);
        self.lines = Vec::new();
        self.partial = Vec::new();
        self.event_len = 0;
    }

    fn end_line(&mut self, out: &mut Vec<Result<Vec<u8>, EventError>>) {
        let mut line = std::mem::take(&mut self.partial);
        let mut line_len = std::mem::take(&mut self.line_len);
        if std::mem::take(&mut self.comment) {
            self.first_line = false;
            return;
        }
        if std::mem::take(&mut self.first_line) && line.starts_with(BOM) {
            line.drain(..BOM.len());
            line_len -= BOM.len();
            // The mark was counted while the event was still whole (the line starts with it).
            self.event_len -= BOM.len();
        }
        if line_len == 0 {
            // A blank line: the event is complete.
            match self.failed.take() {
                Some(why) => out.push(Err(why)),
                None if self.lines.is_empty() => {}
                None => {
                    // An event with an id or a retry but no data is still handed on,
                    // with empty data, so its id and retry reach the reader: eventsource-stream
                    // would drop it, and the retry with it.
                    let field = |l: &[u8], name: &[u8]| {
                        l.strip_prefix(name)
                            .is_some_and(|rest| rest.starts_with(b":") || rest == b"\n")
                    };
                    let has = |name: &[u8]| self.lines.iter().any(|l| field(l, name));
                    if !has(b"data") && (has(b"id") || has(b"retry")) {
                        self.lines.push(b"data:\n".to_vec());
                    }
                    out.extend(self.lines.drain(..).map(Ok));
                    out.push(Ok(b"\n".to_vec()));
                }
            }
            self.lines = Vec::new();
            self.event_len = 0;
            return;
        }
        if self.failed.is_some() {
            return;
        }
        if line.first() == Some(&b':') {
            // A comment after a byte-order mark (others are never kept).
            self.event_len -= line.len();
            return;
        }
        if std::str::from_utf8(&line).is_err() {
            return self.fail(EventError::InvalidUtf8);
        }
        line.push(b'\n');
        self.lines.push(line);
    }

    /// The stream has ended: true when an unfinished event was dropped (as the SSE rules say).
    pub fn finish(self) -> bool {
        self.failed.is_some() || !self.lines.is_empty() || self.line_len > 0
    }
}

/// Why [`sse_events`] could not produce an event.
#[derive(Debug)]
pub enum SseError<E> {
    /// The underlying byte stream failed; nothing more will come.
    Transport(E),
    /// One event could not be decoded; the stream goes on with the next.
    Event(EventError),
}

/// What the framed stream hands to eventsource-stream: whole lines, or a transport error or
/// an event's failure to pass through it.
enum Guard<E> {
    Transport(E),
    Event(EventError),
}

/// A byte stream cut by an [`SseFramer`].
struct Framed<S> {
    inner: Pin<Box<S>>,
    framer: Option<SseFramer>,
    ready: VecDeque<Result<Vec<u8>, EventError>>,
}

impl<S, B, E> Stream for Framed<S>
where
    S: Stream<Item = Result<B, E>>,
    B: AsRef<[u8]>,
{
    type Item = Result<Vec<u8>, Guard<E>>;

    fn poll_next(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Option<Self::Item>> {
        loop {
            if let Some(item) = self.ready.pop_front() {
                return Poll::Ready(Some(item.map_err(Guard::Event)));
            }
            if self.framer.is_none() {
                return Poll::Ready(None);
            }
            match self.inner.as_mut().poll_next(cx) {
                Poll::Pending => return Poll::Pending,
                Poll::Ready(Some(Err(e))) => return Poll::Ready(Some(Err(Guard::Transport(e)))),
                Poll::Ready(Some(Ok(chunk))) => {
                    let this = &mut *self;
                    if let Some(framer) = this.framer.as_mut() {
                        this.ready.extend(framer.push(chunk.as_ref()));
                    }
                }
                Poll::Ready(None) => {
                    // An unfinished event at the end is dropped, as the SSE rules say.
                    self.framer = None;
                }
            }
        }
    }
}

/// Decodes a server-sent event stream from chunks of bytes, as the HTTP transport reads it:
/// the chunks are cut by an [`SseFramer`] with the cap `max`, then parsed by eventsource-stream.
pub fn sse_events<S, B, E>(stream: S, max: usize) -> impl Stream<Item = Result<Event, SseError<E>>>
where
    S: Stream<Item = Result<B, E>>,
    B: AsRef<[u8]>,
{
    let framed = Framed {
        inner: Box::pin(stream),
        framer: Some(SseFramer::new(max)),
        // Starts eventsource-stream past its byte-order-mark check (see [`SseFramer`]).
        ready: VecDeque::from([Ok(b":\n".to_vec())]),
    };
    framed.eventsource().map(|item| {
        item.map_err(|e| match e {
            EventStreamError::Transport(Guard::Transport(e)) => SseError::Transport(e),
            EventStreamError::Transport(Guard::Event(e)) => SseError::Event(e),
            EventStreamError::Utf8(_) => SseError::Event(EventError::InvalidUtf8),
            EventStreamError::Parser(e) => SseError::Event(EventError::Malformed(e.to_string())),
        })
    })
}

#[cfg(test)]
mod tests {
    use std::convert::Infallible;
    use std::task::Waker;

    use futures_util::stream;

    use super::*;

    fn lines(max: usize, chunks: &[&[u8]]) -> (Vec<Frame>, Option<usize>) {
        let mut framer = LineFramer::new(max);
        let frames = chunks.iter().flat_map(|c| framer.push(c)).collect();
        (frames, framer.finish())
    }

    fn line(text: &str) -> Frame {
        Frame::Line(text.as_bytes().to_vec())
    }

    #[test]
    fn lines_split_across_and_within_chunks() {
        let (frames, rest) = lines(
            100,
            &[b"{\"a\":", b"1}\r\n{\"b\"", b":2}\n\n{\"c\":3}\n", b"tail"],
        );
        assert_eq!(
            frames,
            [
                line("{\"a\":1}"),
                line("{\"b\":2}"),
                line(""),
                line("{\"c\":3}")
            ]
        );
        assert_eq!(
            rest,
            Some(4),
            "an unfinished line is reported, not delivered"
        );
        assert_eq!(lines(100, &[b"x\n"]).1, None);
    }

    #[test]
    fn a_line_over_the_cap_is_reported_once_and_skipped_to_its_end() {
        let (frames, rest) = lines(4, &[b"abcd\nabc", b"de", b"fgh\nok\n"]);
        assert_eq!(
            frames,
            [
                line("abcd"),
                Frame::TooLong {
                    head: b"abcde".to_vec()
                },
                line("ok")
            ]
        );
        assert_eq!(rest, None);
        // Cut inside the over-long line: nothing more is reported for it.
        let (frames, rest) = lines(2, &[b"abcdef"]);
        assert_eq!(
            frames,
            [Frame::TooLong {
                head: b"abcdef".to_vec()
            }]
        );
        assert_eq!(rest, None);
    }

    #[test]
    fn the_head_of_an_over_long_line_is_bounded() {
        let big = vec![b'x'; 3 * HEAD_BYTES];
        let (frames, _) = lines(HEAD_BYTES * 2, &[&big, b"\n"]);
        let [Frame::TooLong { head }] = &frames[..] else {
            panic!("{frames:?}")
        };
        assert_eq!(head.len(), HEAD_BYTES);
    }

    fn events(max: usize, chunks: &[&[u8]]) -> Vec<Result<(String, String), String>> {
        let source = stream::iter(chunks.iter().map(|c| Ok::<_, Infallible>(c.to_vec())));
        let mut events = std::pin::pin!(sse_events(source, max));
        let mut cx = Context::from_waker(Waker::noop());
        let mut out = Vec::new();
        while let Poll::Ready(Some(item)) = events.as_mut().poll_next(&mut cx) {
            out.push(match item {
                Ok(e) => Ok((e.id, e.data)),
                Err(SseError::Event(e)) => Err(e.to_string()),
                Err(SseError::Transport(never)) => match never {},
            });
        }
        out
    }

    fn ok(id: &str, data: &str) -> Result<(String, String), String> {
        Ok((id.into(), data.into()))
    }

    #[test]
    fn events_come_whole_whatever_the_line_endings_and_chunks() {
        let text =
            b"\xef\xbb\xbf: hi\nid: 1\ndata: a\r\ndata: b\r\n\r\ndata: c\rdata: d\r\rdata:e\n\n";
        let expected = [ok("1", "a\nb"), ok("1", "c\nd"), ok("1", "e")];
        assert_eq!(events(100, &[text]), expected);
        let bytes: Vec<&[u8]> = text.chunks(1).collect();
        assert_eq!(events(100, &bytes), expected);
        // A `\r` that ends a chunk, then `\n`: one line ending, not a blank line.
        assert_eq!(
            events(100, &[b"data: x\r", b"\ndata: y\n\n"]),
            [ok("", "x\ny")]
        );
    }

    #[test]
    fn an_event_over_the_cap_or_not_utf8_is_one_error_and_the_stream_goes_on() {
        let chunks: [&[u8]; 4] = [
            b"data: 0123456789",
            b"0123456789\ndata: more\n\ndata: \xff\xfe\n\n",
            b": a long comment over the cap is dropped\n",
            b"data: ok\n\n",
        ];
        assert_eq!(
            events(16, &chunks),
            [
                Err("an event larger than the 16-byte message size cap".into()),
                Err("an event that is not valid UTF-8".into()),
                ok("", "ok"),
            ]
        );
    }

    /// Regression (fuzz/regressions/sse_decoding/bom-panics-eventsource-stream): fed as it
    /// comes, a leading byte-order mark made eventsource-stream 0.2.3 panic.
    #[test]
    fn an_event_with_only_an_id_or_a_retry_is_handed_on_with_empty_data() {
        let text: &[u8] = b"id: p-1\n\nretry: 700\n\nevent: x\n\n";
        let source = stream::iter([Ok::<_, Infallible>(text)]);
        let mut events = std::pin::pin!(sse_events(source, 100));
        let mut cx = Context::from_waker(Waker::noop());
        let mut got = Vec::new();
        while let Poll::Ready(Some(item)) = events.as_mut().poll_next(&mut cx) {
            got.push(item.unwrap_or_else(|_| panic!("an event failed")));
        }
        assert_eq!(
            got.len(),
            2,
            "an event with neither id nor retry is dropped: {got:?}"
        );
        assert_eq!((got[0].id.as_str(), got[0].data.as_str()), ("p-1", ""));
        assert_eq!(got[1].retry, Some(std::time::Duration::from_millis(700)));
    }

    #[test]
    fn a_leading_byte_order_mark_is_no_panic() {
        assert_eq!(events(100, &[b"\xef\xbb\xbfdata: {}\n\n"]), [ok("", "{}")]);
        let twice = events(100, &[b"\xef\xbb\xbf\xef\xbb\xbfdata: x\n\ndata: y\n\n"]);
        assert_eq!(
            twice,
            [ok("", "y")],
            "a second mark is part of a field name"
        );
    }

    #[test]
    fn an_unfinished_event_at_the_end_is_dropped() {
        assert_eq!(events(100, &[b"data: a\n\ndata: b\n"]), [ok("", "a")]);
        let mut framer = SseFramer::new(100);
        assert_eq!(framer.push(b"data: b"), []);
        assert!(framer.finish());
    }
}
