"""A model call's text as it arrives, fed to the draft of the message it writes (`agents.model.TextSink`).

Prose goes as it comes. Of a structured answer only one string field is prose (the planner's
answer to the user, which its schema puts before the plan so the model writes it first): the
JSON is parsed as it arrives with jiter's partial mode, and the field's text goes out as it
grows, until the next key shows the field is complete.
"""

from __future__ import annotations

import jiter

from agents.model import TextSink

GIVE_UP_CHARS = 20_000  # a structured answer whose field has not begun by now: not worth parsing again


class Streamer:
    """Feeds one attempt's content to `sink` (all of it, or the string `field` of its JSON)."""

    def __init__(self, sink: TextSink, field: str | None, mark: int) -> None:
        self.sink = sink
        self.field = field
        self.mark = mark  # where the attempt's text begins in the draft
        self._raw: list[str] = []
        self._size = 0
        self._sent = 0
        self._done = False

    def feed(self, content: str) -> None:
        if self.field is None:
            self.sink.text(content)
            return
        if self._done:
            return
        self._raw.append(content)
        self._size += len(content)
        raw = "".join(self._raw)
        start = raw.find("{")  # a prompt-mode answer may open with a fence or a word
        if start < 0:
            return
        try:
            data = jiter.from_json(raw[start:].encode(), partial_mode="trailing-strings")
        except ValueError:
            self._done = self._size > GIVE_UP_CHARS
            return
        value = data.get(self.field) if isinstance(data, dict) else None
        if not isinstance(value, str):
            self._done = self._size > GIVE_UP_CHARS
            return
        if list(data)[-1] != self.field:  # a later key began: the field is whole
            self._done = True
        if len(value) > self._sent:
            self.sink.text(value[self._sent:])
            self._sent = len(value)

    def retract(self) -> None:
        """The attempt's text will not be kept (it is retried, or asked again)."""
        self.sink.retract(self.mark)
