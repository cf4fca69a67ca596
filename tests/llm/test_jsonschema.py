"""The JSON extraction and the schema-subset validator."""

from __future__ import annotations

import pytest

from app.llm.jsonschema import JSONExtractError, extract_json, validate


@pytest.mark.parametrize("text", [
    '{"a": 1}',
    '  ```json\n{"a": 1}\n```  ',
    "```\n{\"a\": 1}\n```",
    'The answer is {"a": 1} as requested.',
    'Plan: [x] {"a": 1}',
])
def test_extract_json_finds_the_value(text: str) -> None:
    assert extract_json(text) == {"a": 1}


@pytest.mark.parametrize("text", ["", "no json here", '{"a": 1,', '```json\n{"a": \n```'])
def test_extract_json_refuses_what_is_not_there(text: str) -> None:
    with pytest.raises(JSONExtractError):
        extract_json(text)


SCHEMA = {
    "type": "object",
    "additionalProperties": False,
    "required": ["steps"],
    "properties": {
        "steps": {"type": "array", "minItems": 1, "items": {
            "type": "object", "required": ["agent", "n"],
            "properties": {"agent": {"type": "string", "minLength": 1},
                           "n": {"type": "integer", "minimum": 0},
                           "weight": {"type": "number"},
                           "done": {"type": "boolean"},
                           "note": {"type": ["string", "null"]}}}},
    },
}


def test_a_valid_value_has_no_errors() -> None:
    value = {"steps": [{"agent": "writer", "n": 2, "weight": 0.5, "done": False, "note": None}]}
    assert validate(value, SCHEMA) == []
    assert validate({"steps": [{"agent": "w", "n": 2.0}]}, SCHEMA) == []


def test_every_error_is_reported_with_its_path() -> None:
    value = {"steps": [{"agent": "", "n": True, "weight": "1", "done": 1, "note": 3}], "extra": 1}
    assert validate(value, SCHEMA) == [
        "$.steps[0].agent: shorter than 1 characters",
        "$.steps[0].n: expected integer, got boolean",
        "$.steps[0].weight: expected number, got string",
        "$.steps[0].done: expected boolean, got integer",
        "$.steps[0].note: expected string or null, got integer",
        "$: unexpected property 'extra'",
    ]
    assert validate({"steps": []}, SCHEMA) == ["$.steps: needs at least 1 items, got 0"]
    assert validate([], SCHEMA) == ["$: expected object, got array"]
