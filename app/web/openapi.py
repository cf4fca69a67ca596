"""Completes the generated OpenAPI schema where Litestar's generator cannot say what the server does.

One table (`OPERATIONS`) names each operation, its tag and the error codes of each status it can
answer; `polish` writes them into the schema, with the bearer scheme, the download as binary with
its headers, the status' ETag, and 64-bit ids. A test checks that every code the server raises
is listed here, and schemathesis checks that the server answers nothing else.
"""

from __future__ import annotations

import copy
from typing import Any

from app.contract.schemas import MAX_ID

PUBLIC = ("/health", "/ready", "/metrics")
REF = "#/components/schemas/"

AUTH = ["missing_key", "unknown_key"]
PARAMS = ["bad_request"]  # a path or query value out of its documented range
NO_ROUTE = ["route_not_found"]  # a path whose id is not a number matches no route
WF = ["workflow_not_found"]
STORED = {500: ["stored_file_damaged", "stored_file_missing"]}  # bytes that fail their checksum are not served
CLASH = ["method_not_allowed"]  # the id "start" names POST /api/workflows/start
FULL = {507: ["storage_full"]}  # a write when the disk or the database is full (nothing kept; Retry-After)
BODY = ["invalid_json", "not_utf8", "too_deep", "invalid_body", "bad_request"]  # a JSON body that does not parse or fit
SENT = {413: ["body_too_large", "payload_too_large"], 415: ["not_json"]}
FLOW = ["flow_not_found", *NO_ROUTE]

# (method, path): (operationId, tag, {status: [codes]})
OPERATIONS: dict[tuple[str, str], tuple[str, str, dict[int, list[str]]]] = {
    ("get", "/health"): ("health", "service", {}),
    ("get", "/ready"): ("ready", "service", {503: ["not_ready"]}),
    ("get", "/metrics"): ("metrics", "service", {}),
    ("post", "/api/files"): ("uploadFiles", "files", {
        400: ["no_files", "empty_file", "multipart_limit", "bad_request"], 401: AUTH,
        413: ["file_too_large", "payload_too_large"], 415: ["not_multipart"], **FULL}),
    ("get", "/api/files/{file_id}"): ("getFile", "files", {
        400: PARAMS, 401: AUTH, 404: ["file_not_found", *NO_ROUTE]}),
    ("get", "/api/files/{file_id}/content"): ("downloadFile", "files", {
        400: PARAMS, 401: AUTH, 404: ["file_not_found", *NO_ROUTE], **STORED}),
    ("post", "/api/workflows/start"): ("startWorkflow", "workflows", {
        400: ["invalid_json", "not_utf8", "too_deep", "invalid_body", "bad_request", "empty_request",
              "prompt_too_long", "nul_character", "unknown_files", "unknown_password_files", "steer_needs_prompt",
              "invalid_inputs", "flow_not_published"],
        401: AUTH, 404: [*WF, "flow_not_found", "flow_version_not_found"], 409: ["round_running", "idempotency_in_progress", "round_waiting",
                                  "decision_does_not_fit"],
        413: ["body_too_large", "payload_too_large"], 415: ["not_json"], 422: ["idempotency_key_reused"],
        503: ["shutting_down"], **FULL}),
    ("post", "/api/workflows/{workflow_id}/stop"): ("stopWorkflow", "workflows", {
        400: PARAMS, 401: AUTH, 404: WF, 409: ["illegal_transition"], **FULL}),
    ("post", "/api/workflows/{workflow_id}/review"): ("reviewWorkflow", "workflows", {
        400: ["invalid_json", "not_utf8", "too_deep", "invalid_body", "bad_request", "feedback_required",
              "plan_required", "answer_required", "invalid_plan", "prompt_too_long", "nul_character", "unknown_action"],
        401: AUTH, 404: WF, 409: ["decision_does_not_fit"], 413: ["body_too_large", "payload_too_large"],
        415: ["not_json"], **FULL}),
    ("delete", "/api/workflows/{workflow_id}"): ("deleteWorkflow", "workflows", {
        400: PARAMS, 401: AUTH, 404: WF, 405: CLASH, **FULL}),
    ("patch", "/api/workflows/{workflow_id}"): ("renameWorkflow", "workflows", {
        400: ["invalid_json", "not_utf8", "too_deep", "invalid_body", "bad_request", "empty_name", "name_too_long",
              "nul_character"],
        401: AUTH, 404: WF, 405: CLASH, 413: ["body_too_large", "payload_too_large"], 415: ["not_json"], **FULL}),
    ("get", "/api/workflows"): ("listWorkflows", "workflows", {
        400: ["bad_cursor", "bad_request"], 401: AUTH}),
    ("get", "/api/workflows/{workflow_id}"): ("getWorkflow", "workflows", {
        400: PARAMS, 401: AUTH, 404: WF, 405: CLASH, **STORED}),
    ("get", "/api/workflows/{workflow_id}/status"): ("getStatus", "polling", {
        400: PARAMS, 401: AUTH, 404: WF}),
    ("get", "/api/workflows/{workflow_id}/messages"): ("pollMessages", "polling", {
        400: ["bad_cursor", "bad_id", "bad_limit", "bad_includeData", "bad_request"], 401: AUTH, 404: WF, **STORED}),
    ("get", "/api/workflows/{workflow_id}/logs"): ("pollLogs", "polling", {
        400: ["bad_cursor", "bad_id", "bad_limit", "bad_request"], 401: AUTH, 404: WF}),
    ("get", "/api/workflows/{workflow_id}/events"): ("streamEvents", "polling", {
        400: ["bad_cursor", "bad_event_id", "bad_request"], 401: AUTH, 404: WF, **STORED}),
    ("delete", "/api/workflows/{workflow_id}/messages/{message_id}"): ("deleteMessage", "workflows", {
        400: PARAMS, 401: AUTH, 404: ["workflow_not_found", "message_not_found", *NO_ROUTE], **FULL}),
    ("delete", "/api/workflows/{workflow_id}/messages/{message_id}/files/{file_id}"): ("removeDocument", "workflows", {
        400: PARAMS, 401: AUTH, 404: ["workflow_not_found", "document_not_found", *NO_ROUTE], **FULL}),
    ("get", "/api/workflows/{workflow_id}/nodes"): ("getNodeRuns", "flows", {400: PARAMS, 401: AUTH, 404: WF}),
    ("post", "/api/flows/validate"): ("validateFlow", "flows", {400: [*BODY, "invalid_flow"], 401: AUTH, **SENT}),
    ("get", "/api/flows/schema.json"): ("flowSchema", "flows", {401: AUTH}),
    ("post", "/api/flows"): ("createFlow", "flows", {
        400: [*BODY, "invalid_flow", "round_has_no_plan"], 401: AUTH, 404: [*WF, "round_not_found"], **SENT, **FULL}),
    ("get", "/api/flows"): ("listFlows", "flows", {400: PARAMS, 401: AUTH}),
    ("get", "/api/flows/{flow_id}"): ("getFlow", "flows", {400: PARAMS, 401: AUTH, 404: FLOW}),
    ("put", "/api/flows/{flow_id}"): ("replaceFlow", "flows", {
        400: [*BODY, "invalid_flow"], 401: AUTH, 404: FLOW, **SENT, **FULL}),
    ("delete", "/api/flows/{flow_id}"): ("deleteFlow", "flows", {400: PARAMS, 401: AUTH, 404: FLOW, **FULL}),
    ("post", "/api/flows/{flow_id}/versions"): ("publishFlow", "flows", {
        400: BODY, 401: AUTH, 404: FLOW, **SENT, **FULL}),
    ("get", "/api/flows/{flow_id}/versions"): ("listFlowVersions", "flows", {400: PARAMS, 401: AUTH, 404: FLOW}),
    ("get", "/api/flows/{flow_id}/versions/{version}"): ("getFlowVersion", "flows", {
        400: PARAMS, 401: AUTH, 404: [*FLOW, "flow_version_not_found"]}),
    ("get", "/api/flows/{flow_id}/diff"): ("diffFlow", "flows", {
        400: [*PARAMS, "bad_version"], 401: AUTH, 404: [*FLOW, "flow_version_not_found"]}),
    ("post", "/api/flows/{flow_id}/restore"): ("restoreFlow", "flows", {
        400: BODY, 401: AUTH, 404: [*FLOW, "flow_version_not_found"], **SENT, **FULL}),
    ("post", "/api/workflows/{workflow_id}/rerun"): ("rerunWorkflow", "flows", {
        400: [*BODY, "not_a_flow_round", "unknown_node", "invalid_inputs", "flow_gone", "nul_character",
              "unknown_files", "prompt_too_long"],
        401: AUTH, 404: [*WF, "round_not_found"], 405: CLASH, 409: ["round_running", "round_waiting"],
        413: ["body_too_large", "payload_too_large"], 415: ["not_json"], 503: ["shutting_down"], **FULL}),
    ("post", "/api/flows/import"): ("importFlow", "flows", {
        400: ["bad_import", "dify_unsupported", "invalid_flow", "bad_request"], 401: AUTH,
        413: ["body_too_large", "payload_too_large"], 415: ["not_yaml"], **FULL}),
}
GENERAL = {405: ["method_not_allowed"], 404: NO_ROUTE, 500: ["internal_error"], 503: ["database_unavailable"]}
ERROR_TEXT = {
    400: "The request is malformed or names something that does not fit.",
    401: "The Authorization header is missing or names an unknown key.",
    404: "No such object, or it belongs to someone else.",
    409: "The workflow's state does not allow this request.",
    413: "The body is larger than the limit.",
    405: "The path names another operation (the workflow id `start`).",
    415: "The request body is not of the media type this operation takes.",
    422: "The Idempotency-Key was used before with a different request.",
    500: "A file's stored bytes are missing or fail their checksum on the server; they are not served.",
    503: "The service is starting or stopping, or its database cannot take the request now (Retry-After).",
    507: "The server's disk or database is full: nothing of the request was kept; try again later (Retry-After).",
}
TAGS = [
    {"name": "files", "description": "Uploads and documents produced by agents."},
    {"name": "workflows", "description": "Conversations: start a round, stop, read, delete."},
    {"name": "polling", "description": "Status with ETag; messages and logs after an id cursor."},
    {"name": "flows", "description": "Saved flows (graphs of typed nodes), their versions, and a flow round's node runs."},
    {"name": "service", "description": "Liveness, readiness and Prometheus metrics (no key needed)."},
]
CONTENT_METADATA = {
    "type": "object", "required": ["isText", "base64Encoded", "aiProcessed"], "additionalProperties": True,
    "properties": {"isText": {"type": "boolean"}, "base64Encoded": {"type": "boolean"},
                   "aiProcessed": {"type": "boolean"}},
}


CITATION = {
    "type": "object", "required": ["fileId", "name", "quote"], "additionalProperties": True,
    "properties": {"fileId": {"type": "integer", "format": "int64"}, "name": {"type": "string"},
                   "page": {"type": "integer"}, "sheet": {"type": "string"}, "section": {"type": "string"},
                   "quote": {"type": "string"}},
}
MESSAGE_METADATA = {
    "type": "object", "additionalProperties": True,
    "description": "What produced the message; more keys may appear.",
    "properties": {"offline": {"type": "boolean", "description": "Written by the built-in offline model."},
                   "model": {"type": "string"}, "language": {"type": "string"}, "taskId": {"type": "string"},
                   "review": {"type": "object", "description": "A plan under the user's review: `state` is "
                              "pending, approved, revised, edited or rejected.", "additionalProperties": True,
                              "properties": {"state": {"type": "string", "enum": ["pending", "approved", "revised",
                                                                                   "edited", "rejected"]}}},
                   "question": {"type": "object", "description": "An agent's question to the user (the round "
                                "waits with kind question): text, taskId, state, and the answer once given.",
                                "additionalProperties": True,
                                "properties": {"state": {"type": "string",
                                                         "enum": ["pending", "answered", "rejected"]}}},
                   "approval": {"type": "object", "description": "A task that waits for the user's approval "
                                "before it runs (kind tool): taskId, tool (what it will do, with a tool's arguments), "
                                "prepared (what its agent made ready: the call made on approval), state, "
                                "feedback (the user's reason for a rejection).",
                                "additionalProperties": True,
                                "properties": {"state": {"type": "string",
                                                         "enum": ["pending", "approved", "rejected"]}}},
                   "notApproved": {"type": "boolean", "description": "The task was not run: the user did not "
                                   "approve it; it failed, its error the user's reason."},
                   "plan": {"type": "object", "description": "The work plan: {tasks: [{id, agent, "
                            "instructions, inputs, outputs, dependsOn}], finalDocuments}.",
                            "additionalProperties": True},
                   "citations": {"type": "array", "items": CITATION},
                   "flow": {"type": "object", "description": "A round that runs a saved flow (its user message): "
                            "{id, version, hash, inputs}.", "additionalProperties": True},
                   "node": {"type": "string", "description": "The flow node (or map item, loop iteration) whose "
                            "message this is."},
                   "human": {"type": "object", "description": "A flow's human node waiting for the user (kind "
                             "node): nodeId, actions, defaultAction, state, and the action once taken.",
                             "additionalProperties": True},
                   "outputs": {"type": "object", "description": "A flow round's last message: the flow's outputs "
                               "by name.", "additionalProperties": True},
                   "retrieval": {"type": "string", "enum": ["hybrid", "keyword"],
                                 "description": "How an answer's passages were found: keyword and vector "
                                                "search fused, or keyword (BM25) alone while the files' "
                                                "vectors are still being made or embeddings are off."}},
}


def all_codes() -> list[str]:
    """Every error code the API can answer."""
    found = {c for _, _, statuses in OPERATIONS.values() for codes in statuses.values() for c in codes}
    return sorted(found | {c for codes in GENERAL.values() for c in codes})


def polish(schema: dict[str, Any], max_prompt_chars: int = 100_000) -> dict[str, Any]:
    """A completed copy of `schema` (Litestar's generated dict)."""
    schema = copy.deepcopy(schema)
    components = schema.setdefault("components", {})
    components.setdefault("securitySchemes", {})["bearer"] = {
        "type": "http", "scheme": "bearer",
        "description": "An API key from API_KEYS (not needed in single-user local mode)."}
    schema["security"] = [{"bearer": []}]
    schema["tags"] = TAGS
    schemas = components.setdefault("schemas", {})
    error = schemas["ErrorBody"]
    error["properties"]["code"] = {"type": "string", "enum": all_codes(),
                                   "description": "Stable, machine-readable; each operation lists its own."}
    error["properties"]["status_code"] = {"type": "integer", "minimum": 400, "maximum": 599}
    schemas["ConflictBody"]["properties"]["code"] = {"type": "string", "enum": all_codes()}
    schemas["ContentItem"]["properties"]["metadata"] = CONTENT_METADATA
    schemas["Message"]["properties"]["metadata"] = MESSAGE_METADATA
    _start_request(schemas["StartRequest"], max_prompt_chars)
    _review_request(schemas["ReviewRequest"], max_prompt_chars)
    rename = schemas["RenameRequest"]  # what app.services.rename keeps: 1 to 80 characters, no NUL
    rename["properties"]["name"] = {"type": "string", "minLength": 1, "maxLength": 80,
                                    "pattern": "^[^\\u0000]*[^\\u0000\\s][^\\u0000]*$"}
    rename["additionalProperties"] = False
    # The flows' request bodies refuse unknown fields too (msgspec's forbid_unknown_fields): say so.
    for name in ("RestoreRequest", "PublishRequest", "RerunRequest", "FlowStartBody", "FromRound",
                 "FromRoundRequest"):
        if name in schemas:
            schemas[name]["additionalProperties"] = False
    for path, item in schema.get("paths", {}).items():
        for method, operation in item.items():
            if isinstance(operation, dict) and (method, path) in OPERATIONS:
                _operation(method, path, operation)
    _download(schema["paths"]["/api/files/{file_id}/content"]["get"])
    _export(schema["paths"]["/api/flows/{flow_id}/versions/{version}"]["get"])
    _import(schema["paths"]["/api/flows/import"]["post"])
    _create_flow(schema["paths"]["/api/flows"]["post"])
    _status(schema["paths"]["/api/workflows/{workflow_id}/status"]["get"])
    _start(schema["paths"]["/api/workflows/start"]["post"])
    _events(schema["paths"]["/api/workflows/{workflow_id}/events"]["get"])
    logs = schema["paths"]["/api/workflows/{workflow_id}/logs"]["get"]
    logs["parameters"] = [p for p in logs["parameters"] if p["name"] != "includeData"]
    _heads(schema["paths"])
    _walk(schema)
    return schema


def _heads(paths: dict[str, Any]) -> None:
    """HEAD wherever GET is (`app.web.middleware` answers it as the GET without the body): the GET's
    operation under its own id, every answer with its headers and without a body."""
    for item in paths.values():
        get = item.get("get")
        if get is None:
            continue
        head = copy.deepcopy(get)
        head["operationId"] = get["operationId"] + "Head"
        head["summary"] = f"{get['summary']}: the headers only"
        head.pop("description", None)
        for response in head["responses"].values():
            response.pop("content", None)
        item["head"] = head


def _operation(method: str, path: str, operation: dict[str, Any]) -> None:
    operation_id, tag, statuses = OPERATIONS[(method, path)]
    operation["operationId"], operation["tags"] = operation_id, [tag]
    if path in PUBLIC:
        operation["security"] = []
    responses = operation["responses"]
    for status in [s for s in responses if s.isdigit() and int(s) >= 400 and int(s) not in statuses]:
        del responses[status]  # documented by default but never answered
    for status, codes in statuses.items():
        body = "ConflictBody" if status == 409 else "ErrorBody"
        responses[str(status)] = {
            "description": f"{ERROR_TEXT[status]} Codes: {', '.join(codes)}.",
            "content": {"application/json": {"schema": {
                "allOf": [{"$ref": REF + body}],
                "properties": {"code": {"type": "string", "enum": list(dict.fromkeys(codes))}}}}}}


def _download(operation: dict[str, Any]) -> None:
    binary = {"schema": {"type": "string", "format": "binary"}}
    operation["responses"]["200"] = {
        "description": "The file's bytes. Content-Type is the type detected from the bytes (an active type such "
                       "as HTML or SVG is served as application/octet-stream).",
        "headers": {
            "Content-Disposition": {"description": "attachment; filename (ASCII) and filename* (UTF-8), RFC 6266",
                                    "schema": {"type": "string"}, "required": True},
            "X-Content-Type-Options": {"schema": {"type": "string", "enum": ["nosniff"]}, "required": True},
        },
        "content": {"application/octet-stream": binary, "*/*": binary},
    }


def _export(operation: dict[str, Any]) -> None:
    """A version's 200: JSON (the version with its definition), or with `?format=` the file to download."""
    answer = operation["responses"]["200"]
    # Keyed by bare media types (a checker drops "; charset=utf-8" when it matches them): the JSON answer
    # is the version, or with `?format=json` its definition file; YAML only ever the file.
    detail = answer.get("content", {}).get("*/*", {}).get("schema", {"type": "object"})
    answer["content"] = {
        "application/json": {"schema": {"anyOf": [detail, {
            "type": "object", "description": "With `?format=json`: the flow's definition file."}]}},
        "application/yaml": {"schema": {"type": "object", "description": "With `?format=yaml`: the definition file."}},
    }
    answer["headers"] = {"Content-Disposition": {
        "description": "With `?format=`: attachment; filename=<flow>-v<n>.yaml (or .json)", "schema": {"type": "string"}}}


def _import(operation: dict[str, Any]) -> None:
    """The file to import: YAML or JSON text (Foreman's definition or a Dify DSL app). YAML is also taken as
    application/yaml, text/yaml and text/plain, which generated clients do not all know."""
    binary = {"schema": {"type": "string", "format": "binary"}}
    operation["requestBody"] = {
        "required": True, "description": "A flow's YAML or JSON, or a Dify DSL app's YAML (also as application/yaml).",
        "content": {"application/json": {"schema": {"type": "object"}}, "application/octet-stream": binary}}


def _create_flow(operation: dict[str, Any]) -> None:
    """A new flow's body: a definition, or `{"fromRound": {"workflowId", "round"}, "name"}`."""
    from_round = {"type": "object", "additionalProperties": False, "required": ["fromRound", "name"], "properties": {
        "fromRound": {"type": "object", "additionalProperties": False, "required": ["workflowId", "round"],
                      "properties": {"workflowId": {"type": "string", "minLength": 1, "maxLength": 64},
                                     "round": {"type": "integer", "minimum": 1, "maximum": MAX_ID}}},
        "name": {"type": "string", "minLength": 1, "maxLength": 200}}}
    operation["requestBody"] = {"required": True, "content": {"application/json": {"schema": {
        "oneOf": [{"$ref": REF + "FlowDefinition"}, from_round]}}}}


def _status(operation: dict[str, Any]) -> None:
    etag = {"description": "Changes whenever the status object changes.", "schema": {"type": "string"},
            "required": True}
    operation["responses"]["200"]["headers"] = {"ETag": etag}
    operation["responses"]["304"] = {"description": "Unchanged since the ETag sent in If-None-Match (or `*`); "
                                                    "no body.", "headers": {"ETag": etag}}
    operation.setdefault("parameters", []).append({
        "name": "If-None-Match", "in": "header", "required": False,
        "description": "An ETag of an earlier answer, a list of them, or `*`: 304 when it still matches.",
        "schema": {"type": "string"}})


NO_NUL = "^[^\\u0000]*$"
# What each decision needs beside `decision` (app.services.review checks the same): a text with something in it.
NEEDS = {"revise": "feedback", "answer": "answer"}


def _start_request(request: dict[str, Any], max_prompt_chars: int) -> None:
    """What the server refuses, the schema does not allow: a prompt or at least one file, no NUL."""
    properties = request["properties"]
    properties["listFileId"]["items"] = {"type": "integer", "format": "int64", "minimum": 1}
    properties["prompt"] = {"type": "string", "maxLength": max_prompt_chars, "pattern": NO_NUL,
                            "description": "The request; may be empty when files are attached."}
    properties["passwords"] = {
        "type": "object", "propertyNames": {"pattern": "^[0-9]{1,19}$"},
        "additionalProperties": {"type": "string", "pattern": NO_NUL},
        "description": "Passwords of encrypted files, by file id (each id also in listFileId)."}
    # Without files, a prompt with something in it (one plain object for generated clients, not a union).
    request["if"] = {"properties": {"listFileId": {"maxItems": 0}}}
    request["then"] = {"required": ["prompt"], "properties": {"prompt": {"pattern": "\\S"}}}


def _review_request(request: dict[str, Any], max_prompt_chars: int) -> None:
    """What a decision needs, the schema says: revise a feedback, answer an answer, edit a plan; no NUL."""
    properties = request["properties"]
    for name in ("feedback", "answer"):
        text = {"type": "string", "maxLength": max_prompt_chars, "pattern": NO_NUL}
        properties[name] = {"oneOf": [text, {"type": "null"}], "description": properties[name].get("description", "")}
    needs = [{"if": {"required": ["decision"], "properties": {"decision": {"const": decision}}},
              "then": {"required": [name], "properties": {name: {"type": "string", "pattern": "\\S"}}}}
             for decision, name in NEEDS.items()]
    needs.append({"if": {"required": ["decision"], "properties": {"decision": {"const": "edit"}}},
                  "then": {"required": ["plan"], "properties": {"plan": {"type": "object"}}}})
    request["allOf"] = needs
    request["additionalProperties"] = False  # ReviewRequest forbids unknown fields: 400 bad_request


def _start(operation: dict[str, Any]) -> None:
    for parameter in operation.get("parameters", []):
        schema = parameter.get("schema", {})
        if "oneOf" in schema:  # optional, so never null: a plain string
            limit = schema.get("maxLength")
            parameter["schema"] = {"type": "string", **({"maxLength": limit} if limit else {})}
            if parameter["name"] == "id":
                parameter["description"] = "Continue this workflow with its next round."
            else:
                parameter["description"] = "Retrying with the same key returns the first answer."


def _events(operation: dict[str, Any]) -> None:
    """The ids to resume after are optional, never null, and never negative (a 400 names the one that is)."""
    for parameter in operation.get("parameters", []):
        if parameter["name"] in ("messageId", "logId"):
            description = parameter["schema"].get("description") or parameter.get("description")
            parameter["schema"] = {"type": "integer", "format": "int64", "minimum": 0}
            if description:
                parameter["description"] = description


def _walk(node: Any) -> None:
    if isinstance(node, dict):
        if node.get("required") == []:
            del node["required"]
        if node.get("type") == "integer" and isinstance(node.get("maximum"), (int, float)) \
                and node["maximum"] >= MAX_ID:
            del node["maximum"]
            node["format"] = "int64"
        for value in node.values():
            _walk(value)
    elif isinstance(node, list):
        for value in node:
            _walk(value)
