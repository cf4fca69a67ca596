"""The structured facts every `ModelRequest` this package makes carries in `hints`.

Remote models read `request.messages`; the offline model works from these hints alone, so
every request states here what it asks for. The keys, all optional except `kind`:

- `kind`: what is asked: "plan", "summary", "answer", "write", "translate", "extract",
  "final" (map/reduce requests carry the kind of the task they serve).
- `prompt`: the user's request of this round; `language`: ISO code of the reply language.
- `agent`, `task`, `instructions`: the agent calling, its task id and the task's instructions.
- `question`: what an answer or a passage search is about.
- `passages`: for answers, the ranked passages ({"n", "name", "text", "quote", "score", ...});
  `absent`: the question's words no document uses, when the passages do not answer it (`agents.knowledge.coverage`);
  `unmentioned`: those words when the passages answer most of it (said under the quotes); `compiled`: what was
  computed over a table, one sentence each with the marks of its rows (`agents.knowledge.compiled`); `lacking`: the kind of fact the question asks
  for ("price", "date", "number") when no passage holds one (`agents.language.answer_kind`).
- `target_language`: ISO code a translation goes into (None when the request names none).
- `documents`: list of `doc_facts` dicts: name, ext, mime, size (bytes), tokens, summary,
  pages, sheets, round (posted or produced in), origin ("uploaded"/"produced"), new (posted
  with this round), tables (count of tables found), and `text` for the text the call works on (a whole
  document or, with `part`/`parts`, one chunk of it). Plan requests carry no `text`.
- `partials`: for "reduce" requests, the map results to combine, in document order.
- `agents`: for plan requests, list of {"name", "description"}; `max_tasks`: the plan limit.
- `history`: earlier rounds as [role, content] pairs (trimmed to the budget).
- `previous`: for plan requests, the latest earlier round when it was interrupted:
  {"round", "tasks": [{"id", "agent", "instructions", "inputs", "outputs", "dependsOn",
  "delivered"}], "finalDocuments"}; the offline planner continues it on "continue".
- `errors`: for "repair" requests, the precise validation errors of the rejected plan.
- `title`, `sources`: for "write" requests, the document title and the material
  (list of {"name", "text"}) it is written from.
- `review`: for "final" requests: {"delivered": [file names], "missing": [planned final
  document names never produced], "done": [task ids], "failed": [task ids],
  "skipped": [[task id, reason], ...]}.
"""

from __future__ import annotations

from typing import Any

from agents.base import DocumentText
from agents.toolkit.tokens import count_tokens


def doc_facts(doc: DocumentText, *, text: str | None = None, tables: int | None = None,
              part: int | None = None, parts: int | None = None) -> dict[str, Any]:
    """The facts about a document that a request's hints carry."""
    facts: dict[str, Any] = {
        "name": doc.name,
        "ext": doc.ext,
        "mime": doc.mime,
        "size": doc.size,
        "tokens": count_tokens(doc.text),
        "summary": doc.summary,
        "pages": doc.pages,
        "sheets": doc.sheets,
        "round": doc.round,
        "origin": doc.origin,
        "new": doc.new,
    }
    if tables is not None:
        facts["tables"] = tables
    if text is not None:
        facts["text"] = text
    if part is not None:
        facts["part"], facts["parts"] = part, parts
    return facts
