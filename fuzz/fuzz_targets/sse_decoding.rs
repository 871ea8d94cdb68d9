//! SSE decoding as the HTTP transport does it (chunks → framer → eventsource-stream), with
//! arbitrary bytes, caps and chunking. Properties: no panic, no stream that stalls; the events
//! do not depend on the chunking; within the cap and with valid UTF-8 (and no `\r`, which
//! plain eventsource-stream mishandles at the very end, and no leading byte-order mark, on which
//! it panics), the events are exactly those of plain eventsource-stream; each event's data goes
//! through the JSON-RPC classifier.
#![no_main]

use std::convert::Infallible;

use futures_util::stream;
use libfuzzer_sys::fuzz_target;
use mcp_harness_client::decode::{EventError, SseError, classify, sse_events};
use mcp_harness_fuzz::{collect, input};

type Decoded = Vec<Result<(String, String, String), EventError>>;

fn decode(cap: usize, chunks: &[&[u8]]) -> Decoded {
    let source = stream::iter(chunks.iter().map(|c| Ok::<_, Infallible>(c.to_vec())));
    collect(sse_events(source, cap))
        .into_iter()
        .map(|item| match item {
            Ok(e) => Ok((e.event, e.data, e.id)),
            Err(SseError::Event(e)) => Err(e),
            Err(SseError::Transport(never)) => match never {},
        })
        .collect()
}

fuzz_target!(|data: &[u8]| {
    let Some(input) = input(data) else { return };
    let whole = decode(input.cap, &[input.payload]);
    let cut = decode(input.cap, &input.chunks);
    assert_eq!(whole, cut, "chunking changed the events");
    for event in whole.iter().flatten() {
        let _ = classify(event.1.as_bytes());
    }
    let plain_text = std::str::from_utf8(input.payload).is_ok_and(|t| !t.starts_with('\u{feff}'))
        && !input.payload.contains(&b'\r');
    if plain_text && input.payload.len() <= input.cap {
        use eventsource_stream::Eventsource;
        let source = stream::iter([Ok::<_, Infallible>(input.payload.to_vec())]);
        let plain: Decoded = collect(source.eventsource())
            .into_iter()
            .map(|item| match item {
                Ok(e) => Ok((e.event, e.data, e.id)),
                Err(e) => Err(EventError::Malformed(e.to_string())),
            })
            .collect();
        assert_eq!(
            whole, plain,
            "the framer changed what eventsource-stream decodes"
        );
    }
});
