"""The Python SDK's OAuth client, configured for an authorization trial (CLIENTS.md, "Authorization").

Only when the harness sets MCP_HARNESS_AUTH_REDIRECT_URI does the adapter hand the SDK's
streamable HTTP transport an httpx2 client whose `auth` is the SDK's own
`mcp.client.auth.OAuthClientProvider`. Everything OAuth is the SDK's: discovery (PRM from the
challenge or the well-known URIs, then AS metadata), issuer validation, registration (a
pre-registered client, a CIMD URL, else DCR), PKCE, `state` and RFC 9207 `iss` checks, scopes,
the `resource` parameter, refresh and step-up. The adapter only supplies what an application
supplies:

- a token storage, in memory for the trial (`MemoryTokenStorage`), that hands every token and
  client secret it is given to the kit's redaction;
- a pre-registered client, when the harness gives an id (and secret): the SDK's way to use one
  is a client record in the storage before the flow starts, with the token endpoint method the
  client is registered with (MCP_HARNESS_AUTH_CLIENT_AUTH_METHOD; the SDK does not choose one
  from the server's metadata, so its user states it); without the variable, RFC 7591's default
  for a client with a secret, `client_secret_basic`, and `none` without one;
- the CIMD URL as `client_metadata_url` (the SDK uses it where the server advertises
  `client_id_metadata_document_supported`);
- the redirect handler: the kit's headless step (GET the authorization URL with the run's CA,
  no redirect followed, keep the `Location`);
- the callback handler: the redirect's query parameters as the SDK's `AuthorizationCodeResult`
  (`code`, `state`, `iss` as received, unchecked: the SDK compares `state` and `iss`). An error
  redirect has no code, and the SDK's result type cannot be built without one, so the handler
  raises `auth_failed` naming the `error`, as an application's callback page would.

The SDK raises its OAuth errors (OAuthFlowError and subclasses) inside httpx2's auth flow, in the
transport's POST task, where the transport logs and drops them: the waiting request then ends
as "connection closed". `RecordingProvider` keeps the last such error (without changing what
the SDK does) so the step can report `auth_failed` with the SDK's own message.
"""

from __future__ import annotations

import logging
from typing import Any

import mcp_harness_kit as kit
from mcp_harness_kit import Config, StepError

from mcp.client.auth import AuthorizationCodeResult, OAuthClientProvider, OAuthFlowError
from mcp.shared.auth import OAuthClientInformationFull, OAuthClientMetadata, OAuthToken

#: OAuth errors the SDK raised during the current step (cleared before each step).
AUTH_ERRORS: list[BaseException] = []
#: The status of the last response from the MCP endpoint in the current step (authorization
#: trials only; see adapter.make_http_client).
LAST_MCP_STATUS: list[int] = []


class MemoryTokenStorage:
    """The SDK's TokenStorage, in memory for one trial; every secret it sees is redacted."""

    def __init__(self, client_info: OAuthClientInformationFull | None) -> None:
        self.tokens: OAuthToken | None = None
        self.client_info = client_info

    async def get_tokens(self) -> OAuthToken | None:
        return self.tokens

    async def set_tokens(self, tokens: OAuthToken) -> None:
        kit.secret(tokens.access_token)
        kit.secret(tokens.refresh_token)
        self.tokens = tokens

    async def get_client_info(self) -> OAuthClientInformationFull | None:
        return self.client_info

    async def set_client_info(self, client_info: OAuthClientInformationFull) -> None:
        kit.secret(client_info.client_secret)
        self.client_info = client_info


class RecordingProvider(OAuthClientProvider):
    """The SDK's provider, unchanged, but for noting the OAuth errors it raises."""

    async def async_auth_flow(self, request: Any) -> Any:  # type: ignore[override]
        flow = super().async_auth_flow(request)
        try:
            outgoing = await flow.__anext__()
            while True:
                response = yield outgoing
                outgoing = await flow.asend(response)
        except StopAsyncIteration:
            return
        except (OAuthFlowError, StepError) as e:
            AUTH_ERRORS.append(e)
            raise


def auth_failure() -> StepError | None:
    """The step's `auth_failed`, when the SDK gave up an authorization during it."""
    if not AUTH_ERRORS:
        return None
    e = AUTH_ERRORS[-1]
    if isinstance(e, StepError):
        return e
    return StepError("auth_failed", f"{type(e).__name__}: {e}")


def make_provider(config: Config) -> OAuthClientProvider | None:
    """The SDK's OAuth provider for this trial, or None when the trial has no authorization."""
    auth = config.auth
    if auth is None or config.url is None:
        return None
    location: list[str] = []

    async def redirect_handler(authorization_url: str) -> None:
        location.clear()
        location.append(await kit.headless_authorize(authorization_url, config.ca_file, config.timeout_s))

    async def callback_handler() -> AuthorizationCodeResult:
        params = kit.callback_params(location[0]) if location else {}
        if "code" not in params:
            error = params.get("error", "no code")
            description = params.get("error_description")
            raise StepError("auth_failed", f"the authorization redirect carried error={error!r}" + (f" ({description})" if description else ""))
        kit.secret(params["code"])
        return AuthorizationCodeResult(code=params["code"], state=params.get("state"), iss=params.get("iss"))

    pre_registered = None
    if auth.client_id is not None:
        pre_registered = OAuthClientInformationFull(
            client_id=auth.client_id,
            client_secret=auth.client_secret,
            redirect_uris=[auth.redirect_uri],
            token_endpoint_auth_method=auth.client_auth_method or ("client_secret_basic" if auth.client_secret else "none"),
        )
    metadata = OAuthClientMetadata(
        client_name="mcp-harness python adapter",
        redirect_uris=[auth.redirect_uri],
        grant_types=["authorization_code", "refresh_token"],
        response_types=["code"],
    )
    logging.getLogger("adapter").info("OAuth client: pre-registered=%s, CIMD=%s", auth.client_id is not None, auth.client_metadata_url is not None)
    return RecordingProvider(
        server_url=config.url,
        client_metadata=metadata,
        storage=MemoryTokenStorage(pre_registered),
        redirect_handler=redirect_handler,
        callback_handler=callback_handler,
        client_metadata_url=auth.client_metadata_url,
    )
