//! 2025-11-25 tasks over Streamable HTTP: a `tasks/result` that must wait is answered as an
//! SSE stream that carries the task's input requests (with the `related-task` `_meta`), then
//! the outcome; a task's status notifications travel on the standalone GET stream (queued
//! until one is open). Both are played by tasks of the fake's [`super::live::Live`], which
//! its `stop` aborts, so no wait outlives the trial.

use std::future::ready;
use std::sync::Arc;
use std::sync::atomic::Ordering;

use axum::http::StatusCode;
use axum::http::header::{CACHE_CONTROL, CONTENT_TYPE};
use axum::response::Response;
use mcp_harness_scenarios::model::Reply;
use serde_json::Value;

use super::endpoint::{Conn, Fake};
use super::reply::{close_guard, set, with_body};
use crate::jsonrpc;

/// The stream answering the `tasks/result` request `id` for the task `task`: the input
/// requests as they fall due, then the outcome, which ends it. A client that closes it
/// first is recorded (`stream_closed`), as for any request left unanswered.
pub(super) fn result(conn: &Conn, id: Value, task: String) -> Response {
    let fake = Arc::clone(&conn.fake);
    let guard = close_guard(conn, &id);
    let ended = Arc::clone(&guard.ended);
    let (name, body) = fake.live.open_post(None, 0, Some(Box::new(guard)));
    let player = Arc::clone(&fake);
    fake.live.spawn(async move {
        let (live, recorder) = (&player.live, &player.recorder);
        let send = |message| {
            live.write(recorder, &name, message, false);
            ready(())
        };
        let reply = player
            .tasks
            .wait_result(&player.scenario.server, &task, send)
            .await;
        let response = match reply {
            Reply::Result(result) => jsonrpc::result(&id, result),
            Reply::Error(error) => jsonrpc::error(&id, &error),
            Reply::Hang | Reply::Exit(_) | Reply::RawLine(_) => return,
        };
        ended.store(true, Ordering::SeqCst);
        live.write(recorder, &name, response, true);
        live.finish(&name);
    });
    let mut response = with_body(StatusCode::OK, body);
    set(&mut response, CONTENT_TYPE, "text/event-stream");
    set(&mut response, CACHE_CONTROL, "no-cache");
    response
}

/// Sends the task `task`'s status notifications on the GET stream as its status changes.
pub(super) fn watch(fake: &Arc<Fake>, task: String) {
    let player = Arc::clone(fake);
    fake.live.spawn(async move {
        let (live, recorder) = (&player.live, &player.recorder);
        let send = |message| {
            live.to_get(recorder, message);
            ready(())
        };
        player
            .tasks
            .watch_status(&player.scenario.server, &task, send)
            .await;
    });
}
