//! The adapter's rmcp client handler: rmcp's defaults, except that a server's input requests
//! (elicitation, sampling, roots; multi round-trip in 2026-07-28) are answered with the plan's
//! canned answers for the call in progress. Without an answer it does what rmcp's defaults do
//! (decline an elicitation, refuse sampling, list no roots), so a plan without `input` sees
//! rmcp unchanged. (rmcp marks sampling and roots deprecated, SEP-2577; they are still part of
//! 2026-07-28, so this handler answers them.)
#![allow(deprecated)]

use std::future::{Future, ready};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};

use rmcp::ClientHandler;
use rmcp::model::{
    ClientConfig, CreateMessageRequestParams, CreateMessageResult, ElicitRequestParams,
    ElicitResult, ElicitationAction, ErrorData, ListRootsResult,
};
use rmcp::service::{RequestContext, RoleClient};
use serde::de::DeserializeOwned;
use serde_json::{Map, Value};

/// Answers by input-request method, set by the adapter before each call.
pub(crate) type Answers = Arc<Mutex<Map<String, Value>>>;

/// Set when the handler refused an input request for lack of an answer (as rmcp's default
/// refuses sampling), so the adapter can tell the call's failure from a server's JSON-RPC error.
pub(crate) type Refused = Arc<AtomicBool>;

#[derive(Clone)]
pub(crate) struct Handler {
    pub info: ClientConfig,
    pub answers: Answers,
    pub refused: Refused,
}

impl Handler {
    fn answer<T: DeserializeOwned>(&self, method: &str) -> Option<Result<T, ErrorData>> {
        let answers = self.answers.lock().unwrap_or_else(|p| p.into_inner());
        let value = answers.get(method)?.clone();
        Some(serde_json::from_value(value).map_err(|e| {
            ErrorData::internal_error(
                format!("the plan's answer for {method} does not parse: {e}"),
                None,
            )
        }))
    }
}

impl ClientHandler for Handler {
    fn get_info(&self) -> ClientConfig {
        self.info.clone()
    }

    fn create_elicitation(
        &self,
        _request: ElicitRequestParams,
        _context: RequestContext<RoleClient>,
    ) -> impl Future<Output = Result<ElicitResult, ErrorData>> + Send + '_ {
        let answer = self.answer("elicitation/create");
        ready(answer.unwrap_or_else(|| Ok(ElicitResult::new(ElicitationAction::Decline))))
    }

    fn create_message(
        &self,
        _params: CreateMessageRequestParams,
        _context: RequestContext<RoleClient>,
    ) -> impl Future<Output = Result<CreateMessageResult, ErrorData>> + Send + '_ {
        let answer = self.answer("sampling/createMessage");
        ready(answer.unwrap_or_else(|| {
            self.refused.store(true, Ordering::SeqCst);
            Err(ErrorData::method_not_found::<
                rmcp::model::CreateMessageRequestMethod,
            >())
        }))
    }

    fn list_roots(
        &self,
        _context: RequestContext<RoleClient>,
    ) -> impl Future<Output = Result<ListRootsResult, ErrorData>> + Send + '_ {
        let answer = self.answer("roots/list");
        ready(answer.unwrap_or_else(|| Ok(ListRootsResult::default())))
    }
}
