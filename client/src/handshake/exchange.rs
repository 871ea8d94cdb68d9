//! The `initialize` exchange over a session, judged by the rules of [`super`].

use std::future::pending;

use super::seams::HandshakeSeams;
use super::{Handshake, accept, initialize_params};
use crate::error::Error;
use crate::session::Session;

/// `initialize` offering `offered`, its checks, then `notifications/initialized` (delivered
/// before this returns); the server stream may open once it is done. Run again when an HTTP server ended the session.
pub(crate) async fn run(session: &Session, offered: &str) -> Result<Handshake, Error> {
    let seams = session.seams();
    let capabilities = session.router().listener().offering(offered);
    let outcome = match session.start("initialize", initialize_params(offered, capabilities)) {
        Ok(in_flight) => {
            let early = seams.while_initializing(session);
            let outcome = in_flight.wait(pending()).await;
            drop(early);
            outcome
        }
        Err(e) => Err(e),
    };
    let accepted = seams.accept_initialize(outcome, accept)?;
    let transport = session.transport();
    transport.set_protocol_version(seams.version_header(offered, accepted.protocol_version()));
    session.notify("notifications/initialized", None)?;
    // Connected means the server has had `notifications/initialized` (over HTTP its POST was
    // answered), so the first request after connect does not wait for it.
    transport.flush().await;
    transport.listen();
    seams.after_handshake(session).await;
    Ok(accepted)
}
