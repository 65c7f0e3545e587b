"""A client written with the official MCP Python SDK that checks a tool-runtime server's
progress notifications (K3).

tool-runtime/tests/mcp_progress_k3.rs runs it twice: over stdio (no argument: the server is
on the other end of this process's standard input and output) and over streamable HTTP (the
server's URL as the only argument). The server's `count` tool reports `steps` steps of
progress through its context, plus one report that does not increase, and answers how it
counted; when nobody listens it answers so.

Exits 0 when every check passed. Failures, and a line per passed check, go to standard error
(over stdio, standard output is the wire).
"""

import sys
import traceback

import anyio
from mcp import Client
from mcp.server.stdio import stdio_server

from checks import FAILURES, check, finish, log, text_of


async def checks(client: Client) -> None:
    reports: list[tuple[float, float | None, str | None]] = []

    async def on_progress(progress: float, total: float | None, message: str | None) -> None:
        reports.append((progress, total, message))

    # With a callback the SDK sends a progress token: the server relays every report.
    result = await client.call_tool("count", {"steps": 3}, progress_callback=on_progress)
    check(not result.is_error, f"count answers: {text_of(result)!r}")
    check(text_of(result) == "counted 3", f"the handler was told someone listens: {text_of(result)!r}")
    # The SDK runs each callback in a task of its own: give them a moment.
    with anyio.move_on_after(5):
        while len(reports) < 3:
            await anyio.sleep(0.01)
    await anyio.sleep(0.2)
    expected = [(1.0, 3.0, "step 1"), (2.0, 3.0, "step 2"), (3.0, 3.0, "step 3")]
    check(sorted(reports) == expected, f"the three reports arrived, and only those: {reports}")

    # Without a callback there is no token: nobody listens, and nothing is sent.
    reports.clear()
    result = await client.call_tool("count", {"steps": 2})
    check(text_of(result) == "counted 2 (nobody listening)", f"no token, no listener: {text_of(result)!r}")
    await anyio.sleep(0.2)
    check(reports == [], f"no progress without a token: {reports}")


async def main() -> None:
    server = sys.argv[1] if len(sys.argv) > 1 else stdio_server()
    async with Client(server, read_timeout_seconds=30) as client:
        try:
            await checks(client)
        except BaseException:  # a check that could not run is a failure too
            FAILURES.append("an exception ended the checks")
            log(traceback.format_exc())
        finish()


if __name__ == "__main__":
    anyio.run(main)
