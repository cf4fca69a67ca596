"""The writing end of live text without HTTP: the answer field parsed from partial JSON, white
space held back, a retraction that discards what was shown, the message's draft id."""

from __future__ import annotations

import asyncio
import json

from app.llm.streaming import Streamer
from app.rounds.drafts import Drafts


def _drafts() -> tuple[Drafts, list[str]]:
    woken: list[str] = []
    return Drafts(woken.append, woken.append), woken


def test_the_answer_field_streams_as_its_json_arrives_and_stops_at_the_next_key() -> None:
    async def run() -> None:
        drafts, _ = _drafts()
        with drafts.writing("w", 1, "w:1:plan:message") as draft:
            text = json.dumps({"userLanguage": "en", "objUserResponse": "Caf\u00e9 \"au\" lait, then the plan.",
                               "objWorkplan": [{"id": "t1", "instructions": "objUserResponse"}]})
            streamer = Streamer(draft, "objUserResponse", 0)
            seen = []
            for i in range(0, len(text), 3):
                streamer.feed(text[i:i + 3])
                seen.append(draft.current.text if draft.current else "")
        assert seen[-1] == 'Café "au" lait, then the plan.'
        assert all(b.startswith(a) for a, b in zip(seen, seen[1:]))  # it only ever grew
        assert drafts.closing("w:1:plan:message", 'Café "au" lait, then the plan.\n\n### Work plan') == draft.current.id

    asyncio.run(run())


def test_white_space_is_held_until_text_follows_and_a_retraction_discards_the_draft() -> None:
    async def run() -> None:
        drafts, woken = _drafts()
        with drafts.writing("w", 1, "k") as draft:
            mark = draft.mark()
            for piece in ["  Hello", " ", "world", "\n\n"]:
                draft.text(piece)
            first = draft.current
            assert first.text == "Hello world"
            draft.retract(mark)  # the call is retried: what it wrote goes
            assert "w" not in drafts.live or first.id not in drafts.of("w")
            draft.mark()
            draft.text("Again")
            assert draft.current.id != first.id and draft.current.text == "Again"
        # The content does not begin with what was shown: a new draft carries the message whole.
        other = drafts.closing("k", "Something else")
        assert other not in (first.id, None)
        drafts.landed("k", stored=True)
        assert drafts.of("w") == {}

    asyncio.run(run())
