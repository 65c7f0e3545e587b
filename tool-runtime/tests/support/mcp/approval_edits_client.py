"""A client written with the official MCP Python SDK whose user edits a call's arguments in a
tool-runtime MCP server's approval question (B3, H6), over stdio, and checks every answer.

tool-runtime/tests/mcp_approval_edits_b3.rs serves a server built with ``approval_edits(true)``
on the other end. The one argument is ``legacy`` (the initialize handshake: the server sends
``elicitation/create`` while the call waits) or ``auto`` (the newest version: the server
answers ``input_required`` and the SDK calls again with the answer).

The user's callback reads the form it is shown: it checks that the form offers the call's
``to`` and ``cents`` with the model's values as defaults, then pays 500 cents instead of what
was asked. Exits 0 when every check passed; checks go to standard error.
"""

import sys
import traceback

import anyio
from mcp import Client, types
from mcp.server.stdio import stdio_server

from checks import FAILURES, check, finish, log, text_of

FORMS: list[dict] = []


async def answer(context, params):
    schema = getattr(params, "requested_schema", None) or getattr(params, "requestedSchema", None)
    form = schema if isinstance(schema, dict) else schema.model_dump(by_alias=True)
    FORMS.append(form)
    return types.ElicitResult(action="accept", content={"cents": 500})


async def main() -> None:
    mode = sys.argv[1]
    async with Client(stdio_server(), read_timeout_seconds=30, mode=mode, elicitation_callback=answer) as client:
        try:
            log(f"negotiated protocol {client.session.protocol_version}")
            await edits(client)
        except BaseException:  # a check that could not run is a failure too
            FAILURES.append("an exception ended the checks")
            log(traceback.format_exc())
        finish()


async def edits(client: Client) -> None:
    result = await client.call_tool("transfer", {"to": "acme", "cents": 90000, "urgent": False, "tags": ["q4"]})
    check(
        not result.is_error and text_of(result) == "paid 500 cents to acme",
        f"the call ran with the user's edit: {text_of(result)!r}",
    )
    check(len(FORMS) == 1, f"the user was asked once: {len(FORMS)}")
    fields = FORMS[-1].get("properties", {}) if FORMS else {}
    check(fields.get("to", {}).get("default") == "acme", f"`to` offered with the model's value: {fields}")
    check(fields.get("cents", {}).get("default") == 90000, f"`cents` offered with the model's value: {fields}")
    check("tags" not in fields, f"a list is not offered: {fields}")


if __name__ == "__main__":
    anyio.run(main)
