"""A client written with the official MCP Python SDK that answers a tool-runtime MCP server's
approval questions (H6) over stdio, and checks every answer.

tool-runtime/tests/mcp_approval.rs starts this script with its standard input and output piped
and serves on the other end (``McpServer::serve_io``). Arguments:

- ``with-elicitation`` or ``without-elicitation``: whether the client declares the elicitation
  capability (the SDK declares it when an elicitation callback is given);
- ``legacy`` or ``auto``: how the client negotiates the protocol. ``legacy`` forces the
  initialize handshake (2025-11-25 and before: the server sends ``elicitation/create`` while
  the call waits); ``auto`` lets the SDK pick the newest version the server speaks (from
  2026-07-28 the server answers ``input_required`` and the SDK calls again with the answer).

The callback answers from the message it is shown: ``accept`` for a service named
``prod-accept``, ``decline`` for ``prod-decline``, ``cancel`` for ``prod-cancel``.

Exits 0 when every check passed. Failures, and a line per passed check, go to standard error
(standard output is the wire).
"""

import sys
import traceback

import anyio
from mcp import Client, types
from mcp.server.stdio import stdio_server

from checks import FAILURES, check, finish, log, text_of

ASKED: list[str] = []


async def answer(context, params):
    message = params.message
    ASKED.append(message)
    for action in ("accept", "decline", "cancel"):
        if f"prod-{action}" in message:
            return types.ElicitResult(action=action, content={} if action == "accept" else None)
    return types.ElicitResult(action="decline")


async def main() -> None:
    capability, mode = sys.argv[1], sys.argv[2]
    callback = answer if capability == "with-elicitation" else None
    async with Client(stdio_server(), read_timeout_seconds=30, mode=mode, elicitation_callback=callback) as client:
        try:
            log(f"negotiated protocol {client.session.protocol_version}")
            if callback is None:
                await without_elicitation(client)
            else:
                await with_elicitation(client)
        except BaseException:  # a check that could not run is a failure too
            FAILURES.append("an exception ended the checks")
            log(traceback.format_exc())
        finish()


async def with_elicitation(client: Client) -> None:
    # A call needing no approval runs, and nobody is asked.
    result = await client.call_tool("restart", {"service_id": "dev-1"})
    check(not result.is_error and text_of(result) == "dev-1 restarted", f"dev-1 runs: {text_of(result)!r}")
    check(ASKED == [], f"nobody is asked for a call needing no approval: {ASKED}")

    # Accept: the call runs.
    result = await client.call_tool("restart", {"service_id": "prod-accept"})
    check(
        not result.is_error and text_of(result) == "prod-accept restarted",
        f"an accepted call runs: {text_of(result)!r}",
    )
    check(len(ASKED) == 1, f"the user was asked once: {ASKED}")
    question = ASKED[-1] if ASKED else ""
    check("`restart`" in question, f"the question names the tool: {question!r}")
    check('"service_id":"prod-accept"' in question, f"the question shows the arguments: {question!r}")
    check("prod-accept serves production traffic" in question, f"the question gives the reason: {question!r}")

    # Decline and cancel: the call does not run, and the result says so.
    for action in ("decline", "cancel"):
        result = await client.call_tool("restart", {"service_id": f"prod-{action}"})
        check(
            result.is_error and text_of(result) == "the call was not approved",
            f"{action}: answered `the call was not approved`: {text_of(result)!r}",
        )
    check(len(ASKED) == 3, f"the user was asked for each call needing approval: {len(ASKED)}")

    # Invalid arguments are answered as always: nobody is asked (H1).
    result = await client.call_tool("restart", {"service_id": "PROD ACCEPT!"})
    check(result.is_error and text_of(result).startswith("invalid arguments:"), f"violations: {text_of(result)!r}")
    check(len(ASKED) == 3, "nobody is asked about invalid arguments")


async def without_elicitation(client: Client) -> None:
    result = await client.call_tool("restart", {"service_id": "dev-1"})
    check(not result.is_error and text_of(result) == "dev-1 restarted", f"dev-1 runs: {text_of(result)!r}")
    result = await client.call_tool("restart", {"service_id": "prod-accept"})
    text = text_of(result)
    check(result.is_error, f"a call needing approval is an error result: {text!r}")
    check("needs approval" in text and "elicitation" in text, f"the result says why: {text!r}")


if __name__ == "__main__":
    anyio.run(main)
