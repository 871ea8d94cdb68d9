//! Replays the inputs kept in `fuzz/regressions/` (every fuzz finding, and a few cases found
//! while writing the decoders) through the client's decoding on every `cargo test`, since the
//! fuzzers themselves are too slow for CI. Each input is fed whole and a byte at a time, with a
//! tiny, a small and a large cap; nothing may panic, and the chunking must not matter.

use std::convert::Infallible;
use std::path::Path;
use std::pin::pin;
use std::task::{Context, Poll, Waker};

use futures_util::{Stream, stream};
use mcp_harness_client::decode::{Frame, LineFramer, SseError, classify, response_id, sse_events};

const CAPS: [usize; 3] = [1, 64, 1 << 20];

/// The inputs of one target, without the two header bytes the fuzz targets read.
fn inputs(target: &str) -> Vec<(String, Vec<u8>)> {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../fuzz/regressions")
        .join(target);
    let Ok(entries) = std::fs::read_dir(&dir) else {
        return Vec::new();
    };
    let mut out: Vec<(String, Vec<u8>)> = entries
        .flatten()
        .map(|e| {
            let name = e.file_name().to_string_lossy().into_owned();
            let data = std::fs::read(e.path()).expect("readable");
            (name, data)
        })
        .collect();
    out.sort();
    out
}

fn payload(data: &[u8]) -> &[u8] {
    data.get(2..).unwrap_or_default()
}

fn collect<S: Stream>(stream: S) -> Vec<S::Item> {
    let mut stream = pin!(stream);
    let mut cx = Context::from_waker(Waker::noop());
    let mut out = Vec::new();
    while let Poll::Ready(Some(item)) = stream.as_mut().poll_next(&mut cx) {
        out.push(item);
    }
    out
}

fn lines(cap: usize, chunks: &[&[u8]]) -> Vec<Frame> {
    let mut framer = LineFramer::new(cap);
    chunks.iter().flat_map(|c| framer.push(c)).collect()
}

fn events(cap: usize, chunks: &[&[u8]]) -> Vec<String> {
    let source = stream::iter(chunks.iter().map(|c| Ok::<_, Infallible>(c.to_vec())));
    collect(sse_events(source, cap))
        .into_iter()
        .map(|item| match item {
            Ok(e) => format!("ok {:?} {:?} {:?}", e.event, e.id, e.data),
            Err(SseError::Event(e)) => format!("err {e}"),
            Err(SseError::Transport(never)) => match never {},
        })
        .collect()
}

#[test]
fn stdio_framing_regressions() {
    for (name, data) in inputs("stdio_framing") {
        let p = payload(&data);
        let bytes: Vec<&[u8]> = p.chunks(1).collect();
        for cap in CAPS {
            let whole = lines(cap, &[p]);
            let cut = lines(cap, &bytes);
            assert_eq!(whole.len(), cut.len(), "{name}, cap {cap}");
            for frame in whole {
                if let Frame::Line(l) = frame {
                    let _ = (classify(&l), response_id(&l));
                }
            }
        }
    }
}

#[test]
fn sse_decoding_regressions() {
    let found = inputs("sse_decoding");
    assert!(
        !found.is_empty(),
        "fuzz/regressions/sse_decoding holds the known cases"
    );
    for (name, data) in found {
        let p = payload(&data);
        let bytes: Vec<&[u8]> = p.chunks(1).collect();
        for cap in CAPS {
            assert_eq!(events(cap, &[p]), events(cap, &bytes), "{name}, cap {cap}");
        }
    }
}

#[test]
fn jsonrpc_classify_regressions() {
    let found = inputs("jsonrpc_classify");
    assert!(
        !found.is_empty(),
        "fuzz/regressions/jsonrpc_classify holds the known cases"
    );
    for (name, data) in found {
        let _ = classify(&data);
        for cut in 0..=data.len() {
            // An id is only ever read from its own canonical digits.
            if let Some(id) = response_id(&data[..cut]) {
                let text = id.to_string();
                let seen = data[..cut]
                    .windows(text.len())
                    .any(|w| w == text.as_bytes());
                assert!(seen, "{name}: id {id} read from {cut} bytes");
            }
        }
    }
}
