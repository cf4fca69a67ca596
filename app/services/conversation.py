"""A workflow as a conversation its owner reads: the workflow whole, pages of messages and logs after a
cursor, hiding a message or taking a file off one. No HTTP here: the routes parse."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from datetime import datetime

from app.contract.schemas import LogEntry, LogPage, Message, MessagePage, Workflow, WorkflowSummary
from app.contract.views import log_view, message_view, summary_view, workflow_view
from app.errors import BadRequestError, NotFoundError
from app.rounds.runtime import Runtime
from app.store.cursors import Cursor
from app.store.records import Owner
from app.store.tables import FileRow, WorkflowRow


class Conversation:
    """What the owner of a workflow reads of it (`WorkflowService` adds starting, stopping, deleting)."""

    def __init__(self, rt: Runtime) -> None:
        self.rt = rt
        self.repo = rt.repo

    async def owned(self, owner: Owner, workflow_id: str) -> WorkflowRow:
        """The owner's workflow, or NotFoundError."""
        row = await self.repo.workflows.workflow(owner, workflow_id) if may_exist(workflow_id) else None
        if row is None:
            raise no_workflow(workflow_id)
        return row

    @staticmethod
    def no_workflow(workflow_id: str) -> NotFoundError:
        return no_workflow(workflow_id)

    async def cursor(self, owner: Owner, workflow_id: str) -> Cursor:
        """The cached owner and last ids of a workflow, loading them once from the database."""
        entry = self.rt.cursors.get(workflow_id)
        if entry is None:
            row = await self.repo.workflows.workflow(None, workflow_id) if may_exist(workflow_id) else None
            if row is None:
                raise no_workflow(workflow_id)
            entry = Cursor(row.mandate_id, row.user_id, row.last_message_id, row.last_log_id)
            self.rt.cursors.put(workflow_id, entry)
        if (entry.mandate_id, entry.user_id) != (owner.mandate_id, owner.user_id):
            raise no_workflow(workflow_id)
        return entry

    async def workflows(self, owner: Owner, limit: int, after: tuple[datetime, str] | None
                        ) -> tuple[list[WorkflowSummary], tuple[datetime, str] | None]:
        """A page of the owner's workflows, newest activity first, and where the next page starts
        (None at the end); `after` is where this one starts."""
        rows = await self.repo.workflows.workflows(owner, limit + 1, after)
        more = len(rows) > limit
        rows = rows[:limit]
        return [summary_view(r) for r in rows], (rows[-1].last_activity, rows[-1].id) if more else None

    async def whole(self, owner: Owner, workflow_id: str, include_data: bool = False) -> Workflow:
        """The workflow with all its messages and logs.

        The logs are read before the messages: a file read meanwhile fills its message in with a log
        that names it, and that log must never be in the answer while the message is not (a client
        that follows on from the last ids would never see the message filled in); the other way round,
        the log comes after the answer's cursor and the client's stream sends the filled message."""
        row = await self.owned(owner, workflow_id)
        logs = [log_view(entry, row.mandate_id, row.user_id, updated)
                for entry, updated in await self.repo.messages.logs_of(workflow_id)]
        rows = await self.repo.messages.messages_of(workflow_id)
        files = await self.repo.files.files_by_id(sorted({d.file_id for _, docs in rows for d in docs}))
        blobs = await self.blobs(include_data, files)
        messages = [message_view(m, docs, files, blobs) for m, docs in rows]
        return workflow_view(row, messages, logs)

    async def delete_message(self, owner: Owner, workflow_id: str, message_id: int) -> None:
        """Hide a message of the owner's workflow; its id stays valid as a cursor."""
        await self.owned(owner, workflow_id)
        if not await self.repo.messages.delete_message(workflow_id, message_id):
            raise NotFoundError(f"Workflow {workflow_id!r} has no message {message_id}.", code="message_not_found")

    async def remove_document(self, owner: Owner, workflow_id: str, message_id: int, file_id: int) -> None:
        """Take a file off a message of the owner's workflow."""
        await self.owned(owner, workflow_id)
        if not await self.repo.messages.remove_document(workflow_id, message_id, file_id):
            raise NotFoundError(f"Message {message_id} of workflow {workflow_id!r} has no file {file_id}.",
                                code="document_not_found")

    async def page(self, owner: Owner, workflow_id: str, kind: str, after: int, limit: int,
                   include_data: bool = False) -> MessagePage | LogPage:
        """Messages (`kind` "messages") or else log entries after the cursor (0: from the start)."""
        if kind == "messages":
            return await self.messages(owner, workflow_id, after, limit, include_data)
        return await self.logs(owner, workflow_id, after, limit)

    async def messages(self, owner: Owner, workflow_id: str, after: int, limit: int,
                       include_data: bool = False) -> MessagePage:
        """Messages after the cursor (0: from the start), in the order they were written."""
        cursor = await self.cursor(owner, workflow_id)
        last = cursor.last_message_id
        if after and after == last:
            return MessagePage(items=[], last_id=after, has_more=False)  # the hot path: nothing new, no database
        await self._check_cursor(workflow_id, "messages", after)
        rows, committed = await self.repo.messages.message_page(workflow_id, after, limit + 1)
        files = await self.repo.files.files_by_id(sorted({d.file_id for _, docs in rows for d in docs}))
        blobs = await self.blobs(include_data, files)
        items = [message_view(m, docs, files, blobs) for m, docs in rows[:limit]]
        more = len(rows) > limit
        return MessagePage(items=items, last_id=_reached(items, after, committed, more), has_more=more)

    async def logs(self, owner: Owner, workflow_id: str, after: int, limit: int) -> LogPage:
        """Log entries after the cursor (0: from the start), in the order they were written."""
        cursor = await self.cursor(owner, workflow_id)
        last = cursor.last_log_id
        if after and after == last:
            return LogPage(items=[], last_id=after, has_more=False)  # the hot path: nothing new, no database
        await self._check_cursor(workflow_id, "logs", after)
        logs, committed = await self.repo.messages.log_page(workflow_id, after, limit + 1)
        items = [log_view(entry, cursor.mandate_id, cursor.user_id, updated) for entry, updated in logs[:limit]]
        more = len(logs) > limit
        return LogPage(items=items, last_id=_reached(items, after, committed, more), has_more=more)

    async def _check_cursor(self, workflow_id: str, kind: str, after: int) -> None:
        """BadRequestError unless `after` is 0 or the id of one of the workflow's `kind` ("messages", "logs")."""
        if after < 0 or (after and not await self.repo.messages.cursor_belongs(workflow_id, kind, after)):
            raise BadRequestError(f"{after} is not the id of a {kind[:-1]} of this workflow; pass the last id "
                                  "you received, or no id to start from the beginning.", code="bad_cursor")

    async def blobs(self, include: bool, files: dict[int, FileRow]) -> Callable[[FileRow], bytes] | None:
        """How views get the documents' bytes: read from the store with `?includeData=true`, else not at all."""
        if not include:
            return None
        data = {sha: await self.rt.storage.get(sha) for sha in sorted({f.sha256 for f in files.values()})}
        return lambda file: data[file.sha256]


def _reached(items: Sequence[Message | LogEntry], after: int, last: int, more: bool) -> int:
    """The cursor a page leaves the poller at: past deleted messages up to the workflow's last id when the
    page is the end, so `lastId` meets status' `lastMessageId` even when the last message was deleted.
    `last` is the id committed before the page was read (never the cache's, which runs ahead of commits)."""
    reached = items[-1].id if items else after
    return max(reached, last) if not more else reached


def may_exist(workflow_id: str) -> bool:
    # PostgreSQL refuses NUL in text; no workflow id has one.
    return "\x00" not in workflow_id


def no_workflow(workflow_id: str) -> NotFoundError:
    return NotFoundError(f"There is no workflow {workflow_id!r}.", code="workflow_not_found")
