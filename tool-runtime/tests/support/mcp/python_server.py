"""A small MCP server written with the official MCP Python SDK's high-level server
(``MCPServer``, the SDK's FastMCP), served over stdio.

tool-runtime/tests/mcp_python_server.rs starts it as a child process and uses its tools
through ``McpToolset``. Its names break the rules of tool-runtime (``_``, ``.``, upper case),
one tool has an optional field, one raises (``isError`` with its text), one waits to be cancelled, and ``calls`` tells
how many calls each tool received (so a test can prove a call was stopped before it was sent).

``--collide`` adds a tool whose name maps to the same local name as ``get_weather``.
"""

import sys
from collections import Counter

import anyio
from mcp.server.mcpserver import MCPServer
from mcp.server.mcpserver.exceptions import ToolError

server = MCPServer("python-peer", log_level="ERROR")
CALLS: Counter[str] = Counter()
CANCELLED: list[str] = []


@server.tool(name="get_weather", description="Tells the weather of a city.")
def get_weather(city: str, unit: str | None = None) -> str:
    CALLS["get_weather"] += 1
    suffix = f" (in {unit})" if unit else ""
    return f"Sunny in {city}{suffix}"


@server.tool(name="Ops.Restart_Service", description="Restarts a service.")
def restart_service(service: str, force: bool = False) -> str:
    CALLS["Ops.Restart_Service"] += 1
    return f"restarted {service}" + (" (forced)" if force else "")


@server.tool(name="explode", description="Always raises (an anticipated failure: its text is for the model).")
def explode(reason: str) -> str:
    CALLS["explode"] += 1
    raise ToolError(f"boom: {reason}")


@server.tool(name="wait_for_cancel", description="Waits until the call is cancelled.")
async def wait_for_cancel() -> str:
    CALLS["wait_for_cancel"] += 1
    try:
        await anyio.sleep(60)
    except anyio.get_cancelled_exc_class():
        CANCELLED.append("wait_for_cancel")
        raise
    return "not cancelled"


@server.tool(name="calls", description="How many calls each tool received, and which were cancelled.")
def calls() -> dict:
    return {"calls": dict(CALLS), "cancelled": list(CANCELLED)}


if "--collide" in sys.argv:

    @server.tool(name="get.weather", description="Collides with get_weather once mapped.")
    def get_weather_again(city: str) -> str:
        return f"Rainy in {city}"


if __name__ == "__main__":
    server.run()
