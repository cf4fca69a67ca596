"""What a person filled in on a PDF form is read with its page: the corpus form `libreoffice-form.pdf` has
"Alice" and "Bob" in its name fields, which no page text holds (it read as an empty form), and the
prefilled tax form `prefilled_f1040.pdf` a ticked box and a text field on its second page. Empty fields and
unticked boxes add nothing."""

from __future__ import annotations

from extractors import extract

from .conftest import corpus_bytes


def _pages(name: str) -> list[str]:
    return [str(item.data) for item in extract(corpus_bytes(name), name).items]


def test_the_filled_in_names_of_a_form_are_on_its_page():
    (page,) = _pages("libreoffice-form.pdf")
    assert "Example for a Form" in page  # the printed labels stay first
    assert page.endswith("First Name: Alice\nFirst Name_2: Bob")
    for empty in ("Last Name:", "Birthday:", "gdpr", "other:"):
        assert empty not in page.split("Other", 1)[1], empty


def test_a_ticked_box_and_a_filled_field_are_on_the_page_they_are_drawn_on():
    first, second = _pages("prefilled_f1040.pdf")
    assert "foobar" not in first
    assert second.endswith("c1_01_0_[0]: Yes\np2-t124[0]: foobar")
