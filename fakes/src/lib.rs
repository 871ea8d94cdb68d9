//! Scripted fake MCP servers for the conformance harness.
//!
//! A fake plays the `server` script of one scenario and records a transcript of everything
//! it saw and did, which the runner checks after the trial. It deliberately does not use the
//! reference client crate: the two sides of the wire are implemented independently, so a
//! shared misunderstanding of the protocol cannot pass its own tests.
//!
//! | module | role |
//! |---|---|
//! | [`batch`] | JSON-RPC batches: when they are allowed, how they are recorded |
//! | [`cli`] | the stdio fake's argv and the prepared trial it plays ([`cli::Play`]) |
//! | [`script`] | choosing the answer to a request (pure, shared by every transport) |
//! | [`jsonrpc`] | classifying incoming messages, building answers |
//! | [`modern`] | the 2026-07-28 era: `_meta` and header checks, built-in modern answers |
//! | [`recorder`] | the append-only, capped transcript writer |
//! | [`sends`] | messages the fake starts itself: `$request` substitution, awaited responses |
//! | [`stdio`] | the newline-delimited JSON-RPC server loop on stdin/stdout |
//! | [`tasks`] | scripted tasks of both eras: the store, phases over time, the answers |
//! | [`http`] | the Streamable HTTP fake on `127.0.0.1`, run inside the runner's process |
//! | [`otlp`] | the OTLP/HTTP receiver a traces trial's client exports its spans to |
//! | [`tls`] | the run's CAs and certificates, and the rustls configs made from them |

pub mod batch;
pub mod cli;
pub mod faults;
pub mod http;
pub mod jsonrpc;
pub mod modern;
pub mod otlp;
pub mod recorder;
pub mod script;
pub mod sends;
pub mod stdio;
pub mod tasks;
pub mod tls;
