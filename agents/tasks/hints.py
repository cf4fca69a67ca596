"""The facts about a document that the requests of this package carry (`agents.requests.DocFacts`).

What each kind of request says is typed in `agents.requests`: remote models read
`request.messages`; the offline model works from those hints alone, so every request states
there what it asks for.
"""

from __future__ import annotations

from agents.base import DocumentText
from agents.requests import DocFacts
from agents.toolkit.tokens import count_tokens


def doc_facts(doc: DocumentText, *, text: str | None = None, tables: int | None = None,
              part: int | None = None, parts: int | None = None) -> DocFacts:
    """The facts about a document that a request's hints carry."""
    return DocFacts(name=doc.name, ext=doc.ext, mime=doc.mime, size=doc.size, tokens=count_tokens(doc.text),
                    summary=doc.summary, pages=doc.pages, sheets=doc.sheets, round=doc.round, origin=doc.origin,
                    new=doc.new, tables=tables, text=text, part=part, parts=None if part is None else parts)
