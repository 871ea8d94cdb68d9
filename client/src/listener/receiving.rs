//! The listener's side of the tasks the client receives (2025-11-25): which server request
//! becomes a task, and the answers about tasks, from the store in `tasks/received.rs`.

use std::sync::Arc;

use serde_json::Value;

use super::{Listener, lock};
use crate::handlers::{Handled, Spoken};
use crate::seams::wire::Wire;
use crate::tasks::received;
use crate::tasks::seams::TaskSeams;

impl Listener {
    /// A request the client answers as a task receiver: a task-augmented request it serves
    /// as a task (answered at once with the created task), or a request about its tasks
    /// (`tasks/result` answered once the task ended). `None`: neither.
    pub(super) fn task_request(
        &self,
        id: &Value,
        method: &str,
        params: &Value,
        spoken: Spoken<'_>,
    ) -> Option<Option<Value>> {
        let runtime = tokio::runtime::Handle::try_current().ok();
        if method == "tasks/result" {
            let Some(runtime) = runtime else {
                let why = "tasks/result needs the client's runtime";
                let error = (crate::jsonrpc::INTERNAL_ERROR, why.to_owned());
                return Some(Some(received::response(id.clone(), Err(error))));
            };
            let (store, replier, seams, id) = (
                Arc::clone(&self.received),
                Arc::clone(&self.replier),
                self.seams,
                id.clone(),
            );
            let params = params.clone();
            runtime.spawn(async move {
                let reply = received::response(id, store.result(&params).await);
                let fallback = reply.clone();
                if let Some(reply) = seams.request_reply(Some(reply), || fallback)
                    && let Some(send) = replier.get()
                {
                    send(reply);
                }
            });
            return Some(None);
        }
        if let Some(reply) = self.received.serve(method, params) {
            return Some(Some(received::response(id.clone(), reply)));
        }
        let asked = params.get("task").is_some_and(Value::is_object);
        let declared = self.handlers.as_task(method, params, spoken);
        if !asked || !self.seams.serves_as_task(declared) {
            return None;
        }
        let roots = lock(&self.roots).clone();
        let (outcome, delay) =
            match self
                .handlers
                .handle(method, params, &roots, spoken, &self.seams)
            {
                Handled::Result(result, delay) => (Ok(result), delay),
                Handled::Error(code, message) => (Err((code, message)), None),
                Handled::Unhandled => return None,
            };
        let created = self
            .received
            .create(params, outcome, delay, runtime.as_ref());
        Some(Some(crate::jsonrpc::result_response(id.clone(), created)))
    }
}
