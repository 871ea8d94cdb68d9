//! The seams: the decision points where the harness's deliberate defects may bend the client.
//!
//! A check that has never been seen failing proves nothing, so the harness's driver can switch
//! on defects (`--defect NAME`, `defects/`), each breaking the client in one way one check
//! exists to catch. The correct code owns the seams and never looks at a defect: before it
//! acts on a decision a defect may change, it asks its [`Seams`], handing over the correct
//! decision. Each hook's default body is that correct decision. Each set of hooks lives with
//! the code that asks it, so no seam imports its caller:
//!
//! | hooks | file | asked by |
//! |---|---|---|
//! | `Wire` | `seams/wire.rs` | the session, router, listener, handlers, transports and authorization: what is sent and read, giving up, shutdown, streams, TLS, destinations, OAuth |
//! | `HandshakeSeams` | `handshake/seams.rs` | the `initialize` handshake: the answer, the version header, what else is sent |
//! | `EraSeams` | `era/seams.rs` | the probe, the fallback, the version retry, the result cache |
//! | `ClientSeams` | `client/seams.rs` | listings, results, content, schemas, subscriptions, a connect's last steps |
//! | `TaskSeams` | `tasks/seams.rs` | tasks: augmenting a call, polling, a task's input requests, cancelling, a task's end |
//! | `ServersSeams` | `aggregate.rs` | many servers: the names a model is given, one server's failure |
//! | `TelemetrySeams` | `telemetry/seams.rs` | spans: whether they are exported, their ids, names, errors, the wire's context |
//!
//! Without the `defects` feature, [`Seams`] is an empty value that takes every default, so the
//! library as built has no switch at all. With it, [`Seams`] carries the switchboard
//! (`switches.rs`) and `defects/` implements the hooks.

#[cfg(feature = "defects")]
mod switches;
pub(crate) mod wire;

#[cfg(feature = "defects")]
pub use switches::Defects;
#[cfg(feature = "defects")]
pub(crate) use switches::{AuthDefects, ServersDefects, SsrfDefects, TelemetryDefects};

/// What the correct code asks at each seam. Without the `defects` feature it holds nothing and
/// every hook gives the correct decision.
#[cfg(not(feature = "defects"))]
#[derive(Debug, Clone, Copy, Default)]
pub(crate) struct Seams(());

/// What the correct code asks at each seam: the switched-on defects (`defects/` implements
/// the hooks for it).
#[cfg(feature = "defects")]
#[derive(Debug, Clone, Copy, Default)]
pub(crate) struct Seams(pub(crate) Defects);
