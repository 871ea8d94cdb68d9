//! What the client does with a url-mode elicitation's URL: it never fetches it (nor its
//! metadata); it opens it only when the user consented, and "opening" it means handing the
//! full URL, unchanged, to the user's browser, which the caller plays (an event
//! `url_opened`). A -32042 error (URLElicitationRequiredError, 2025-11-25 only) carries URL
//! elicitations a call needs: each is offered the same way, though nothing is answered.

use serde_json::{Value, json};

use super::{Listener, lock};
use crate::handlers::Spoken;
use crate::seams::wire::Wire;

/// The first revision with URL elicitations, and the only one with -32042.
const URL_MODE_SINCE: &str = "2025-11-25";

/// Whether `params` are a url-mode elicitation's.
fn url_mode(params: &Value) -> bool {
    params.get("mode").and_then(Value::as_str) == Some("url")
}

impl Listener {
    /// A url-mode elicitation (`params`) being handled in `spoken`: its URL is left alone,
    /// and reported as opened when the caller plays the browser and the user consented.
    pub(super) fn url_elicitation(&self, params: &Value, spoken: Spoken<'_>) {
        if !url_mode(params) {
            return;
        }
        if let Some(url) = params.get("url").and_then(Value::as_str) {
            self.seams.url_received(url);
        }
        let Some((url, consented)) = self.handlers.url_consent(params, spoken) else {
            return;
        };
        if self.seams.opens_url(consented) {
            let url = self.seams.url_as_opened(url);
            self.push(json!({"type": "url_opened", "url": url}));
        }
    }

    /// The `error.data` of a -32042 answer to one of the client's requests: from 2025-11-25
    /// each URL elicitation in `elicitations` is reported as an `elicitation/create` request
    /// would be and offered to the user (see [`Listener::url_elicitation`]); nothing is sent.
    pub(crate) fn url_elicitation_required(&self, data: Option<&Value>) {
        let offered = lock(&self.offered).clone();
        if offered.as_str() < URL_MODE_SINCE || !self.seams.offers_required_elicitations() {
            return;
        }
        let spoken = Spoken {
            modern: false,
            version: &offered,
        };
        let Some(Value::Array(items)) = data.and_then(|d| d.get("elicitations")) else {
            return;
        };
        for item in items.iter().filter(|item| url_mode(item)) {
            self.request_event("elicitation/create", item);
            self.url_elicitation(item, spoken);
        }
    }

    /// Whether a modern call goes on (is retried) after `answer` to the input request
    /// `params`; correct: always, a URL accept included.
    pub(crate) fn retries_after(&self, params: &Value, answer: &Value) -> bool {
        let accepted = answer.get("action").and_then(Value::as_str) == Some("accept");
        !(url_mode(params) && accepted) || self.seams.retries_after_url_accept()
    }
}
