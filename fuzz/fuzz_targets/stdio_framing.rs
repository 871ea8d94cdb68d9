//! The stdio line framer with arbitrary bytes, caps and chunking. Properties: no panic; the
//! lines do not depend on how the bytes were chunked; every line is within the cap; a line
//! reported too long really is, and its head is its start; every line goes through the JSON-RPC
//! classifier and the id finder as the transport does.
#![no_main]

use libfuzzer_sys::fuzz_target;
use mcp_harness_client::decode::{Frame, HEAD_BYTES, LineFramer, classify, response_id};
use mcp_harness_fuzz::input;

fn frames(cap: usize, chunks: &[&[u8]]) -> (Vec<Frame>, Option<usize>) {
    let mut framer = LineFramer::new(cap);
    let mut out = Vec::new();
    for chunk in chunks {
        out.extend(framer.push(chunk));
    }
    (out, framer.finish())
}

fuzz_target!(|data: &[u8]| {
    let Some(input) = input(data) else { return };
    let (whole, whole_end) = frames(input.cap, &[input.payload]);
    let (cut, cut_end) = frames(input.cap, &input.chunks);
    assert_eq!(
        whole.len(),
        cut.len(),
        "chunking changed the number of lines"
    );
    assert_eq!(whole_end, cut_end, "chunking changed the unfinished tail");
    // The lines, as a plain split on newlines would see them.
    let mut lines = input.payload.split(|&b| b == b'\n');
    for (a, b) in whole.iter().zip(&cut) {
        let line = lines.next().expect("a frame per complete line");
        match (a, b) {
            (Frame::Line(a), Frame::Line(b)) => {
                assert_eq!(a, b);
                assert!(a.len() <= input.cap);
                assert_eq!(line.strip_suffix(b"\r").unwrap_or(line), &a[..]);
                let _ = classify(a);
                let _ = response_id(a);
            }
            (Frame::TooLong { head: a }, Frame::TooLong { head: b }) => {
                assert!(line.len() > input.cap, "a line within the cap was refused");
                for head in [a, b] {
                    assert!(head.len() <= HEAD_BYTES && line.starts_with(head));
                    assert!(head.len() >= HEAD_BYTES.min(input.cap + 1).min(line.len()));
                }
                let _ = response_id(a);
            }
            _ => panic!("chunking changed a frame's kind"),
        }
    }
});
