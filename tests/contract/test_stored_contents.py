"""A message's documents read the same on the wire whether their row was written before content
items were stored as they are (the wire's camelCase shape) or after."""

from __future__ import annotations

from datetime import UTC, datetime

import msgspec

from app.contract.views import document_view
from app.store.tables import DocumentRow, FileRow
from extractors import extract

OLD_SHAPE = [  # as rows were written before: the contract's object, flags inside metadata
    {"sequenceNr": 1, "name": "page 1", "ext": "txt", "contentType": "text/plain", "data": "Hello.",
     "dataExtracted": None, "metadata": {"page": 1, "isText": True, "base64Encoded": False, "aiProcessed": False},
     "summary": "page 1: 6 characters"},
    {"sequenceNr": 2, "name": "image 1", "ext": "png", "contentType": "image/png", "data": "iVBORw0KGgo=",
     "dataExtracted": None, "metadata": {"isText": False, "base64Encoded": True, "aiProcessed": False},
     "summary": "image 1: binary image/png"},
]
FILE = FileRow(id=7, mandate_id=1, user_id=1, name="old", ext="pdf", mime="application/pdf", size=10, sha256="x",
               created_at=datetime(2026, 1, 1, tzinfo=UTC))


def wire(contents: list, include_data: bool) -> list:
    doc = DocumentRow(id="doc_1_0", message_id=1, file_id=7, position=0, contents=contents)
    return msgspec.to_builtins(document_view(doc, FILE, include_data=include_data))["contents"]


def test_rows_of_the_old_shape_read_as_they_always_did():
    assert wire(OLD_SHAPE, include_data=True) == OLD_SHAPE
    hidden = wire(OLD_SHAPE, include_data=False)  # binary data only with includeData=true
    assert hidden[1]["data"] == "" and hidden[0]["data"] == "Hello."


def test_items_stored_as_they_are_show_the_contracts_shape():
    items = extract(b"One line of text.\n", "note.txt").items
    stored = msgspec.to_builtins(items)  # what the JSON column holds
    (shown,) = wire(stored, include_data=False)
    assert shown["sequenceNr"] == 1 and shown["contentType"].startswith("text/plain")
    assert shown["data"] == "One line of text.\n" and shown["dataExtracted"] is None
    assert {"isText": True, "base64Encoded": False, "aiProcessed": False}.items() <= shown["metadata"].items()
