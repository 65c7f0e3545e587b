"""The Python side of figure 5 of benches/run.sh (MCP over HTTP under load): the harness's
``triage-ticket`` tool served by the official MCP Python SDK's high-level server
(``MCPServer``, formerly FastMCP) over streamable HTTP, stateless, answering with JSON bodies,
on uvicorn, as the SDK runs it.

It binds 127.0.0.1 on a free port, prints ``listening ADDR mcp VERSION`` and serves until it
is killed. The limits are the harness's: pydantic enforces them.
"""

import asyncio
import importlib.metadata
import socket
from typing import Annotated, Literal

import uvicorn
from pydantic import BaseModel, Field

from mcp.server.mcpserver import MCPServer

server = MCPServer("python-load", log_level="ERROR")


class Triage(BaseModel):
    summary: str
    score: float
    labels: int


@server.tool(name="triage-ticket", description="Triage a ticket: file it in a queue and score it.")
def triage_ticket(
    title: Annotated[str, Field(min_length=1, max_length=80, description="A short title.")],
    reporter: Annotated[str, Field(min_length=1, max_length=40, description="Who reported it.")],
    priority: Annotated[int, Field(ge=1, le=5, description="How urgent it is, from 1 (lowest) to 5.")],
    kind: Literal["bug", "feature", "chore"],
    labels: list[str],
    estimate_hours: float | None = None,
) -> Triage:
    return Triage(
        summary=f"[{kind}] {title} ({reporter})",
        score=float(priority) * (estimate_hours if estimate_hours is not None else 1.0),
        labels=len(labels),
    )


def main() -> None:
    app = server.streamable_http_app(stateless_http=True, json_response=True)
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    sock.bind(("127.0.0.1", 0))
    host, port = sock.getsockname()
    config = uvicorn.Config(app, log_level="error", access_log=False)
    uv = uvicorn.Server(config)

    async def serve() -> None:
        # Announce once the server is started (its lifespan ran), so the first call is served.
        task = asyncio.create_task(uv.serve(sockets=[sock]))
        while not uv.started:
            if task.done():
                await task  # it failed to start: its error ends the process
                raise SystemExit("the server stopped before it started")
            await asyncio.sleep(0.01)
        print(f"listening {host}:{port} mcp {importlib.metadata.version('mcp')}", flush=True)
        await task

    asyncio.run(serve())


if __name__ == "__main__":
    main()
