"""A client written with the official MCP Python SDK that drives a tool-runtime MCP server
over stdio and checks every answer.

tool-runtime/tests/mcp_python_client.rs starts this script with its standard input and output
piped, and serves its tools on the other end of the pipes (``McpServer::serve_io``): the same
newline-delimited JSON-RPC a desktop client speaks to a server it started. The SDK's stdio
helper frames the messages, its ``Client`` speaks the protocol (discovery or ``initialize``,
``tools/list``, ``tools/call``, ``notifications/cancelled``).

Exits 0 when every check passed. Failures, and a line per passed check, go to standard error
(standard output is the wire).
"""

import traceback

import anyio
from mcp import Client
from mcp.server.stdio import stdio_server

from checks import FAILURES, check, finish, log, text_of


async def call(client: Client, name: str, arguments: dict):
    return await client.call_tool(name, arguments)


async def main() -> None:
    async with Client(stdio_server(), read_timeout_seconds=30) as client:
        try:
            await checks(client)
        except BaseException:  # a check that could not run is a failure too
            FAILURES.append("an exception ended the checks")
            log(traceback.format_exc())
        finish()


async def checks(client: Client) -> None:
    listing = await client.list_tools()
    names = [tool.name for tool in listing.tools]
    expected = ["lookup-window", "greet", "reject", "fail", "crash", "doom", "policy-error", "slow"]
    # A2: declaration order; A4/A5: the tool hidden by its policy is not listed.
    check(names == expected, f"tools/list gives the available tools in declaration order: {names}")
    for tool in listing.tools:
        schema = tool.input_schema
        check(schema.get("type") == "object", f"{tool.name}: the input schema has an object root")
        check(bool(tool.description), f"{tool.name}: has a description")
        check(tool.output_schema is None, f"{tool.name}: no output schema is listed")
    lookup = next(t for t in listing.tools if t.name == "lookup-window")
    props = lookup.input_schema.get("properties", {})
    check(
        set(props) == {"service_id", "days"} and lookup.input_schema.get("required") == ["service_id"],
        "lookup-window: the neutral schema (properties, required) is listed",
    )

    # E1: a JSON object result is text plus structuredContent; S2: the default is applied.
    result = await call(client, "lookup-window", {"service_id": "svc-42"})
    check(not result.is_error, "lookup-window with good arguments succeeds")
    check(
        result.structured_content == {"service_id": "svc-42", "days": 7, "starts_at": "2026-01-06T02:00:00Z"},
        f"lookup-window: structuredContent is the result object: {result.structured_content}",
    )
    check(
        text_of(result) == '{"service_id":"svc-42","days":7,"starts_at":"2026-01-06T02:00:00Z"}',
        f"lookup-window: the text is the JSON encoding (E1): {text_of(result)!r}",
    )

    # E1: a string result is its text, unchanged, with no structuredContent.
    result = await call(client, "greet", {"who": "Ada"})
    check(not result.is_error and text_of(result) == "Hello, Ada!", "greet answers its text")
    check(result.structured_content is None, "greet: no structuredContent for a string")

    # S2/S3: bad arguments come back as violations, isError, so the model can correct itself.
    result = await call(client, "lookup-window", {"service_id": "", "days": 99, "extra": True})
    text = text_of(result)
    check(result.is_error, "lookup-window with bad arguments is an error result")
    check(text.startswith("invalid arguments:"), f"violations are listed: {text!r}")
    for pointer in ("/service_id", "/days", "/extra"):
        check(pointer in text, f"the violation at {pointer} is reported with its JSON pointer")

    # A4/A5: a hidden tool and an unknown name get exactly the same answer.
    hidden = await call(client, "admin-reset", {})
    unknown = await call(client, "no-such-tool", {})
    check(hidden.is_error and text_of(hidden) == "tool unavailable", "a hidden tool is `tool unavailable`")
    check(
        unknown.is_error and text_of(unknown) == text_of(hidden),
        "an unknown name gets the same answer as a hidden tool",
    )

    # E2: approved text, and nothing else, reaches the client.
    result = await call(client, "reject", {})
    check(
        result.is_error and text_of(result) == "No maintenance window is scheduled.",
        "a ToolError's text is the result text",
    )
    for name in ("fail", "crash", "doom", "policy-error"):
        result = await call(client, name, {})
        check(
            result.is_error and text_of(result) == "the tool failed",
            f"{name}: answered only `the tool failed` ({text_of(result)!r})",
        )

    # E4: nothing above took the server down.
    result = await call(client, "greet", {"who": "again"})
    check(text_of(result) == "Hello, again!", "the server still answers after failures and panics")

    # notifications/cancelled: abandoning the call sends it; the server cancels the
    # call's Context (the Rust side checks that the handler saw it).
    with anyio.move_on_after(0.5) as scope:
        await call(client, "slow", {})
    check(scope.cancelled_caught, "the slow call was abandoned (and cancelled)")
    # A request after the cancellation: the notification went out before it.
    result = await call(client, "greet", {"who": "after"})
    check(text_of(result) == "Hello, after!", "the server answers after a cancelled call")


if __name__ == "__main__":
    anyio.run(main)
