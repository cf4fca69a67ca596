"""The project manager's answer is never shown cut: an answer that stops before its sentence ends
("A good name for a bakery could be") is asked for again on its own, as plain text without the
plan's JSON around it, and if that is cut too, it ends at its last whole sentence."""

from __future__ import annotations

import re

from agents.model import ModelRequest
from agents.requests import AnswerHints
from agents.tasks.calls import Ledger, messages
from agents.tasks.inputs import language_name

ANSWER_TOKENS = 400
_END = re.compile(r"[.!?…:;)\]»\"'”“`*]\s*$")  # German closes a quotation with “
_NOT_PROSE = re.compile(r"^\s*(?:[-*+>|#]|\d+[.)]\s|```)")
_SENTENCE_END = re.compile(r"[.!?…](?:[)\]»\"'”*]*)(?=\s|$)")


def is_cut(text: str) -> bool:
    """Whether the text stops inside a sentence: its last line is prose of a few words without an end."""
    lines = [line for line in text.strip().splitlines() if line.strip()]
    if not lines:
        return False
    last = lines[-1]
    return not _NOT_PROSE.match(last) and len(last.split()) >= 4 and not _END.search(last)


def to_last_sentence(text: str) -> str:
    """The text up to its last finished sentence ("" when none is finished)."""
    ends = list(_SENTENCE_END.finditer(text))
    return text[:ends[-1].end()].rstrip() if ends else ""


async def complete_answer(ledger: Ledger, answer: str, prompt: str, language: str, agent: str) -> tuple[str, str]:
    """The answer, finished: (text, what was done) where what was done is "" when it was not cut."""
    if not is_cut(answer):
        return answer, ""
    request = ModelRequest(
        purpose="answer",
        messages=messages(f"Write only in {language_name(language)}. You are a helpful assistant. Answer the user "
                          "in complete sentences, briefly.", prompt),
        agent=agent, hints=AnswerHints(prompt=prompt, language=language), max_tokens=ANSWER_TOKENS)
    try:
        again = (await ledger.ask(request)).text.strip()
    except Exception:  # noqa: BLE001 - the cut answer is still ended at a sentence below
        again = ""
    if again and not is_cut(again):
        return again, "the answer stopped mid-sentence; it was asked for again on its own"
    for text in (again, answer):
        whole = to_last_sentence(text)
        if whole:
            return whole, "the answer stopped mid-sentence; it ends at its last whole sentence"
    return answer.rstrip() + " …", "the answer stopped mid-sentence and has no whole sentence; it is marked as cut"
