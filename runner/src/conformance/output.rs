//! What a client prints, read without trusting it. A client may flood its output, print
//! bytes that are not UTF-8 or that drive a terminal, or leave a process behind that holds
//! its pipes open forever; none of that may exhaust memory, garble a report, or keep a trial
//! waiting.
//!
//! Each pipe is read by a thread that publishes what it has read so far, so the trial can
//! take what came even while an escaped process still holds the pipe. Stdout is kept up to a
//! cap, and passing the cap is signalled at once so the runner can stop the client; stderr
//! keeps its tail. Control characters are escaped before anything is kept, and a bearer
//! token is redacted by [`redact`].

use std::io::{BufRead, BufReader, Read};
use std::sync::{Arc, Mutex};
use std::thread;
use std::time::{Duration, Instant};

/// The most outcome output kept from a client, in bytes; past it the client is stopped.
pub const STDOUT_CAP: usize = 1 << 20;
/// How much of the client's stderr is kept (its tail), in bytes.
const STDERR_TAIL: usize = 8 << 10;

/// What the client's stdout gave so far.
#[derive(Debug, Clone, Default)]
pub struct Lines {
    /// Complete lines, control characters escaped.
    pub lines: Vec<String>,
    /// Whether the output went past [`STDOUT_CAP`].
    pub overflow: bool,
}

#[derive(Default)]
struct Shared<T> {
    value: Mutex<(T, bool)>,
}

impl<T: Clone> Shared<T> {
    fn update(&self, f: impl FnOnce(&mut T)) {
        if let Ok(mut guard) = self.value.lock() {
            f(&mut guard.0);
        }
    }

    fn finish(&self) {
        if let Ok(mut guard) = self.value.lock() {
            guard.1 = true;
        }
    }

    fn get(&self) -> (T, bool) {
        self.value
            .lock()
            .map(|g| (g.0.clone(), g.1))
            .unwrap_or_else(|p| {
                let g = p.into_inner();
                (g.0.clone(), g.1)
            })
    }
}

/// A pipe being read in the background.
pub struct Reader<T> {
    shared: Arc<Shared<T>>,
}

impl<T: Clone + Default> Reader<T> {
    /// Whether the pipe reached its end (every writer closed it).
    pub fn finished(&self) -> bool {
        self.shared.get().1
    }

    /// What was read so far.
    pub fn take(&self) -> T {
        self.shared.get().0
    }
}

/// Waits until every reader has finished or `patience` has passed, whichever comes first.
pub fn settle<A: Clone + Default, B: Clone + Default>(
    a: &Reader<A>,
    b: &Reader<B>,
    patience: Duration,
) {
    let until = Instant::now() + patience;
    while !(a.finished() && b.finished()) && Instant::now() < until {
        thread::sleep(Duration::from_millis(2));
    }
}

/// Reads stdout as lines, up to [`STDOUT_CAP`]; calls `on_flood` once the cap is passed,
/// then drains the rest so the client never blocks on a full pipe.
pub fn read_stdout(
    source: impl Read + Send + 'static,
    on_flood: impl FnOnce() + Send + 'static,
) -> Reader<Lines> {
    let shared: Arc<Shared<Lines>> = Arc::default();
    let state = shared.clone();
    thread::spawn(move || {
        let mut reader = BufReader::new(source);
        let mut kept = 0usize;
        let mut buf = Vec::new();
        let mut batch = Vec::new();
        loop {
            buf.clear();
            let room = (STDOUT_CAP - kept) as u64 + 1;
            match reader.by_ref().take(room).read_until(b'\n', &mut buf) {
                Ok(0) | Err(_) => break,
                Ok(n) => kept += n,
            }
            if kept > STDOUT_CAP {
                state.update(|s| {
                    s.lines.append(&mut batch);
                    s.overflow = true;
                });
                on_flood();
                let _ = std::io::copy(&mut reader, &mut std::io::sink());
                break;
            }
            let line = String::from_utf8_lossy(&buf);
            batch.push(printable(line.trim_end_matches(['\n', '\r']), false));
            // Publish before the next read could block, so what came is never held back.
            if reader.buffer().is_empty() {
                state.update(|s| s.lines.append(&mut batch));
            }
        }
        state.update(|s| s.lines.append(&mut batch));
        state.finish();
    });
    Reader { shared }
}

/// The raw tail of stderr: its last bytes, and whether anything before them was dropped.
#[derive(Debug, Clone, Default)]
pub struct Tail {
    bytes: Vec<u8>,
    cut: bool,
}

impl Tail {
    /// The tail as text: at most [`STDERR_TAIL`] bytes, whole lines, escaped.
    pub fn text(&self) -> String {
        tail_text(&self.bytes, self.cut)
    }
}

/// Reads stderr, keeping its last [`STDERR_TAIL`] bytes.
pub fn read_stderr(mut source: impl Read + Send + 'static) -> Reader<Tail> {
    let shared: Arc<Shared<Tail>> = Arc::default();
    let state = shared.clone();
    thread::spawn(move || {
        let mut chunk = [0u8; 8192];
        while let Ok(n) = source.read(&mut chunk) {
            if n == 0 {
                break;
            }
            state.update(|tail| {
                tail.bytes.extend_from_slice(&chunk[..n]);
                if tail.bytes.len() > 2 * STDERR_TAIL {
                    let excess = tail.bytes.len() - STDERR_TAIL;
                    tail.bytes.drain(..excess);
                    tail.cut = true;
                }
            });
        }
        state.finish();
    });
    Reader { shared }
}

/// The kept tail as text. Once something was cut, the first (partial) line is dropped, so
/// a line cut in the middle (a token, say) never shows half of itself.
fn tail_text(tail: &[u8], cut: bool) -> String {
    let start = tail.len().saturating_sub(STDERR_TAIL);
    let mut kept = &tail[start..];
    if cut || start > 0 {
        kept = match kept.iter().position(|&b| b == b'\n') {
            Some(at) => &kept[at + 1..],
            None => &[],
        };
    }
    printable(&String::from_utf8_lossy(kept), true)
}

/// Escapes control characters (keeping tabs, and newlines when `multiline`), so that what a
/// client printed cannot move a terminal's cursor or break an XML report.
pub fn printable(text: &str, multiline: bool) -> String {
    let plain = |c: char| !c.is_control() || c == '\t' || (multiline && c == '\n');
    if text.chars().all(plain) {
        return text.to_owned();
    }
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        match c {
            '\t' => out.push(c),
            '\n' if multiline => out.push(c),
            c if c.is_control() => out.extend(c.escape_default()),
            c => out.push(c),
        }
    }
    out
}

/// Replaces every occurrence of `secret` in `text` with `[redacted]`; true when there was
/// one. A piece of the secret at either end of `text` (where output was cut or a writer
/// was killed mid-line) is redacted too, without counting as a leak.
pub fn redact(text: &mut String, secret: &str) -> bool {
    if secret.is_empty() {
        return false;
    }
    let leaked = text.contains(secret);
    if leaked {
        *text = text.replace(secret, "[redacted]");
    }
    // Pieces of at least this many characters are redacted at the ends.
    const PIECE: usize = 8;
    let chars: Vec<(usize, char)> = secret.char_indices().collect();
    for &(at, _) in chars.iter().skip(1) {
        let suffix = &secret[at..];
        if suffix.chars().count() >= PIECE && text.starts_with(suffix) {
            text.replace_range(..suffix.len(), "[redacted]");
            break;
        }
    }
    for &(at, _) in chars.iter().rev() {
        let prefix = &secret[..at];
        if prefix.chars().count() >= PIECE && text.ends_with(prefix) {
            let from = text.len() - prefix.len();
            text.replace_range(from.., "[redacted]");
            break;
        }
    }
    leaked
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn control_characters_are_escaped() {
        assert_eq!(printable("a\u{1b}[2J\tb\0", false), "a\\u{1b}[2J\tb\\u{0}");
        assert_eq!(printable("a\nb", true), "a\nb");
        assert_eq!(printable("a\nb", false), "a\\nb");
    }

    #[test]
    fn secrets_are_redacted_whole_and_in_pieces_at_the_ends() {
        let secret = "mcp-harness-secret-0123456789abcdef";
        let mut text = format!("token={secret} again {secret}");
        assert!(redact(&mut text, secret));
        assert_eq!(text, "token=[redacted] again [redacted]");
        let mut cut = format!("{} rest", &secret[10..]);
        assert!(!redact(&mut cut, secret));
        assert_eq!(cut, "[redacted] rest");
        let mut killed = format!("token={}", &secret[..25]);
        assert!(!redact(&mut killed, secret));
        assert_eq!(killed, "token=[redacted]");
        let mut clean = "nothing here".to_owned();
        assert!(!redact(&mut clean, secret));
        assert_eq!(clean, "nothing here");
    }

    #[test]
    fn a_cut_tail_starts_at_a_whole_line() {
        let mut tail = vec![b'x'; STDERR_TAIL];
        tail.extend_from_slice(b"\nlast line\n");
        assert_eq!(tail_text(&tail, true), "last line\n");
        assert_eq!(tail_text(b"short\n", false), "short\n");
    }
}
