"""pydantic-ai's Bedrock schema transformer over neutral schemas (V4), one JSON line in, one
JSON line out, until stdin closes: {"schema": {...}} answers {"ok": true, "default": ...,
"inlined": ..., "profile": "..."}: the schema as `BedrockJsonSchemaTransformer` makes it for
a tool that is not strict (what pydantic-ai sends to Converse), the same with its definitions
inlined (`prefer_inlined_defs`, what it sends to the models that do not resolve references),
and the transformer pydantic-ai's profile picks for the tests' model. A schema it refuses to
inline has "inlined_refused" (its error) instead of "inlined". A failure is
{"ok": false, "error": "..."}.
"""

import copy
import json
import sys

from pydantic_ai.providers.bedrock import (
    BedrockJsonSchemaTransformer,
    bedrock_anthropic_model_profile,
)

MODEL = "anthropic.claude-3-5-haiku-20241022-v1:0"


def answer(line):
    schema = json.loads(line)["schema"]
    default = BedrockJsonSchemaTransformer(copy.deepcopy(schema), strict=None).walk()
    profile = bedrock_anthropic_model_profile(MODEL) or {}
    picked = profile.get("json_schema_transformer")
    out = {"ok": True, "default": default, "profile": getattr(picked, "__name__", str(picked))}
    try:
        out["inlined"] = BedrockJsonSchemaTransformer(
            copy.deepcopy(schema), strict=None, prefer_inlined_defs=True
        ).walk()
    except Exception as error:  # what it refuses to inline is part of the comparison
        out["inlined_refused"] = "%s: %s" % (type(error).__name__, error)
    return out


for line in sys.stdin:
    if not line.strip():
        continue
    try:
        out = answer(line)
    except Exception as error:  # every failure is an answer, never a dead helper
        out = {"ok": False, "error": "%s: %s" % (type(error).__name__, error)}
    sys.stdout.write(json.dumps(out) + "\n")
    sys.stdout.flush()
