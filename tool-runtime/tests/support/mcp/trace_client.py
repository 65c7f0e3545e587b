"""A client written with the official MCP Python SDK that calls a tool-runtime server inside a
trace of its own (K6): the request's `_meta` carries the W3C `traceparent` and `tracestate`
given as arguments, as any client that propagates trace context sends them.

tool-runtime/tests/mcp_telemetry_k6.rs serves it over stdio and checks that the server's span
of the call continues that trace. Exits 0 when the call answered; checks go to standard error
(over stdio, standard output is the wire).
"""

import sys
import traceback

import anyio
from mcp import Client
from mcp.server.stdio import stdio_server

from checks import FAILURES, check, finish, log, text_of


async def main() -> None:
    traceparent, tracestate = sys.argv[1], sys.argv[2]
    async with Client(stdio_server(), read_timeout_seconds=30) as client:
        try:
            meta = {"traceparent": traceparent, "tracestate": tracestate}
            result = await client.call_tool("greet", {"who": "Ada"}, meta=meta)
            check(not result.is_error, f"greet answers: {text_of(result)!r}")
        except BaseException:  # a check that could not run is a failure too
            FAILURES.append("an exception ended the checks")
            log(traceback.format_exc())
        finish()


if __name__ == "__main__":
    anyio.run(main)
