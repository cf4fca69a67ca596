"""Pull JSON out of model text and check it against the small JSON-schema subset we use.

The subset: type (one or a list), properties, required, additionalProperties (false only),
items, enum, const, minItems, maxItems, minLength, maxLength, minimum, maximum. Anything else
in a schema is ignored, so a schema written for a stricter validator still works here.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from typing import Any

_FENCE = re.compile(r"```(?:json|JSON)?\s*\n?(.*?)```", re.DOTALL)

_TYPES: dict[str, tuple[type, ...]] = {
    "object": (dict,),
    "array": (list,),
    "string": (str,),
    "boolean": (bool,),
    "null": (type(None),),
}


class JSONExtractError(ValueError):
    """The text holds no JSON value we can read."""


def extract_json(text: str) -> Any:
    """Parse the JSON value in `text`, tolerating code fences and chatter before or after it."""
    stripped = text.strip()
    if not stripped:
        raise JSONExtractError("the answer was empty")
    try:
        return json.loads(stripped)
    except json.JSONDecodeError as exc:
        where = f"{exc.msg} at line {exc.lineno} column {exc.colno}"
    except ValueError as exc:  # not a syntax error: a number too long to convert, say
        where = str(exc)
    for block in _FENCE.findall(stripped):
        try:
            return json.loads(block.strip())
        except ValueError:
            continue
    # Models like to say "Here is the JSON:" first; decode from the first bracket that parses.
    decoder = json.JSONDecoder()
    for match in re.finditer(r"[{\[]", stripped):
        try:
            value, _ = decoder.raw_decode(stripped, match.start())
        except ValueError:
            continue
        return value
    raise JSONExtractError(f"the answer is not valid JSON ({where})")


def validate(value: Any, schema: Mapping[str, Any], path: str = "$") -> list[str]:
    """Return every way `value` breaks `schema`, as readable lines naming the JSON path."""
    errors: list[str] = []
    if "const" in schema and value != schema["const"]:
        errors.append(f"{path}: must be {json.dumps(schema['const'])}")
    if "enum" in schema and value not in schema["enum"]:
        allowed = ", ".join(json.dumps(v) for v in schema["enum"])
        errors.append(f"{path}: must be one of {allowed}, got {_show(value)}")
    kind = schema.get("type")
    if kind is not None:
        kinds = [kind] if isinstance(kind, str) else list(kind)
        if not any(_is_type(value, k) for k in kinds):
            errors.append(f"{path}: expected {' or '.join(kinds)}, got {_type_name(value)}")
            return errors
    if isinstance(value, dict):
        errors.extend(_validate_object(value, schema, path))
    elif isinstance(value, list):
        errors.extend(_validate_array(value, schema, path))
    elif isinstance(value, str):
        if len(value) < schema.get("minLength", 0):
            errors.append(f"{path}: shorter than {schema['minLength']} characters")
        if "maxLength" in schema and len(value) > schema["maxLength"]:
            errors.append(f"{path}: longer than {schema['maxLength']} characters")
    elif isinstance(value, (int, float)) and not isinstance(value, bool):
        if "minimum" in schema and value < schema["minimum"]:
            errors.append(f"{path}: must be at least {schema['minimum']}")
        if "maximum" in schema and value > schema["maximum"]:
            errors.append(f"{path}: must be at most {schema['maximum']}")
    return errors


def _validate_object(value: dict[str, Any], schema: Mapping[str, Any], path: str) -> list[str]:
    errors = [f"{path}: missing required property {name!r}"
              for name in schema.get("required", []) if name not in value]
    props: Mapping[str, Any] = schema.get("properties", {})
    for name, sub in props.items():
        if name in value:
            errors.extend(validate(value[name], sub, f"{path}.{name}"))
    if schema.get("additionalProperties") is False:
        errors.extend(f"{path}: unexpected property {name!r}" for name in value if name not in props)
    return errors


def _validate_array(value: list[Any], schema: Mapping[str, Any], path: str) -> list[str]:
    errors: list[str] = []
    if len(value) < schema.get("minItems", 0):
        errors.append(f"{path}: needs at least {schema['minItems']} items, got {len(value)}")
    if "maxItems" in schema and len(value) > schema["maxItems"]:
        errors.append(f"{path}: allows at most {schema['maxItems']} items, got {len(value)}")
    items = schema.get("items")
    if isinstance(items, Mapping):
        for index, item in enumerate(value):
            errors.extend(validate(item, items, f"{path}[{index}]"))
    return errors


def _is_type(value: Any, kind: str) -> bool:
    if kind == "integer":
        # JSON has one number type; 3.0 is an integer by the spec, True is not.
        return (isinstance(value, int) and not isinstance(value, bool)) or (
            isinstance(value, float) and value.is_integer())
    if kind == "number":
        return isinstance(value, (int, float)) and not isinstance(value, bool)
    return isinstance(value, _TYPES.get(kind, (object,)))


def _type_name(value: Any) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "boolean"
    return {dict: "object", list: "array", str: "string", int: "integer", float: "number"}.get(
        type(value), type(value).__name__)


def _show(value: Any) -> str:
    text = json.dumps(value, ensure_ascii=False)
    return text if len(text) <= 60 else text[:57] + "..."


def strict_compatible(schema: Mapping[str, Any]) -> bool:
    """True when OpenAI's `strict: true` accepts the schema: every object closed
    (`additionalProperties: false`) with all its properties required, no unsupported keywords."""
    if any(key in schema for key in ("minLength", "maxLength", "patternProperties")):
        return False
    kind = schema.get("type")
    if kind == "object" or "properties" in schema:
        props = schema.get("properties", {})
        if schema.get("additionalProperties") is not False or set(schema.get("required", [])) != set(props):
            return False
        return all(strict_compatible(sub) for sub in props.values())
    if kind == "array" and isinstance(schema.get("items"), Mapping):
        return strict_compatible(schema["items"])
    return True
