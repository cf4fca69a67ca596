"""Templates: rendering in the sandbox, the names a template reads, and syntax errors with their line."""

from __future__ import annotations

import pytest

from agents.flows.errors import TemplateError
from agents.flows.templates import _compiled, check, render, template_names

SCOPE = {"inputs": {"word": "fox", "items": [1, 2]}, "n1": {"output": {"text": "Hi", "n": 3}, "files": ["f1"]},
         "skipped": {"output": None, "files": []}}


def test_renders_inputs_and_node_outputs() -> None:
    assert render("{{ inputs.word }} says {{ n1.output.text | upper }} ({{ n1.files | length }})", SCOPE) == \
        "fox says HI (1)"


def test_a_skipped_nodes_output_renders_as_empty_text() -> None:
    assert render("[{{ skipped.output }}]", SCOPE) == "[]"


def test_a_list_or_mapping_renders_as_json() -> None:
    assert render("{{ n1.output }} {{ inputs.items }}", SCOPE) == '{"text": "Hi", "n": 3} [1, 2]'


def test_a_mappings_key_comes_before_its_method() -> None:
    # `inputs.items` is the input called "items", not dict.items
    assert render("{% for i in inputs.items %}{{ i }}{% endfor %}", SCOPE) == "12"


def test_an_undefined_name_is_an_error_unless_defaulted() -> None:
    with pytest.raises(TemplateError, match="wrod"):
        render("{{ inputs.wrod }}", SCOPE)
    assert render("{{ n1.output.missing | default('none') }}", SCOPE) == "none"


@pytest.mark.parametrize("hostile", [
    "{{ ''.__class__.__mro__ }}",
    "{{ ''.__class__.__mro__[1].__subclasses__() }}",
    "{{ cycler.__init__.__globals__.os }}",
    "{{ self.__init__.__globals__ }}",
    "{{ inputs.items.append(3) }}",
    "{{ 'x' * 100000000 }}",
    "{{ 9 ** 99999999 }}",
])
def test_the_sandbox_refuses_hostile_templates(hostile: str) -> None:
    with pytest.raises(TemplateError):
        render(hostile, SCOPE)
    assert SCOPE["inputs"]["items"] == [1, 2]


def test_a_runtime_error_is_a_template_error() -> None:
    with pytest.raises(TemplateError, match="ZeroDivisionError"):
        render("{{ 1 / 0 }}", SCOPE)


def test_a_syntax_error_says_its_line() -> None:
    error = check("one\ntwo\n{{ inputs.word ")
    assert error is not None and error.line == 3
    assert check("{{ inputs.word }}") is None
    with pytest.raises(TemplateError):
        render("{% for %}", SCOPE)


def test_the_names_a_template_reads() -> None:
    assert template_names("{{ inputs.word }} {{ n1.output.text | upper }} {{ n2.files|length }}") == \
        {"inputs.word", "n1.output.text", "n2.files"}
    assert template_names("{{ inputs['word'] }} {{ inputs.items[index].name }} {{ inputs.word.upper() }}") == \
        {"inputs.word", "inputs.items", "index"}
    assert template_names("{% for x in inputs.items %}{{ x.a }}{{ loop.index }}{% endfor %}"
                          "{% set y = n3.output %}{{ y.z }}") == {"inputs.items", "n3.output"}
    assert template_names("plain text") == set()


@pytest.mark.parametrize("endless", [
    "{% for i in range(100000) %}{% for j in range(100000) %}{% endfor %}{% endfor %}",
    "{% for i in range(100000) %}{{ 'x' * 1000000 }}{% endfor %}",
])
def test_a_render_is_bounded_in_numbers_and_text(endless: str) -> None:
    with pytest.raises(TemplateError, match="over"):
        render(endless, SCOPE)
    assert render("{% for i in range(3) %}{{ i }}{% endfor %}", SCOPE) == "012"  # the budget is per render


def test_a_render_reads_only_the_names_the_template_names() -> None:
    """Jinja copies its variables into a new context on every render: the names the template reads (by
    Jinja's own scoping) are passed, not every node's output; what it renders is the same."""
    scope = {"inputs": {"word": "fox"}, "item": 2, **{f"n{i}": {"output": "x" * 20_000} for i in range(50)}}
    assert render("{% for c in inputs.word %}{{ c }}{% endfor %} {{ item }}{{ n3.output[:2] }}", scope) == "fox 2xx"


@pytest.mark.parametrize("template", [
    "{{ inputs.word }}", "Part 1 of {{ inputs.word }}.", "{{ item }}", "{{ index }}:{{ item }}",
    "{{ n1.output }} / {{ n1.output.text }} / {{ n1.files }}", "[{{ skipped.output }}]", "{{ inputs.items }}",
    "{{ flag }} {{ ratio }} {{ count }}", "line one\r\nline two {{ inputs.word }}\r\n", "{{inputs.word}}{{item}}",
    "{{ text.upper }}", "{{ self }}", "ü {{ unicode }} ✓",
])
def test_a_template_of_names_renders_as_jinja_renders_it(template: str) -> None:
    """Templates of text and names skip Jinja's context; Jinja itself, rendering them in full, is the oracle."""
    scope = {**SCOPE, "item": "i3", "index": 3, "flag": True, "ratio": 0.5, "count": 0, "text": "abc",
             "unicode": "Grüße", "self": "a node called self"}
    assert render(template, scope) == "".join(_compiled(template).generate(scope))


@pytest.mark.parametrize("template", ["{{ inputs.wrod }}", "{{ missing }}", "{{ n1.output.text.__class__ }}",
                                      "{{ n1.__class__ }}"])
def test_a_template_of_names_that_fails_fails_as_jinja_says(template: str) -> None:
    with pytest.raises(TemplateError) as failed:
        render(template, SCOPE)
    with pytest.raises(Exception) as jinja:
        "".join(_compiled(template).generate(SCOPE))
    assert str(failed.value) == str(jinja.value)
