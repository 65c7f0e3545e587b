"""Checks Converse and ConverseStream request bodies against botocore's own service model
of `bedrock-runtime`, with botocore's own ParamValidator (V5).

Reads one JSON object a line on stdin: {"operation": "Converse" | "ConverseStream",
"modelId": "...", "body": {...}}. An operation "output:Converse" checks an answer against the
operation's output shape, and "event:<kind>" (a ConverseStream event: "event:contentBlockDelta")
against the shape of that member of the stream's output: the fixtures of answers are built from the
service model's own output shapes. Writes one JSON object a line on stdout: {"ok": true} or
{"ok": false, "errors": "..."} (botocore's report: unknown parameters, wrong types, missing
required members, unions with more or less than one member).
"""

import json
import sys

import botocore
import botocore.session
from botocore.validate import ParamValidator


def main():
    model = botocore.session.get_session().get_service_model("bedrock-runtime")
    validator = ParamValidator()
    for line in sys.stdin:
        if not line.strip():
            continue
        request = json.loads(line)
        operation = request["operation"]
        params = dict(request["body"])
        if operation.startswith("output:"):
            shape = model.operation_model(operation[len("output:"):]).output_shape
        elif operation.startswith("event:"):
            events = model.operation_model("ConverseStream").output_shape.members["stream"]
            shape = events.members[operation[len("event:"):]]
        else:
            shape = model.operation_model(operation).input_shape
            params["modelId"] = request["modelId"]
        report = validator.validate(params, shape)
        if report.has_errors():
            print(json.dumps({"ok": False, "errors": report.generate_report()}), flush=True)
        else:
            print(json.dumps({"ok": True, "botocore": botocore.__version__}), flush=True)


if __name__ == "__main__":
    main()
