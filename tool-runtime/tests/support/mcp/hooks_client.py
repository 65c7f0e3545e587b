"""A client written with the official MCP Python SDK that makes the calls it is given, in
order, on one stdio session, and reports what it got back (K1).

tool-runtime/tests/hooks_k1_mcp.rs starts this script with the calls as JSON in its first
argument (a list of ``[tool, arguments]``), serves a server with hooks on the other end of its
standard input and output, and compares the answers with the agent's for the same calls.

Each answer goes to standard error as one line, ``RESULT {"text": ..., "is_error": ...,
"kind": ...}`` (``kind``: the outcome kind our server puts in ``_meta``), in the order of the
calls; then ``all calls answered``. Standard output is the wire.
"""

import json
import os
import sys
import traceback

import anyio
from mcp import Client
from mcp.server.stdio import stdio_server

OUTCOME_KEY = "tool-runtime/outcome"


def log(line: str) -> None:
    print(line, file=sys.stderr, flush=True)


def finish(code: int) -> None:
    """Exits at once: the SDK's stdio helper waits for an end of file that the server sends
    only when this process exits (see stdio_client.py)."""
    sys.stderr.flush()
    os._exit(code)


def text_of(result) -> str:
    return "\n".join(
        block.text for block in result.content if getattr(block, "type", "") == "text"
    )


async def main() -> None:
    calls = json.loads(sys.argv[1])
    async with Client(stdio_server(), read_timeout_seconds=30) as client:
        try:
            for name, arguments in calls:
                result = await client.call_tool(name, arguments)
                meta = result.meta or {}
                log(
                    "RESULT "
                    + json.dumps(
                        {
                            "text": text_of(result),
                            "is_error": bool(result.is_error),
                            "kind": meta.get(OUTCOME_KEY),
                        }
                    )
                )
            log("all calls answered")
            finish(0)
        except BaseException:
            log(traceback.format_exc())
            finish(1)


if __name__ == "__main__":
    anyio.run(main)
