"""fastmcp's OAuth helper (`fastmcp.client.auth.OAuth`), made headless for authorization trials.

fastmcp's `OAuth` is the MCP SDK's `OAuthClientProvider` (discovery, registration, PKCE,
`state`, `iss`, refresh, step-up are all the SDK's) plus fastmcp's own choices: its client
metadata, a pre-registered client's record (the token endpoint method it is registered with,
MCP_HARNESS_AUTH_CLIENT_AUTH_METHOD, passed as fastmcp's `additional_client_metadata`; without
it fastmcp's default, `client_secret_post` when a secret is given, else `none`), its token store (in memory here: a fresh `MemoryStore` per trial), and its retry with
a fresh registration when the authorization endpoint refuses the client. Its user's part is a
browser: `redirect_handler` GETs the authorization URL once as a pre-flight (400 means a stale
client), then opens a browser; `callback_handler` serves the redirect URI on a local port and
waits for the browser. A trial has no browser and the harness owns the redirect URI's port, so
`HeadlessOAuth` replaces exactly those two with the kit's headless step: one GET of the
authorization URL (it plays both the pre-flight and the browser; a 400 is fastmcp's
ClientNotFoundError, as its pre-flight reads it), and the redirect's `code`, `state` and `iss`,
as received, as the callback's result (fastmcp's callback page raises on an error redirect; so
does this one, `auth_failed` naming the error). The redirect URI is the one fastmcp builds from
`callback_host` and `callback_port`, set from MCP_HARNESS_AUTH_REDIRECT_URI, which has
fastmcp's shape (`http://127.0.0.1:PORT/callback`).

OAuth errors the SDK raises inside httpx2's auth flow are dropped by the streamable HTTP
transport (see adapters/python/oauth.py); `HeadlessOAuth.async_auth_flow` notes them without
changing the flow, so the step reports `auth_failed` with the library's message.
"""

from __future__ import annotations

from typing import Any
from urllib.parse import urlsplit

import mcp_harness_kit as kit
from mcp_harness_kit import Config, StepError

from fastmcp.client.auth import OAuth
from fastmcp.client.auth.oauth import ClientNotFoundError, ExpiredClientRegistrationError
from key_value.aio.stores.memory import MemoryStore
from mcp.client.auth import AuthorizationCodeResult, OAuthFlowError

#: OAuth errors raised during the current step (cleared before each step).
AUTH_ERRORS: list[BaseException] = []
AUTH_ERROR_TYPES = (OAuthFlowError, StepError, ClientNotFoundError, ExpiredClientRegistrationError)


class HeadlessOAuth(OAuth):
    """fastmcp's OAuth with the kit's headless step as the browser and the callback page."""

    def __init__(self, config: Config) -> None:
        auth = config.auth
        assert auth is not None
        redirect = urlsplit(auth.redirect_uri)
        self.harness = config
        self.location: str | None = None
        super().__init__(
            client_name="mcp-harness fastmcp adapter",
            token_storage=MemoryStore(),
            callback_host=redirect.hostname or "127.0.0.1",
            callback_port=redirect.port,
            client_metadata_url=auth.client_metadata_url,
            client_id=auth.client_id,
            client_secret=auth.client_secret,
            additional_client_metadata={"token_endpoint_auth_method": auth.client_auth_method} if auth.client_auth_method else None,
        )

    async def redirect_handler(self, authorization_url: str) -> None:
        try:
            self.location = await kit.headless_authorize(authorization_url, self.harness.ca_file, self.harness.timeout_s)
        except StepError as e:
            if "answered 400" in e.message:  # the kit's wording for a 400; fastmcp's pre-flight reads it so
                raise ClientNotFoundError("OAuth client not found - cached credentials may be stale") from e
            raise

    async def callback_handler(self) -> AuthorizationCodeResult:
        params = kit.callback_params(self.location) if self.location else {}
        self.location = None
        if "code" not in params:
            error = params.get("error", "no code")
            raise StepError("auth_failed", f"the authorization redirect carried error={error!r}")
        kit.secret(params["code"])
        return AuthorizationCodeResult(code=params["code"], state=params.get("state"), iss=params.get("iss"))

    async def async_auth_flow(self, request: Any) -> Any:  # type: ignore[override]
        flow = super().async_auth_flow(request)
        try:
            outgoing = await flow.__anext__()
            while True:
                response = yield outgoing
                outgoing = await flow.asend(response)
        except StopAsyncIteration:
            return
        except AUTH_ERROR_TYPES as e:
            AUTH_ERRORS.append(e)
            raise

    def _bind(self, mcp_url: str) -> None:
        """fastmcp's binding, then its token store's writes also hand every token and client
        secret to the kit's redaction (as they are stored, before anything can log them)."""
        first = not self._bound
        super()._bind(mcp_url)
        if not first:
            return
        store = self.token_storage_adapter
        set_tokens, set_client_info = store.set_tokens, store.set_client_info

        async def noting_tokens(tokens: Any) -> None:
            kit.secret(tokens.access_token)
            kit.secret(tokens.refresh_token)
            await set_tokens(tokens)

        async def noting_client(info: Any) -> None:
            kit.secret(info.client_secret)
            await set_client_info(info)

        store.set_tokens = noting_tokens  # type: ignore[method-assign]
        store.set_client_info = noting_client  # type: ignore[method-assign]


def auth_failure() -> StepError | None:
    """The step's `auth_failed`, when the library gave up an authorization during it."""
    if not AUTH_ERRORS:
        return None
    e = AUTH_ERRORS[-1]
    return e if isinstance(e, StepError) else StepError("auth_failed", f"{type(e).__name__}: {e}")


def make_auth(config: Config) -> HeadlessOAuth | None:
    """fastmcp's OAuth for this trial, or None when the trial has no authorization."""
    return HeadlessOAuth(config) if config.auth is not None and config.transport == "http" else None
