"""A client written with the official MCP Python SDK that connects to a protected tool-runtime
MCP server over streamable HTTP with the SDK's own OAuth client (Z5): discovery from the 401,
dynamic registration, the authorization-code flow with PKCE against the test's authorization
server, then tool calls with the token.

tool-runtime/tests/mcp_auth_client_z4_python.rs starts this script with the server's URL and
the redirect URI. The user's step is a user agent that follows the authorization server's
redirects (login and consent complete by themselves there) and keeps its cookies, until the
redirect URI, whose `code`, `state` and `iss` go back to the SDK.

Exits 0 when every check passed; a line per check goes to standard error (never a token).
"""

import sys
import traceback
from urllib.parse import parse_qs, urljoin, urlparse

import anyio
import httpx2
from mcp import Client
from mcp.client.auth import AuthorizationCodeResult, OAuthClientProvider
from mcp.client.streamable_http import streamable_http_client
from mcp.shared.auth import OAuthClientInformationFull, OAuthClientMetadata, OAuthToken

from checks import FAILURES, check, finish, log, text_of

URL, REDIRECT = sys.argv[1], sys.argv[2]


class Memory:
    """The SDK's token storage, in memory."""

    def __init__(self) -> None:
        self.tokens: OAuthToken | None = None
        self.client: OAuthClientInformationFull | None = None

    async def get_tokens(self) -> OAuthToken | None:
        return self.tokens

    async def set_tokens(self, tokens: OAuthToken) -> None:
        self.tokens = tokens

    async def get_client_info(self) -> OAuthClientInformationFull | None:
        return self.client

    async def set_client_info(self, client_info: OAuthClientInformationFull) -> None:
        self.client = client_info


class UserAgent:
    """Follows the authorization server's redirects to the redirect URI."""

    def __init__(self) -> None:
        self.redirect: str | None = None
        self.steps = 0

    async def open(self, url: str) -> None:
        self.steps += 1
        async with httpx2.AsyncClient(follow_redirects=False, timeout=30.0) as browser:
            for _ in range(20):
                response = await browser.get(url)
                location = response.headers.get("location")
                if location is None:
                    raise RuntimeError(f"{url} answered {response.status_code}")
                url = urljoin(url, location)
                if url.startswith(REDIRECT):
                    self.redirect = url
                    return
        raise RuntimeError("more than 20 redirects")

    async def back(self) -> AuthorizationCodeResult:
        query = parse_qs(urlparse(self.redirect or "").query)
        first = lambda key: (query.get(key) or [None])[0]  # noqa: E731
        return AuthorizationCodeResult(code=first("code") or "", state=first("state"), iss=first("iss"))


async def main() -> None:
    storage, user = Memory(), UserAgent()
    provider = OAuthClientProvider(
        server_url=URL,
        client_metadata=OAuthClientMetadata(
            client_name="python-sdk",
            redirect_uris=[REDIRECT],
            grant_types=["authorization_code", "refresh_token"],
            response_types=["code"],
            token_endpoint_auth_method="none",
            scope="tickets:read",
        ),
        storage=storage,
        redirect_handler=user.open,
        callback_handler=user.back,
    )
    http = httpx2.AsyncClient(auth=provider, timeout=httpx2.Timeout(30.0))
    try:
        async with Client(streamable_http_client(URL, http_client=http), read_timeout_seconds=30) as client:
            await checks(client, storage, user)
    except BaseException:
        FAILURES.append("an exception ended the checks")
        log(traceback.format_exc())
    finish()


async def checks(client: Client, storage: Memory, user: UserAgent) -> None:
    check(user.steps == 1, "the user was asked once")
    check(storage.client is not None and storage.client.client_id != "app", "registered dynamically")
    check(storage.tokens is not None, "a token was issued")
    listing = await client.list_tools()
    names = sorted(tool.name for tool in listing.tools)
    # The SDK asks for the scopes the server's challenge names (MCP's scope selection), not
    # only those of its metadata: the tools listed are those the granted scopes allow.
    granted = set(((storage.tokens.scope if storage.tokens else None) or "").split())
    check("whoami" in names, f"whoami listed: {names}")
    check(("close-ticket" in names) == ("tickets:write" in granted), f"{names} for {sorted(granted)}")
    result = await client.call_tool("whoami", {})
    check(text_of(result) == "you are alice", f"the handler saw the token's subject: {text_of(result)}")
    if "close-ticket" in names:
        result = await client.call_tool("close-ticket", {})
        check(text_of(result) == "closed", f"a tool needing tickets:write ran: {text_of(result)}")


anyio.run(main)
