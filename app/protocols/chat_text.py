"""One assistant message's content out of a round's messages, as a chat completion streams it.

A chat completion has one text, written from start to end, while a round writes several messages
at once (parallel tasks). So the text of one message streams live, the others wait, each whole
or as far as it got, until that one ends; then the next goes on. A message never interleaves
with another, and nothing already sent is taken back: a draft discarded while it streamed (its
call failed or was tried again) ends with an ellipsis, and its message, written again, follows.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from app.protocols.rounds import Closed, Piece, Text

CUT = " …"  # after the text of a streamed draft that was discarded


@dataclass
class _Waiting:
    text: str
    done: bool  # its message was written (else: a draft still being written)


@dataclass
class ChatText:
    """What to send of each part: `take(part)` returns the text to append (possibly "")."""

    current: str | None = None  # the draft streaming now
    waiting: dict[str, _Waiting] = field(default_factory=dict)  # in the order they began
    sent_any: bool = False
    _whole: int = 0

    def take(self, part: Text | Piece | Closed) -> str:
        if isinstance(part, Text):
            self._whole += 1
            key = f"message:{self._whole}"
            if self.current is None:
                return self._begin(part.text)
            self.waiting[key] = _Waiting(part.text, True)
            return ""
        if isinstance(part, Piece):
            if self.current is None:
                self.current = part.draft_id
                return self._begin(part.text)
            if part.draft_id == self.current:
                return part.text
            waiting = self.waiting.setdefault(part.draft_id, _Waiting("", False))
            waiting.text += part.text
            return ""
        if part.draft_id != self.current:
            began = self.waiting.pop(part.draft_id, None)
            if began is not None and part.message is not None:  # it ended while another streamed
                self.waiting[part.draft_id] = _Waiting(began.text + part.text, True)
            return ""
        self.current = None
        return (part.text if part.message is not None else CUT) + self._next()

    def rest(self, endings: list[str]) -> str:
        """At the round's end: the messages still waiting (drafts never finished are dropped), then
        `endings` (what the round's end says)."""
        out, self.current = "", None
        for waiting in self.waiting.values():
            if waiting.done:
                out += self._begin(waiting.text)
        self.waiting.clear()
        return out + "".join(self._begin(text) for text in endings)

    def _next(self) -> str:
        """After the streaming message ended: the waiting ones that are done, then the first still written."""
        out = ""
        while self.waiting:
            key = next(iter(self.waiting))
            waiting = self.waiting.pop(key)
            out += self._begin(waiting.text)
            if not waiting.done:
                self.current = key
                break
        return out

    def _begin(self, text: str) -> str:
        """A message's first text, after a blank line when another came before."""
        out = ("\n\n" if self.sent_any else "") + text
        self.sent_any = True
        return out
