"""Who wrote a document is in its byline, the lines under its title that name its authors ("Ideology as ritual /
Avram Lyon / Monday, December 5, 2011"), which share no word with "Who wrote the essay?": a search by the
question's words finds passages about authors or writing instead, or nothing (a walk over the corpus: the
essay, the TraceMonkey paper). An authorship question (`agents.language.asked_kind` AUTHOR) gets each
document's byline as its first passage; a document without one gets none, and the answer says that no
passage names an author rather than quoting one that does not. Pure, no I/O."""

from __future__ import annotations

from collections.abc import Sequence
from itertools import takewhile

from agents.base import DocumentText, Passage
from agents.knowledge.passages import location
from agents.language import AUTHOR, asked_kind, person_names

OPENING_LINES = 8  # a byline stands among the first lines of a document, after its title


def byline(doc: DocumentText) -> Passage | None:
    """The document's byline as a passage (its lines as written), or None when its opening names no one.
    The first line is its title, never its byline: "JEAN-BAPTISTE POQUELIN MOLIÈRE" heads a text about him."""
    if not doc.items:
        return None
    item, text = doc.items[0]
    lines = [line.strip() for line in text.splitlines() if line.strip()][1:OPENING_LINES]
    start = next((i for i, line in enumerate(lines) if person_names(line)), None)
    if start is None:
        return None
    block = list(takewhile(person_names, lines[start:]))
    return Passage(name=doc.name, text="\n".join(block), score=1.0, file_id=doc.file_id, **location(item))


def with_bylines(question: str, found: Sequence[Passage], documents: Sequence[DocumentText]) -> list[Passage]:
    """For a question asking who wrote the documents, their bylines first, then the passages found (a byline
    the search found too is not repeated); any other question's passages as they are."""
    if asked_kind(question) != AUTHOR:
        return list(found)
    lines = [b for b in map(byline, documents) if b is not None]
    return lines + [p for p in found if not any(p.name == b.name and b.text in p.text for b in lines)]

