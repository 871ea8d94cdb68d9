//! Reading a recording: `check`'s reader ([`crate::offline::read`]), the one place that knows
//! both formats (the harness transcript and the import lines) and names the file and line of
//! every error.

use std::path::Path;

use mcp_harness_scenarios::transcript::Record;

/// The records of the recording at `path`, import lines turned into the records the fakes
/// would have written (a client's message `Received`, a server's `Sent`).
pub fn read_recording(path: &Path) -> Result<Vec<Record>, String> {
    crate::offline::read::read(path).map(|(records, _)| records)
}

/// The records of a recording's text (see [`read_recording`]); errors name the line.
pub fn parse_recording(text: &str) -> Result<Vec<Record>, String> {
    crate::offline::read::parse("the recording", text).map(|(records, _)| records)
}
