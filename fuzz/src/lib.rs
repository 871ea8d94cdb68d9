//! Helpers shared by the fuzz targets: how one fuzz input becomes a size cap, a payload and a
//! way of cutting the payload into chunks (as reads or HTTP body chunks would), and a poller
//! for the decoding streams (which never wait: their source is in memory).
//!
//! Input layout: byte 0 picks the cap, byte 1 seeds the chunk sizes (0: one chunk), the rest is
//! the payload. Seeds in `corpus/` carry a two-byte prefix for this reason.

use std::pin::pin;
use std::task::{Context, Poll, Waker};

use futures_util::Stream;

/// The caps a fuzz input can pick: tiny ones to reach the over-the-cap paths often.
const CAPS: [usize; 8] = [1, 2, 5, 16, 64, 300, 4096, 1 << 20];

/// One fuzz input, taken apart.
pub struct Input<'a> {
    /// The size cap to decode with.
    pub cap: usize,
    /// The payload.
    pub payload: &'a [u8],
    /// The payload cut into chunks (in order, together the whole payload).
    pub chunks: Vec<&'a [u8]>,
}

/// Takes a fuzz input apart; `None` when it is too short to carry the two header bytes.
pub fn input(data: &[u8]) -> Option<Input<'_>> {
    let [cap, seed, payload @ ..] = data else {
        return None;
    };
    let cap = CAPS[usize::from(*cap) % CAPS.len()];
    Some(Input {
        cap,
        payload,
        chunks: chunks(payload, *seed),
    })
}

/// Cuts `payload` into chunks of 1 to 16 bytes picked by a small generator seeded with `seed`;
/// seed 0 gives the payload as one chunk.
pub fn chunks(payload: &[u8], seed: u8) -> Vec<&[u8]> {
    if seed == 0 {
        return vec![payload];
    }
    let mut state = u32::from(seed).wrapping_mul(2_654_435_761) | 1;
    let mut out = Vec::new();
    let mut rest = payload;
    while !rest.is_empty() {
        state ^= state << 13;
        state ^= state >> 17;
        state ^= state << 5;
        let n = (state as usize % 16 + 1).min(rest.len());
        out.push(&rest[..n]);
        rest = &rest[n..];
    }
    out
}

/// Polls a stream that never waits to its end and returns what it produced.
pub fn collect<S: Stream>(stream: S) -> Vec<S::Item> {
    let mut stream = pin!(stream);
    let mut cx = Context::from_waker(Waker::noop());
    let mut out = Vec::new();
    loop {
        match stream.as_mut().poll_next(&mut cx) {
            Poll::Ready(Some(item)) => out.push(item),
            Poll::Ready(None) => return out,
            Poll::Pending => panic!("an in-memory stream is never pending"),
        }
    }
}
