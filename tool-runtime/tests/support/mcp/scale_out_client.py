"""A client written with the official MCP Python SDK that uses the maintenance MCP server
(examples/mcp_server.rs) through a load balancer in front of two stateless replicas, and
checks every answer.

examples/tests/scale_out.rs starts two replicas (`mcp_server --http 127.0.0.1:0 --stateless`)
and HAProxy in front of them (round robin, no session affinity; it names the replica that
answered each request in the `X-Served-By` header), then runs this script with the proxy's
URL. Each principal is a bearer token (examples/src/serve.rs): `guest-token`,
`operator-token`, `admin-token`.

What it checks, through the proxy:

- many calls, all answered, by both replicas (A4, S2, E2 below hold on each);
- policies: a guest is offered nothing and its call is `tool unavailable`; an operator is not
  offered `restart-service` and its call is `tool unavailable` (A4, A5);
- validation: invalid arguments are answered with their violations (S2);
- redaction: an internal error reaches the client only as `the tool failed` (E2);
- approval on protocol 2026-07-28 (H6): the question (an `input_required` result) comes from
  one replica and the retry with the user's answer is served by the other, where the call runs;
  a declined question answers `the call was not approved`;
- a client on an older protocol (the initialize handshake) is served too, and a call that
  needs approval is answered at once that a server without sessions cannot ask its user.

Its last line on standard output is a JSON summary for the Rust test, which compares it with
what each replica logged. Checks go to standard error, one line each; exits 0 when all passed.
"""

import json
import sys
import traceback

import anyio
import httpx2
from mcp import Client, types
from mcp.client.streamable_http import streamable_http_client

from checks import FAILURES, check, finish, log, text_of

# Every POST the client made, in order: (JSON-RPC method, tool, retry with an answer?, replica).
POSTS: list[tuple[str, str, bool, str]] = []
ASKED: list[str] = []
# The replicas that answered a `tools/call` with a question (`input_required`), not a result.
QUESTIONS: dict[str, int] = {}
LOOKUPS = 12


async def record(response: httpx2.Response) -> None:
    request = response.request
    if request.method != "POST":
        return
    try:
        body = json.loads(request.content)
    except ValueError:
        return
    params = body.get("params") or {}
    POSTS.append(
        (
            body.get("method", ""),
            params.get("name", ""),
            "requestState" in params,
            response.headers.get("x-served-by", ""),
        )
    )


async def answer(context, params):
    """The user: says yes to svc-42, no to anything else."""
    ASKED.append(params.message)
    if "svc-42" in params.message:
        return types.ElicitResult(action="accept", content={})
    return types.ElicitResult(action="decline")


def connect(url: str, token: str, mode: str = "auto") -> Client:
    http = httpx2.AsyncClient(
        headers={"Authorization": f"Bearer {token}"},
        timeout=httpx2.Timeout(30.0),
        event_hooks={"response": [record]},
    )
    return Client(
        streamable_http_client(url, http_client=http),
        read_timeout_seconds=30,
        mode=mode,
        elicitation_callback=answer,
    )


async def call(client: Client, tool: str, arguments: dict):
    """Calls `tool`; returns the result and the `tools/call` POSTs it took, each a leg: a
    question answered `input_required` but the last."""
    before = len(POSTS)
    result = await client.call_tool(tool, arguments)
    legs = [post for post in POSTS[before:] if post[0] == "tools/call"]
    for leg in legs[:-1]:
        QUESTIONS[leg[3]] = QUESTIONS.get(leg[3], 0) + 1
    return result, legs


async def names(client: Client) -> list[str]:
    return [tool.name for tool in (await client.list_tools()).tools]


async def main() -> None:
    url = sys.argv[1]
    summary: dict = {}
    try:
        await checks(url, summary)
    except BaseException:  # a check that could not run is a failure too
        FAILURES.append("an exception ended the checks")
        log(traceback.format_exc())
    print(json.dumps(summary), flush=True)
    finish()


async def checks(url: str, summary: dict) -> None:
    # A4, A5: what a principal is offered and may call comes from its own token, whichever
    # replica the request reaches.
    async with connect(url, "guest-token") as guest:
        log(f"guest: negotiated protocol {guest.session.protocol_version}")
        listed = await names(guest)
        check(listed == [], f"a guest is offered no tool: {listed}")
        result = await guest.call_tool("lookup-window", {"service_id": "svc-42"})
        check(result.is_error and text_of(result) == "tool unavailable", f"a guest's lookup: {text_of(result)!r}")

    async with connect(url, "operator-token") as operator:
        summary["protocol"] = operator.session.protocol_version
        log(f"operator: negotiated protocol {summary['protocol']}")
        listed = await names(operator)
        check(listed == ["lookup-window"], f"an operator is offered the lookup only: {listed}")
        result = await operator.call_tool("restart-service", {"service_id": "svc-7"})
        check(
            result.is_error and text_of(result) == "tool unavailable",
            f"an operator's restart is refused: {text_of(result)!r}",
        )

        # Many calls, each answered in full, whichever replica serves it.
        for i in range(LOOKUPS):
            result = await operator.call_tool("lookup-window", {"service_id": "svc-42", "days": 3 + i % 5})
            check(
                not result.is_error and "2026-12-01T02:00:00Z" in text_of(result),
                f"lookup {i} succeeds: {text_of(result)!r}",
            )

        # S2: invalid arguments are answered with every violation; the handler never runs.
        result = await operator.call_tool("lookup-window", {"service_id": "SVC 42!", "days": 99})
        text = text_of(result)
        check(result.is_error and text.startswith("invalid arguments:"), f"violations: {text!r}")
        check("/service_id" in text and "/days" in text, f"each offending field is named: {text!r}")

        # E2: an internal failure reaches the client only as `the tool failed`.
        result = await operator.call_tool("lookup-window", {"service_id": "svc-legacy"})
        text = text_of(result)
        check(result.is_error and text == "the tool failed", f"redacted: {text!r}")
        check("maint-db" not in text and "maint_ro" not in text, "nothing of the internal error leaks")

    # H6 on 2026-07-28: the question is a result, the answer a new call: any replica takes it.
    async with connect(url, "admin-token") as admin:
        listed = await names(admin)
        check(listed == ["lookup-window", "restart-service"], f"an admin is offered both tools: {listed}")
        result, legs = await call(admin, "restart-service", {"service_id": "svc-42"})
        text = text_of(result)
        check(not result.is_error and '"state":"restarting"' in text, f"the approved restart ran: {text!r}")
        check(len(ASKED) == 1 and "svc-42 serves production traffic" in ASKED[-1], f"the user was asked: {ASKED}")
        check(
            len(legs) == 2 and not legs[0][2] and legs[1][2],
            f"a question, then a retry carrying the answer: {legs}",
        )
        if len(legs) == 2:
            summary["asked_by"], summary["answered_by"] = legs[0][3], legs[1][3]
            check(
                legs[0][3] != legs[1][3] and "" not in (legs[0][3], legs[1][3]),
                f"the question came from one replica, the answer went to the other: {legs}",
            )

        result, legs = await call(admin, "restart-service", {"service_id": "svc-billing"})
        text = text_of(result)
        check(result.is_error and text == "the call was not approved", f"a declined restart: {text!r}")
        check(len(legs) == 2 and legs[1][2], f"declined in the retry: {legs}")

    # An older protocol (the initialize handshake), served without a session by either replica.
    async with connect(url, "admin-token", mode="legacy") as legacy:
        summary["legacy_protocol"] = legacy.session.protocol_version
        log(f"legacy: negotiated protocol {summary['legacy_protocol']}")
        result = await legacy.call_tool("lookup-window", {"service_id": "svc-42"})
        check(not result.is_error and "2026-12-01T02:00:00Z" in text_of(result), f"a legacy lookup: {text_of(result)!r}")
        asked = len(ASKED)
        with anyio.fail_after(10):
            result, legs = await call(legacy, "restart-service", {"service_id": "svc-42"})
        text = text_of(result)
        check(
            result.is_error and "without sessions" in text and "2026-07-28" in text,
            f"a restart needing approval is refused at once, saying why: {text!r}",
        )
        check(len(ASKED) == asked and len(legs) == 1, f"the legacy client's user was never asked: {legs}")

    served: dict[str, dict[str, int]] = {}
    for method, tool, _, replica in POSTS:
        if method == "tools/call":
            served.setdefault(replica, {}).setdefault(tool, 0)
            served[replica][tool] += 1
    summary["calls_served"] = served
    summary["questions"] = QUESTIONS
    log(f"tools/call served by replica and tool: {served}")
    check(
        len([r for r in served if r]) == 2 and "" not in served,
        f"both replicas served calls, each naming itself: {sorted(served)}",
    )


if __name__ == "__main__":
    anyio.run(main)
