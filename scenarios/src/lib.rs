//! The data that drives the harness, shared by the fakes and the runner.
//!
//! A case is one JSON file under `scenarios/`; its path is its id. This crate owns the
//! types of those files ([`model`]), how they are found and loaded with precise errors
//! ([`load`]), the JSON matchers that scripts and expectations use ([`matcher`]), and the
//! transcript a fake records for the runner to check ([`transcript`]).
//!
//! It depends on neither the client nor the fakes, so both sides of the wire can use it
//! without sharing an implementation of the protocol.

pub mod canonical;
pub mod load;
pub mod matcher;
pub mod model;
pub mod transcript;

pub use load::{Case, LoadError, load_case, load_dir, trials};
pub use model::Scenario;
