"""Reading a round's files, one by one, with a log per file and progress while a long file is read.

What a poller sees: the round's user message is there from the start (written by the start's
transaction) with its documents' names, types and sizes and empty `contents`. Each file's
contents are filled into that message as soon as the file is read, in the same transaction as
the log that says so ("Read report.pdf: 12 pages in 0.4 s"). Progress runs from 1 to 9 over
the files. Every write is keyed by the round and the file's position, so a step replayed after
a crash writes no log twice.
"""

from __future__ import annotations

import asyncio
import logging

from app.rounds.documents import Documents, Reading, display_name, not_stored
from app.rounds.journal import Journal
from app.store.records import NewLog
from app.store.repository.messages import READ_DONE, reading_key
from app.store.tables import FileRow, stored_id
from extractors.base import ContentItem, unread_reason
from extractors.text import MIMES as TEXTS

log = logging.getLogger(__name__)

AGENT = "extractor"
FIRST, LAST = 1, 9  # the progress points of reading files

# Why a file could not be read, as the log says it (the project manager's answer says it in the
# user's language, with what to do).
WHY = {
    "encrypted": "it is encrypted and no password (or not the right one) was given",
    "corrupt": "it is damaged or not in the format its type says",
    "unsupported": "its format is not one that is read",
    "refused": "it would unpack, or take memory, beyond the limits",
    "timeout": "reading it took longer than the time limit",
    "error": "its contents could not be stored",
}


class RoundReader:
    """Reads the files of one round and reports each one in the round's log."""

    def __init__(self, documents: Documents, journal: Journal, workflow_id: str, round_no: int, count: int) -> None:
        self.documents = documents
        self.journal = journal
        self.workflow_id = workflow_id
        self.round_no = round_no
        self.count = max(1, count)

    def progress(self, index: int, fraction: float = 0.0) -> int:
        """The round's progress while file `index` (0-based) is `fraction` read."""
        return min(LAST, FIRST + int((LAST - FIRST) * (index + fraction) / self.count))

    async def read(self, position: int, index: int, file: FileRow, password: str | None,
                   message_id: int | None = None) -> list[ContentItem]:
        """The file's content items as the wire shows them, filled into the round's user message (or
        into the earlier message `message_id`, whose own reading of the file was cut by a stop)."""
        name = display_name(file)
        key = reading_key(self.workflow_id, self.round_no, position)
        await self._log(NewLog(f"{key}:start", f"Reading {name} (file {index + 1} of {self.count}, "
                                                f"{_size(file.size)})", agent_name=AGENT,
                               progress=self.progress(index)))
        reports: asyncio.Queue[tuple[int, int] | None] = asyncio.Queue()
        writer = asyncio.create_task(self._report(reports, key, name, index, file.mime in TEXTS))
        try:
            reading = await self.documents.read(file, password, progress=lambda d, t: reports.put_nowait((d, t)))
            reports.put_nowait(None)
            await writer  # its logs come before the file's last one
        finally:
            writer.cancel()
        contents = reading.extraction.items
        logs = [_done(reading, contents, name, key + READ_DONE, self.progress(index + 1), bool(password))]
        logs += [NewLog(f"{key}:warn:{n}", warning, type="warning", agent_name=AGENT)
                 for n, warning in enumerate(reading.extraction.warnings)]
        try:
            await self.journal.attach(self.workflow_id, self.round_no, stored_id(file), contents, logs, message_id)
        except Exception:  # noqa: BLE001 - a file that cannot be stored fails itself, not the round
            log.exception("the contents of file %s could not be stored in round %s:%s", file.id, self.workflow_id,
                          self.round_no)
            failed = Reading(not_stored(file, reading.extraction.mime), False, reading.seconds)
            contents = failed.extraction.items
            await self.journal.attach(self.workflow_id, self.round_no, stored_id(file), contents,
                                      [_done(failed, contents, name, key + READ_DONE, self.progress(index + 1))],
                                      message_id)
        return contents

    async def _report(self, reports: asyncio.Queue[tuple[int, int] | None], key: str, name: str, index: int, text: bool) -> None:
        # Pages (of a text: KB) done of total, as the worker reports them every few seconds.
        while (report := await reports.get()) is not None:
            done, total = report
            line = (f"Reading {name}: {done / 1024:.0f} of {total / 1024:.0f} MB done" if text else
                    f"Reading {name}: page {done} of {total} done")
            await self._log(NewLog(f"{key}:page:{done}", line,
                                   agent_name=AGENT, progress=self.progress(index, done / max(1, total))))

    async def _log(self, entry: NewLog) -> None:
        await self.journal.append(self.workflow_id, self.round_no, logs=[entry])


def _done(reading: Reading, contents: list[ContentItem], name: str, key: str, progress: int,
          password: bool = False) -> NewLog:
    problem = unread_reason(contents)
    if problem == "encrypted":
        why = "the password given does not open it" if password else "it is encrypted and no password was given"
        return NewLog(key, f"Could not read {name}: {why}.", type="warning", agent_name=AGENT, progress=progress)
    if problem:
        return NewLog(key, f"Could not read {name}: {WHY.get(problem, WHY['corrupt'])}.", type="warning",
                      agent_name=AGENT, progress=progress)
    source = "from the cache" if reading.cached else f"in {reading.seconds:.1f} s"
    if reading.extraction.startup_seconds:  # no warm reader process was free: say where the time went
        source += f" ({reading.extraction.startup_seconds:.1f} s of it starting a reader process)"
    partly = "; parts of it could not be read" if reading.extraction.status == "partial" else ""
    return NewLog(key, f"Read {name}: {_parts(contents)} {source}{partly}", agent_name=AGENT, progress=progress)


def _parts(contents: list[ContentItem]) -> str:
    """'352 pages', '3 sheets', '12 slides' or '4 parts' of a document's own items (not its attachments)."""
    own = [c.metadata for c in contents]
    own = [m for m in own if "attachment" not in m and "member" not in m]
    for field, word in (("page", "page"), ("sheet", "sheet"), ("slide", "slide")):
        n = sum(1 for m in own if field in m)
        if n:
            return f"{n} {word}{'s' if n != 1 else ''}"
    n = len(contents)
    return f"{n} part{'s' if n != 1 else ''}"


def _size(size: int) -> str:
    if size < 1024:
        return f"{size} bytes"
    if size < 1024 * 1024:
        return f"{size / 1024:.1f} KB"
    return f"{size / (1024 * 1024):.1f} MB"
