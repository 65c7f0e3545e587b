"""Checks Gemini payloads against Google's own definitions (V4, V5), one JSON line in, one
JSON line out, until stdin closes:

- {"request": "<body>"}: the body parsed into the API's GenerateContentRequest (protobuf,
  google-ai-generativelanguage), unknown fields refused.
- {"response": "<event data>"}: an event of a stream parsed into GenerateContentResponse.
- {"neutral": {...}, "rewritten": {...}}: the rewritten schema validated by google-genai's
  JSONSchema type (unknown keywords refused), and the (pointer, keyword) pairs that type
  refuses in the neutral schema.
- {"anthropic_strict": {...}}: the schema as the anthropic SDK's transform_schema makes it
  (the strict tools' dialect), under "schema".

Answers {"ok": true, ...} or {"ok": false, "error": "..."}.
"""

import json
import sys

from google.ai.generativelanguage_v1beta.types import (
    GenerateContentRequest,
    GenerateContentResponse,
)
from google.genai import types
from google.protobuf import json_format
import anthropic
import pydantic


def parse(text, message_type):
    message = message_type.pb()()
    json_format.Parse(text, message, ignore_unknown_fields=False)
    return message


def pointer(parts):
    out = ""
    for part in parts:
        out += "/" + str(part).replace("~", "~0").replace("/", "~1")
    return out


# pydantic names the member of a union it tried in the error's location; these are not
# schema keywords.
UNION_TAGS = ("JSONSchema", "bool", "list", "dict", "str", "int", "float")


def refused(schema):
    try:
        types.JSONSchema.model_validate(schema)
        return []
    except pydantic.ValidationError as error:
        found = set()
        for item in error.errors():
            loc = [p for p in item["loc"] if not (isinstance(p, str) and p.startswith(UNION_TAGS))]
            if item["type"] == "extra_forbidden":
                found.add((pointer(loc[:-1]), str(loc[-1])))
            elif item["type"] in ("model_attributes_type", "model_type") and isinstance(
                item["input"], bool
            ):
                found.add((pointer(loc), "true" if item["input"] else "false"))
            else:
                found.add((pointer(loc), "?" + item["type"]))
        return sorted(found)


def answer(line):
    command = json.loads(line)
    if "request" in command:
        parse(command["request"], GenerateContentRequest)
        return {"ok": True}
    if "anthropic_strict" in command:
        return {"ok": True, "schema": anthropic.transform_schema(command["anthropic_strict"])}
    if "response" in command:
        parse(command["response"], GenerateContentResponse)
        return {"ok": True}
    problems = refused(command["rewritten"])
    if problems:
        return {"ok": False, "error": "the rewritten schema is refused: %s" % problems}
    return {"ok": True, "refused": refused(command["neutral"])}


for line in sys.stdin:
    if not line.strip():
        continue
    try:
        out = answer(line)
    except Exception as error:  # every failure is an answer, never a dead helper
        out = {"ok": False, "error": "%s: %s" % (type(error).__name__, error)}
    sys.stdout.write(json.dumps(out) + "\n")
    sys.stdout.flush()
