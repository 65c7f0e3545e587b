"""A client written with the official MCP Python SDK that checks typed outputs and tool
metadata on a tool-runtime MCP server over stdio (O1, O3, O4).

tool-runtime/tests/outputs.rs starts this script with its standard input and output piped and
serves the tools of that test on the other end. The SDK's client validates each result's
`structuredContent` against the tool's `outputSchema` itself (and raises when it does not
conform): a typed call that returns without an exception passed that check.

Exits 0 when every check passed; a line per check goes to standard error.
"""

import base64
import traceback

import anyio
from mcp import Client
from mcp.server.stdio import stdio_server

from checks import FAILURES, check, finish, log


# The first bytes of a PNG: the image `load-chart` returns.
PIXEL = bytes([0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A, 0x00, 0x00, 0x00, 0x0D, 0x49, 0x48, 0x44, 0x52])


async def main() -> None:
    async with Client(stdio_server(), read_timeout_seconds=30) as client:
        try:
            await checks(client)
        except BaseException:
            FAILURES.append("an exception ended the checks")
            log(traceback.format_exc())
        finish()


async def checks(client: Client) -> None:
    listing = await client.list_tools()
    tools = {tool.name: tool for tool in listing.tools}

    # O1: a typed result's schema is listed, with an object root; a plain one has none.
    window = tools["next-window"]
    check(window.output_schema is not None, "next-window: an outputSchema is listed")
    check(window.output_schema.get("type") == "object", "next-window: the output schema has an object root")
    health = tools["service-health"].output_schema
    check(
        health is not None and health.get("required") == ["result"],
        f"service-health: an enum result is wrapped under `result`: {health}",
    )
    check(tools["hello"].output_schema is None, "hello: a string result lists no output schema")

    # O4: title and hints.
    check(window.title == "Next maintenance window", f"next-window: the title is listed: {window.title!r}")
    hints = window.annotations
    check(hints is not None, "next-window: annotations are listed")
    check(hints.read_only_hint is True, "next-window: readOnlyHint")
    check(hints.idempotent_hint is True, "next-window: idempotentHint")
    check(hints.open_world_hint is False, "next-window: openWorldHint is false")
    check(hints.destructive_hint is None, "next-window: no destructiveHint was declared")
    hello = tools["hello"].annotations
    check(
        hello is not None and hello.destructive_hint is True and hello.read_only_hint is False,
        "hello: destructiveHint and readOnlyHint = false",
    )

    # O1: structured content that the SDK validated against the output schema.
    result = await client.call_tool("next-window", {"service_id": "svc-42"})
    check(not result.is_error, "next-window succeeds")
    check(
        result.structured_content == {"service_id": "svc-42", "starts_at": "2026-12-01T02:00:00Z", "minutes": 120},
        f"next-window: structuredContent is the result: {result.structured_content}",
    )
    result = await client.call_tool("service-health", {"service_id": "svc-42"})
    check(result.structured_content == {"result": "up"}, f"service-health: {result.structured_content}")
    result = await client.call_tool("week", {})
    check(
        isinstance(result.structured_content, dict) and len(result.structured_content.get("result", [])) == 1,
        f"week: a list result is wrapped: {result.structured_content}",
    )

    # O3: an image beside the text.
    result = await client.call_tool("load-chart", {"service_id": "svc-42"})
    kinds = [block.type for block in result.content]
    check(kinds == ["text", "image"], f"load-chart: text then image content: {kinds}")
    image = result.content[1]
    check(image.mime_type == "image/png", f"load-chart: the image's media type: {image.mime_type}")
    check(base64.b64decode(image.data) == PIXEL, "load-chart: the image's bytes")


if __name__ == "__main__":
    anyio.run(main)
