"""What the Python MCP clients of the tests share: a check that logs its verdict, the exit
with the verdict of all checks, and the text of a result.

Each client script imports it from this folder (Python puts a script's own folder first on
its import path). Checks go to standard error: over stdio, standard output is the wire.
"""

import os
import sys

FAILURES: list[str] = []


def log(line: str) -> None:
    print(line, file=sys.stderr, flush=True)


def check(ok: bool, what: str) -> None:
    if ok:
        log(f"ok: {what}")
    else:
        FAILURES.append(what)
        log(f"FAILED: {what}")


def finish() -> None:
    """Exits at once, with the checks' verdict.

    The SDK's stdio helper reads standard input on a worker thread that only an end of file
    stops, and the server closes its end only when this process exits: leaving the `Client`
    context normally would wait for each other. The checks are done, so exit here.
    """
    if FAILURES:
        log(f"{len(FAILURES)} check(s) failed")
    else:
        log("all checks passed")
    sys.stderr.flush()
    os._exit(1 if FAILURES else 0)


def text_of(result) -> str:
    return "\n".join(block.text for block in result.content if getattr(block, "type", "") == "text")
