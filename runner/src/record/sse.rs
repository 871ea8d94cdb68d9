//! Server-sent events cut out of a byte stream whole and unchanged, so the recorder can relay
//! each event's exact bytes as soon as it is complete and record its message, or rewrite the
//! one event a fault changes. (`eventsource-stream` parses events but gives back no bytes to
//! relay; this is the small part of the format a relay needs: where an event ends, its data.)

/// Splits a stream of bytes into raw events, each ending with its blank line.
#[derive(Debug, Default)]
pub struct Framer {
    buf: Vec<u8>,
}

impl Framer {
    /// Adds `chunk`; returns every event it completed, bytes as they came.
    pub fn push(&mut self, chunk: &[u8]) -> Vec<Vec<u8>> {
        self.buf.extend_from_slice(chunk);
        let mut events = Vec::new();
        let mut event_start = 0;
        let mut line_start = 0;
        let mut i = 0;
        while i < self.buf.len() {
            let eol = match self.buf[i] {
                b'\n' => 1,
                b'\r' if i + 1 == self.buf.len() => break, // a `\r\n` may be split
                b'\r' if self.buf[i + 1] == b'\n' => 2,
                b'\r' => 1,
                _ => {
                    i += 1;
                    continue;
                }
            };
            let empty = i == line_start;
            i += eol;
            line_start = i;
            if empty {
                events.push(self.buf[event_start..i].to_vec());
                event_start = i;
            }
        }
        self.buf.drain(..event_start);
        events
    }

    /// What is left at the end of the stream (an event never finished).
    pub fn rest(self) -> Vec<u8> {
        self.buf
    }
}

/// The lines of a raw event, without their ends.
fn lines(raw: &[u8]) -> impl Iterator<Item = &str> {
    let text = std::str::from_utf8(raw).unwrap_or("");
    text.split('\n')
        .flat_map(|l| l.split('\r'))
        .filter(|l| !l.is_empty())
}

/// A message event's data (its `data:` lines joined by `\n`), or `None` for an event that
/// carries no message: no data or only blank data (a priming event), or a type other than
/// `message` (the deprecated HTTP+SSE transport's `endpoint`).
pub fn data(raw: &[u8]) -> Option<String> {
    let typed = lines(raw).filter_map(|l| field(l, "event")).last();
    if typed.is_some_and(|t| t != "message") {
        return None;
    }
    let data: Vec<&str> = lines(raw).filter_map(|l| field(l, "data")).collect();
    let data = data.join("\n");
    (!data.trim().is_empty()).then_some(data)
}

/// The value of `line` if it is the field `name` (`name: value`, `name:value`, or `name`).
fn field<'a>(line: &'a str, name: &str) -> Option<&'a str> {
    let rest = line.strip_prefix(name)?;
    match rest.strip_prefix(':') {
        Some(value) => Some(value.strip_prefix(' ').unwrap_or(value)),
        None if rest.is_empty() => Some(""),
        None => None,
    }
}

/// The event with its data replaced by `data` (one line; its other fields kept).
pub fn with_data(raw: &[u8], data: &str) -> Vec<u8> {
    let mut out = String::new();
    for line in lines(raw).filter(|l| !l.starts_with("data")) {
        out.push_str(line);
        out.push('\n');
    }
    out.push_str("data: ");
    out.push_str(data);
    out.push_str("\n\n");
    out.into_bytes()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn events_come_whole_and_unchanged_across_chunks() {
        let mut f = Framer::default();
        assert!(f.push(b"id: 1\r").is_empty());
        assert!(f.push(b"\ndata: {\"a\"").is_empty());
        let events = f.push(b":1}\r\n\r\n: keep-alive\n\ndata: x\n");
        assert_eq!(
            events,
            vec![
                b"id: 1\r\ndata: {\"a\":1}\r\n\r\n".to_vec(),
                b": keep-alive\n\n".to_vec()
            ]
        );
        assert_eq!(data(&events[0]).as_deref(), Some("{\"a\":1}"));
        assert_eq!(data(&events[1]), None);
        assert_eq!(data(b"id: p-0\ndata:\n\n"), None, "a priming event");
        assert_eq!(data(b"event: endpoint\ndata: /messages?s=1\n\n"), None);
        assert_eq!(data(b"event: message\ndata: {}\n\n").as_deref(), Some("{}"));
        assert_eq!(f.rest(), b"data: x\n".to_vec());
        assert_eq!(
            with_data(b"id: 7\ndata: a\ndata: b\n\n", "c"),
            b"id: 7\ndata: c\n\n".to_vec()
        );
    }
}
