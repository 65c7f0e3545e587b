"""A client written with the official MCP Python SDK that answers a tool-runtime server's
sampling and roots requests (M8).

tool-runtime/tests/mcp_sampling_m8_python.rs runs it over stdio (the server is on the other end
of this process's standard input and output), once per protocol era: the first argument is
the SDK's connect mode (`legacy`: the initialize handshake, the requests come during the call;
`2026-07-28`: they come back in the call's answer, which the SDK answers and calls again). A
second argument `bare` declares neither sampling nor roots: the server must ask nothing.

Exits 0 when every check passed. Failures, and a line per passed check, go to standard error.
"""

import sys
import traceback

import anyio
from mcp import Client, types
from mcp.server.stdio import stdio_server

from checks import FAILURES, check, finish, log, text_of

ASKED: list[str] = []


async def on_sampling(context, params: types.CreateMessageRequestParams) -> types.CreateMessageResult:
    content = params.messages[0].content
    ASKED.append(getattr(content, "text", repr(content)))
    return types.CreateMessageResult(
        role="assistant",
        content=types.TextContent(type="text", text="Paris"),
        model="python-model",
        stop_reason="endTurn",
    )


async def on_roots(context) -> types.ListRootsResult:
    ASKED.append("roots")
    return types.ListRootsResult(
        roots=[types.Root(uri="file:///work", name="work"), types.Root(uri="file:///home/ada")]
    )


async def checks(client: Client, bare: bool) -> None:
    result = await client.call_tool("capital", {})
    text = text_of(result)
    if bare:
        check(ASKED == [], f"a client without the capabilities is asked nothing: {ASKED}")
        check(
            text.startswith("sample failed: the client cannot sample") and "roots failed: no roots capability" in text,
            f"the handler is told: {text!r}",
        )
    else:
        check(
            ASKED[:1] == ["What is the capital of France?"] and "roots" in ASKED,
            f"the handler's request and the roots request reached the client: {ASKED}",
        )
        check(
            text == "Paris (python-model) | file:///work,file:///home/ada",
            f"the answers reached the handler: {text!r}",
        )


async def main() -> None:
    mode = sys.argv[1] if len(sys.argv) > 1 else "legacy"
    bare = len(sys.argv) > 2 and sys.argv[2] == "bare"
    callbacks = {} if bare else {"sampling_callback": on_sampling, "list_roots_callback": on_roots}
    async with Client(stdio_server(), read_timeout_seconds=30, mode=mode, **callbacks) as client:
        try:
            log(f"protocol {client.protocol_version}")
            await checks(client, bare)
        except BaseException:  # a check that could not run is a failure too
            FAILURES.append("an exception ended the checks")
            log(traceback.format_exc())
        finish()


if __name__ == "__main__":
    anyio.run(main)
