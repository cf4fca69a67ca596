"""What the project manager says about files it could not read."""

from __future__ import annotations

import json

import pytest

from agents.base import DocumentText
from agents.planning.notices import nothing_delivered, unreadable_note


def _doc(name: str, problem: str = "", file_id: int = 7) -> DocumentText:
    return DocumentText(name=name, ext=name.rsplit(".", 1)[-1], mime="", size=10, items=[], file_id=file_id,
                        problem=problem)


def test_read_documents_need_no_note():
    assert unreadable_note([_doc("a.pdf")], "en") == ""


@pytest.mark.parametrize("language, words", [
    ("en", ["encrypted", "password"]), ("de", ["verschlüsselt", "Passwort"]), ("fr", ["chiffré", "mot de passe"]),
])
def test_an_encrypted_file_gets_the_exact_json_to_send_its_password(language, words):
    note = unreadable_note([_doc("locked.pdf", "encrypted", 12)], language)
    assert "**locked.pdf**" in note and all(w in note for w in words)
    shape = json.loads(note.rsplit("`", 2)[-2])
    assert shape == {"prompt": "...", "listFileId": [12], "passwords": {"12": "..."}}


def test_each_problem_has_its_remedy_and_an_unknown_language_gets_english():
    note = unreadable_note([_doc("a.docx", "corrupt"), _doc("b.doc", "unsupported"), _doc("c.zip", "refused"),
                            _doc("d.pdf", "timeout"), _doc("e.pdf", "error")], "ja")
    lines = note.splitlines()
    assert lines[0] == "I could not read every file you sent:"
    assert "Upload it again" in lines[1] and "DOCX" in lines[1]
    assert "a .doc as .docx" in lines[2] and "Excel (.xlsx, .xls)" in lines[2]
    assert "one by one" in lines[3] and "time limit" in lines[4] and "operator" in lines[5]


def test_a_round_that_delivered_nothing_says_so_plainly():
    assert nothing_delivered("de").startswith("In dieser Runde wurde nichts")
