"""Completes the generated OpenAPI schema where Litestar's generator cannot say what the server does."""

from __future__ import annotations

import copy
from typing import Any

MAX_ID = 2**63 - 1
PUBLIC = ("/health", "/ready")


def polish(schema: dict[str, Any]) -> dict[str, Any]:
    """A completed copy of `schema`: bearer auth, 64-bit ids."""
    schema = copy.deepcopy(schema)
    components = schema.setdefault("components", {})
    components.setdefault("securitySchemes", {})["bearer"] = {
        "type": "http", "scheme": "bearer",
        "description": "An API key from API_KEYS (not needed in single-user local mode)."}
    schema["security"] = [{"bearer": []}]
    for path, item in schema.get("paths", {}).items():
        for operation in item.values():
            if isinstance(operation, dict) and path in PUBLIC:
                operation["security"] = []
    _walk(schema)
    return schema


def _walk(node: Any) -> None:
    if isinstance(node, dict):
        if node.get("type") == "integer" and isinstance(node.get("maximum"), (int, float)) \
                and node["maximum"] >= MAX_ID:
            del node["maximum"]
            node["format"] = "int64"
        for value in node.values():
            _walk(value)
    elif isinstance(node, list):
        for value in node:
            _walk(value)
