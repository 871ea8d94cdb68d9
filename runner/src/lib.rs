//! The conformance runner as a library, shared by the in-repository `cargo xtask` and the
//! installable `mcp-harness` binary.

pub mod bench;
pub mod cli;
pub mod conformance;
pub mod paths;
pub mod report;
pub mod requirements;
pub mod sdk;
pub mod soak;
