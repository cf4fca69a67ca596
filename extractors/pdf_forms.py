"""What a person filled in on a PDF form: the values of its fields, which no page's text holds.

A form's values live in its fields, drawn over the page by their widgets; pypdf's and pdfium's page text
gives the printed labels only ("First Name Last Name"), so the corpus form `libreoffice-form.pdf`, filled
in with "Alice" and "Bob", read as an empty form and a question about the name found nothing. Each page
now ends with one line per filled field on it, "label: value", in the page's order of widgets: the
field's description (/TU) where it has one, else its name; a ticked box or chosen option by its state's
name. Empty fields and boxes left unticked add nothing. Pure, over pypdf's objects.
"""

from __future__ import annotations

from typing import Any

from pypdf import PageObject
from pypdf.generic import NameObject

_UNTICKED = {"/Off", ""}


def _inherited(widget: Any, key: str) -> Any:
    """A field's entry, from the widget or the field it is a kid of (a radio group keeps its value above)."""
    node, depth = widget, 0
    while node is not None and depth < 8:
        if key in node:
            return node[key]
        parent = node.get("/Parent")
        node, depth = (parent.get_object() if parent is not None else None), depth + 1
    return None


def _value(widget: Any) -> str:
    value = _inherited(widget, "/V")
    if value is None:
        return ""
    if isinstance(value, NameObject):  # a box's or a radio button's state
        return "" if value in _UNTICKED else str(value)[1:]
    if isinstance(value, list):  # a list box with several chosen
        return ", ".join(str(v) for v in value if str(v).strip())
    return str(value).strip()


def filled_fields(page: PageObject) -> list[str]:
    """"label: value" for each filled field whose widget is on the page, each field once, in order."""
    lines: list[str] = []
    seen: set[str] = set()
    for ref in page.get("/Annots") or []:
        widget = ref.get_object()
        if widget.get("/Subtype") != "/Widget":
            continue
        label = str(_inherited(widget, "/TU") or _inherited(widget, "/T") or "").strip()
        value = _value(widget)
        if not value or not label or label in seen:
            continue
        seen.add(label)
        lines.append(f"{label}: {value}")
    return lines
