//! The defects' side of every seam: each hook handed to the seam file (`sent.rs`, `read.rs`,
//! …) that decides it under the switched-on defects.

use std::future::Future;
use std::time::Duration;

use reqwest::Url;
use reqwest::redirect::Policy;
use serde_json::Value;

use super::sent::Outgoing;
use crate::client::seams::ClientSeams;
use crate::content::SeenRules;
use crate::era::cache::Lifetime;
use crate::era::mrtr::Shape;
use crate::era::seams::{EraSeams, Verdict};
use crate::era::{Connected, Discovery};
use crate::error::Error;
use crate::handshake::Handshake;
use crate::handshake::seams::HandshakeSeams;
use crate::jsonrpc::Incoming;
use crate::listing::ListingRules;
use crate::schema::Policy as SchemaPolicy;
use crate::seams::Seams;
use crate::seams::wire::{AfterCut, AfterExit, Body, Pkce, Stop, Telling, TokenMethod, Wire};
use crate::session::{InFlight, Session};
use crate::tasks::seams::TaskSeams;
use crate::tools::{ToolOutput, ToolResult};

impl Wire for Seams {
    type Memory = Outgoing;

    fn memory(&self, modern_version: Option<String>) -> Outgoing {
        Outgoing::new(modern_version)
    }

    fn request_id(
        &self,
        memory: &Self::Memory,
        method: &str,
        params: &Value,
        fresh: impl FnOnce() -> i64,
    ) -> i64 {
        memory.request_id(&self.0, method, params, fresh)
    }

    fn messages(
        &self,
        memory: &Self::Memory,
        message: Value,
        fresh: impl FnOnce() -> i64,
    ) -> Vec<Value> {
        memory.messages(&self.0, message, fresh)
    }

    fn first_line(&self) -> Option<&'static str> {
        self.0.first_line()
    }

    fn http_request(&self, request: &mut reqwest::Request) {
        self.0.http_request(request)
    }

    fn metadata_version_header(&self) -> bool {
        !self.0.no_protocol_version_header
    }

    fn read_frame(
        &self,
        frame: &[u8],
        classify: impl FnOnce(&[u8]) -> Vec<Result<Incoming, String>>,
    ) -> Vec<Result<Incoming, String>> {
        self.0.read_frame(frame, classify)
    }

    fn request_reply(&self, reply: Option<Value>, answer: impl FnOnce() -> Value) -> Option<Value> {
        self.0.request_reply(reply, answer)
    }

    fn stray_response_waiter<T>(&self, oldest: impl FnOnce() -> Option<T>) -> Option<T> {
        self.0.stray_response_waiter(oldest)
    }

    fn notification_reply(&self, method: &str) -> Option<Value> {
        self.0.notification_reply(method)
    }

    fn fails_all_after(&self, method: &str) -> Option<Error> {
        self.0.fails_all_after(method)
    }

    fn after_server_exit(&self, correct: AfterExit) -> AfterExit {
        self.0.after_server_exit(correct)
    }

    fn reply_body(&self, body: Body) -> Body {
        self.0.reply_body(body)
    }

    fn fails_on_status(&self, status: Option<u16>) -> bool {
        self.0.fails_on_status(status)
    }

    fn after_stream_cut(&self, correct: AfterCut, resent: bool) -> AfterCut {
        self.0.after_stream_cut(correct, resent)
    }

    fn reconnect_delay(&self, correct: Duration, backoff: Duration) -> Duration {
        self.0.reconnect_delay(correct, backoff)
    }

    fn get_stream_delivers(&self) -> bool {
        self.0.get_stream_delivers()
    }

    fn reopens_stream(&self) -> bool {
        self.0.reopens_stream()
    }

    fn resume_from<'a, T>(&self, last: Option<&'a T>) -> Option<&'a T> {
        self.0.resume_from(last)
    }

    fn keeps_event_id_after_recut(&self) -> bool {
        self.0.keeps_event_id_after_recut()
    }

    fn media_type<'a>(&self, essence: &'a str, whole: &'a str) -> &'a str {
        self.0.media_type(essence, whole)
    }

    fn sse_fallback(&self, correct: bool, modern_error: bool) -> bool {
        self.0.sse_fallback(correct, modern_error)
    }

    fn sse_post_url<'a>(&self, endpoint: &'a Url, given: &'a Url) -> &'a Url {
        self.0.sse_post_url(endpoint, given)
    }

    fn stream_drop_loses_session(&self) -> bool {
        self.0.stream_drop_loses_session()
    }

    fn param_headers(
        &self,
        present: Vec<(String, String)>,
        absent: Vec<String>,
    ) -> Vec<(String, String)> {
        self.0.param_headers(present, absent)
    }

    fn raw_header_values(&self) -> bool {
        self.0.raw_header_values()
    }

    fn timer(&self, timer: impl Future<Output = ()>) -> impl Future<Output = ()> {
        self.0.timer(timer)
    }

    fn cancel<C: Future<Output = ()>>(&self, cancel: C) -> impl Future<Output = ()> {
        self.0.cancel(cancel)
    }

    fn cancels_after_answer(&self) -> bool {
        self.0.cancel_answered
    }

    fn telling(&self, telling: Telling, method: &str, closes: bool) -> (bool, Telling) {
        self.0.telling(telling, method, closes)
    }

    fn kill_on_drop(&self) -> bool {
        self.0.kill_on_drop()
    }

    fn server_group(&self) -> bool {
        self.0.server_group()
    }

    fn escalation(&self, escalation: &'static [Stop]) -> &'static [Stop] {
        self.0.escalation(escalation)
    }

    fn delete_on_close(&self, has_session: bool) -> bool {
        self.0.delete_on_close(has_session)
    }

    fn server_url(
        &self,
        text: &str,
        check: impl FnOnce(&str) -> Result<Url, Error>,
    ) -> Result<Url, Error> {
        self.0.server_url(text, check)
    }

    fn redirects(&self, policy: Policy) -> Policy {
        self.0.redirects(policy)
    }

    fn ssrf_filter_resolved(&self) -> bool {
        self.0.ssrf_filter_resolved()
    }

    fn ssrf_check(
        &self,
        url: &Url,
        correct: impl FnOnce() -> Result<(), String>,
    ) -> Result<(), String> {
        self.0.ssrf_check(url, correct)
    }

    fn ssrf_redirects(&self, policy: Policy) -> Policy {
        self.0.ssrf_redirects(policy)
    }

    fn declared_capabilities(&self, implied: Value, elicitation: Value) -> Value {
        self.0.declared_capabilities(implied, elicitation)
    }

    fn answers_at_once(&self) -> bool {
        self.0.answers_at_once()
    }

    fn roots_answered(&self, roots: Value) -> Value {
        self.0.roots_answered(roots)
    }

    fn announces_roots_change(&self, declared: bool) -> bool {
        self.0.announces_roots_change(declared)
    }

    fn answers_any_mode(&self) -> bool {
        self.0.answers_any_mode()
    }

    fn fills_defaults(&self, asked: bool) -> bool {
        self.0.fills_defaults(asked)
    }

    fn elicitation_answered(&self, content: Option<&Value>) {
        self.0.elicitation_answered(content)
    }

    fn progress_token(&self, fresh: impl FnOnce() -> i64) -> Option<i64> {
        self.0.progress_token(fresh)
    }

    fn ends_progress_on_response(&self) -> bool {
        self.0.ends_progress_on_response()
    }

    fn surfaces_unknown_progress(&self) -> bool {
        self.0.surfaces_unknown_progress()
    }

    fn events_reported(&self, events: Vec<Value>) -> Vec<Value> {
        self.0.events_reported(events)
    }

    fn rejection_code(&self, code: i64) -> i64 {
        self.0.rejection_code(code)
    }

    fn refuses_tool_problem(&self, problem: crate::handlers::ToolProblem) -> bool {
        self.0.refuses_tool_problem(problem)
    }

    fn mode_when_absent(&self, form: &'static str) -> &'static str {
        self.0.mode_when_absent(form)
    }

    fn url_received(&self, url: &str) {
        self.0.url_received(url)
    }

    fn opens_url(&self, consented: bool) -> bool {
        self.0.opens_url(consented)
    }

    fn url_as_opened(&self, url: String) -> String {
        self.0.url_as_opened(url)
    }

    fn offers_required_elicitations(&self) -> bool {
        self.0.offers_required_elicitations()
    }

    fn retries_after_url_accept(&self) -> bool {
        self.0.retries_after_url_accept()
    }

    fn reports_requests(&self) -> bool {
        self.0.reports_requests()
    }

    fn progress_timeout(&self, correct: (bool, Option<Duration>)) -> (bool, Option<Duration>) {
        self.0.progress_timeout(correct)
    }

    fn surfaces_foreign_subscription(&self) -> bool {
        self.0.surfaces_foreign_subscription()
    }

    fn list_change_ends_cache(&self) -> bool {
        self.0.list_change_ends_cache()
    }

    fn answers_cancelled(&self) -> bool {
        self.0.answers_cancelled()
    }

    fn auth_scheme_allowed(&self, correct: bool, url: &Url) -> bool {
        self.0.auth_scheme_allowed(correct, url)
    }

    fn auth_token_to_any_origin(&self) -> bool {
        self.0.auth_token_to_any_origin()
    }

    fn auth_redirect_with_token(
        &self,
        status: u16,
        location: Option<&str>,
        from: &Url,
    ) -> Option<Url> {
        self.0.auth_redirect_with_token(status, location, from)
    }

    fn auth_skips_destination_check(&self, url: &Url) -> bool {
        self.0.auth_skips_destination_check(url)
    }

    fn auth_token_in_url(&self, url: &mut Url, token: &str) {
        self.0.auth_token_in_url(url, token)
    }

    fn auth_uses_resource_metadata(&self) -> bool {
        self.0.auth_uses_resource_metadata()
    }

    fn auth_full_discovery(&self) -> bool {
        self.0.auth_full_discovery()
    }

    fn auth_issuer_accepted(&self, correct: bool) -> bool {
        self.0.auth_issuer_accepted(correct)
    }

    fn auth_prefers_dcr(&self) -> bool {
        self.0.auth_prefers_dcr()
    }

    fn auth_credentials_by_issuer(&self) -> bool {
        self.0.auth_credentials_by_issuer()
    }

    fn auth_pkce(
        &self,
        correct: Result<Pkce, String>,
        advertised: Option<&[String]>,
    ) -> Result<Pkce, String> {
        self.0.auth_pkce(correct, advertised)
    }

    fn auth_scopes(&self, correct: Vec<String>, supported: Option<&[String]>) -> Vec<String> {
        self.0.auth_scopes(correct, supported)
    }

    fn auth_resource<'a>(&self, resource: &'a str) -> Option<&'a str> {
        self.0.auth_resource(resource)
    }

    fn auth_any_prm_resource(&self) -> bool {
        self.0.auth_any_prm_resource()
    }

    fn auth_prm_resource<'a>(&self, published: &'a str, canonical: &'a str) -> &'a str {
        self.0.auth_prm_resource(published, canonical)
    }

    fn auth_step_up_keeps_scopes(&self) -> bool {
        self.0.auth_step_up_keeps_scopes()
    }

    fn auth_token_method(&self, correct: TokenMethod) -> TokenMethod {
        self.0.auth_token_method(correct)
    }

    fn auth_checks_state(&self) -> bool {
        self.0.auth_checks_state()
    }

    fn auth_checks_iss(&self) -> bool {
        self.0.auth_checks_iss()
    }

    fn auth_steps_up(&self) -> bool {
        self.0.auth_steps_up()
    }

    fn auth_step_up_unbounded(&self) -> bool {
        self.0.auth_step_up_unbounded()
    }

    fn auth_refreshes(&self) -> bool {
        self.0.auth_refreshes()
    }

    fn auth_rotated_refresh<S: Clone>(&self, new: S, old: &S) -> S {
        self.0.auth_rotated_refresh(new, old)
    }

    fn auth_retries_after_401(&self) -> bool {
        self.0.auth_retries_after_401()
    }

    fn auth_tries_next_location(&self, status: u16) -> bool {
        self.0.auth_tries_next_location(status)
    }

    fn auth_registration(&self, correct: Value) -> Value {
        self.0.auth_registration(correct)
    }

    fn auth_adds_offline_access(&self, listed: bool) -> bool {
        self.0.auth_adds_offline_access(listed)
    }

    fn auth_token_answer_usable(&self, has_refresh: bool) -> bool {
        self.0.auth_token_answer_usable(has_refresh)
    }

    fn auth_shares_new_token(&self) -> bool {
        self.0.auth_shares_new_token()
    }

    fn auth_uses_client_credentials(&self) -> bool {
        self.0.auth_uses_client_credentials()
    }

    fn auth_dpop_shape(&self) -> Option<crate::auth::dpop::Shape> {
        self.0.auth_dpop_shape()
    }

    fn auth_assertion_audience<'a>(&self, correct: &'a str, resource: &'a str) -> &'a str {
        self.0.auth_assertion_audience(correct, resource)
    }

    fn auth_iss_required(&self, advertised: bool) -> bool {
        self.0.auth_iss_required(advertised)
    }
}

impl EraSeams for Seams {
    fn era_cache_origin<'a>(&self, origin: Option<&'a str>) -> Option<&'a str> {
        self.0.era_cache_origin(origin)
    }

    async fn instead_of_probe(
        &self,
        session: &Session,
        dual: bool,
    ) -> Option<Result<Connected, Error>> {
        self.0.instead_of_probe(session, dual).await
    }

    fn judge_probe(
        &self,
        error: Error,
        dual: bool,
        judge: impl FnOnce(Error, bool) -> Verdict,
    ) -> Verdict {
        self.0.judge_probe(error, dual, judge)
    }

    async fn after_discover(&self, session: &Session) {
        self.0.after_discover(session).await
    }

    fn client_capabilities(&self, capabilities: &Value, found: &Discovery) -> Value {
        self.0.client_capabilities(capabilities, found)
    }

    fn retry_version(
        &self,
        error: &Error,
        tried: &[String],
        choose: impl FnOnce(&Error, &[String]) -> Option<String>,
    ) -> Option<String> {
        self.0.retry_version(error, tried, choose)
    }

    fn cache_lifetime(
        &self,
        method: &str,
        retry: bool,
        result: &Value,
        lifetime: Lifetime,
    ) -> Lifetime {
        self.0.cache_lifetime(method, retry, result, lifetime)
    }

    fn cache_key(&self, method: &str, key: String) -> String {
        self.0.cache_key(method, key)
    }

    fn cache_private(&self, private: bool) -> bool {
        self.0.cache_private(private)
    }

    fn discard_pages_on_invalid_cursor(&self) -> bool {
        self.0.discard_pages_on_invalid_cursor()
    }

    fn result_shape(
        &self,
        result: Value,
        shape: impl FnOnce(Value) -> Result<Shape, Error>,
    ) -> Result<Shape, Error> {
        self.0.result_shape(result, shape)
    }
}

impl HandshakeSeams for Seams {
    fn accept_initialize(
        &self,
        outcome: Result<Value, Error>,
        judge: impl FnOnce(Result<Value, Error>) -> Result<Handshake, Error>,
    ) -> Result<Handshake, Error> {
        self.0.accept_initialize(outcome, judge)
    }

    fn version_header<'a>(&self, offered: &'a str, negotiated: Option<&'a str>) -> Option<&'a str> {
        self.0.version_header(offered, negotiated)
    }

    fn while_initializing<'s>(&self, session: &'s Session) -> Option<InFlight<'s>> {
        self.0.while_initializing(session)
    }

    async fn after_handshake(&self, session: &Session) {
        self.0.after_handshake(session).await
    }
}

impl ClientSeams for Seams {
    fn renew_lost_session(&self, lost: bool) -> bool {
        self.0.renew_lost_session(lost)
    }

    fn icon_verdict(&self, verdict: crate::icons::Verdict, src: &str) -> crate::icons::Verdict {
        self.0.icon_verdict(verdict, src)
    }

    fn icon_credentials(&self) -> Option<&'static str> {
        self.0.icon_credentials()
    }

    fn icon_follows_redirects(&self) -> bool {
        self.0.icon_follows_redirects
    }

    async fn after_modern_connect(&self, session: &Session) {
        self.0.after_modern_connect(session).await
    }

    async fn clean_up_failed_connect(&self, session: &Session) {
        self.0.clean_up_failed_connect(session).await
    }

    fn listing_rules(&self) -> ListingRules {
        self.0.listing_rules()
    }

    fn partial_listing_on_error(&self, error: &Error) -> bool {
        self.0.partial_listing_on_error(error)
    }

    fn resume_listing(&self, error: &Error) -> bool {
        self.0.resume_listing(error)
    }

    fn tools_returned(&self, tools: Vec<Value>) -> Vec<Value> {
        self.0.tools_returned(tools)
    }

    fn keep_invalid_header_tools(&self) -> bool {
        self.0.keep_invalid_header_tools()
    }

    fn relist_on_header_mismatch(&self) -> bool {
        self.0.relist_on_header_mismatch()
    }

    fn may_send_undeclared(&self, declared: bool) -> bool {
        self.0.may_send_undeclared(declared)
    }

    fn content_rules(&self) -> SeenRules {
        self.0.content_rules()
    }

    fn schema_policy(&self) -> SchemaPolicy {
        self.0.schema_policy()
    }

    fn tool_output(
        &self,
        result: Value,
        output: impl FnOnce(Value) -> Result<ToolOutput, Error>,
    ) -> Result<ToolOutput, Error> {
        self.0.tool_output(result, output)
    }

    async fn call_outcome(
        &self,
        outcome: Result<ToolResult, Error>,
        session: &Session,
    ) -> Result<ToolResult, Error> {
        self.0.call_outcome(outcome, session).await
    }

    fn answer_outcome(
        &self,
        outcome: Result<Value, Error>,
        empty: impl FnOnce() -> Value,
    ) -> Result<Value, Error> {
        self.0.answer_outcome(outcome, empty)
    }

    fn may_subscribe(&self, declared: bool) -> bool {
        self.0.may_subscribe(declared)
    }

    fn resends_listen(&self) -> bool {
        self.0.resends_listen()
    }

    fn listen_filter(&self, requested: &Value, acknowledged: Value) -> Value {
        self.0.listen_filter(requested, acknowledged)
    }
}

impl TaskSeams for Seams {
    fn augments(
        &self,
        declared: bool,
        support: Option<&str>,
        asked: bool,
        decide: impl FnOnce(bool, Option<&str>, bool) -> bool,
    ) -> bool {
        self.0.augments(declared, support, asked, decide)
    }

    fn may_create_task(&self, method: &str, valid: bool) -> bool {
        self.0.may_create_task(method, valid)
    }

    fn poll_delay(&self, interval: Duration) -> Duration {
        self.0.poll_delay(interval)
    }

    fn waits_for_status(&self) -> bool {
        self.0.waits_for_status()
    }

    fn result_on_input_required(&self) -> bool {
        self.0.result_on_input_required()
    }

    fn answers_again(&self) -> bool {
        self.0.answers_again()
    }

    fn task_params(&self, params: Value, task_id: &str) -> Value {
        self.0.task_params(params, task_id)
    }

    fn cancels_by_notification(&self) -> bool {
        self.0.cancels_by_notification()
    }

    fn answer_related<'a>(&self, related: Option<&'a Value>) -> Option<&'a Value> {
        self.0.answer_related(related)
    }

    fn failed_outcome(&self, error: Error) -> Result<Value, Error> {
        self.0.failed_outcome(error)
    }

    fn serves_as_task(&self, declared: bool) -> bool {
        self.0.serves_as_task(declared)
    }

    fn created_status(&self, working: &'static str) -> &'static str {
        self.0.created_status(working)
    }

    fn result_waits(&self) -> bool {
        self.0.result_waits()
    }

    fn result_related(&self, with: bool) -> bool {
        self.0.result_related(with)
    }

    fn refuses_terminal_cancel(&self) -> bool {
        self.0.refuses_terminal_cancel()
    }

    fn refuses_unknown_task(&self) -> bool {
        self.0.refuses_unknown_task()
    }

    fn lists_received(&self) -> bool {
        self.0.lists_received()
    }

    fn task_times(&self) -> bool {
        self.0.task_times()
    }

    fn declares_tasks(&self) -> bool {
        self.0.declares_tasks()
    }

    fn cancels_received(&self) -> bool {
        self.0.cancels_received()
    }
}
