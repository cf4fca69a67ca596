"""The event stream's read: a workflow row and the items after a stream's cursors, in one snapshot."""

from __future__ import annotations

from sqlalchemy.engine import Connection

from app.store.database import Database
from app.store.records import LivePage, Owner
from app.store.repository.files import FileStore
from app.store.repository.messages import MessageStore
from app.store.repository.workflows import WorkflowStore
from app.store.tables import stored_id


class LiveReads:
    """What an event stream sends next, read across the workflow, message and file stores."""

    def __init__(self, db: Database, workflows: WorkflowStore, messages: MessageStore, files: FileStore) -> None:
        self.db = db
        self.workflows = workflows
        self.messages = messages
        self.files = files

    async def page(self, owner: Owner, workflow_id: str, after_message: int, after_log: int,
                   limit: int) -> LivePage | None:
        """The items after the cursors, up to `limit` of each kind (None: the workflow is gone).

        The workflow row bounds them: none past its last ids, so the status read with them is
        never older than they are. With the logs come the messages they say were filled in.
        """
        return await self.db.run_read(self._page_tx, owner, workflow_id, after_message, after_log, limit)

    def _page_tx(self, conn: Connection, owner: Owner, workflow_id: str, after_message: int, after_log: int,
                 limit: int) -> LivePage | None:
        row = self.workflows.workflow_tx(conn, owner, workflow_id)
        if row is None:
            return None
        messages = [] if after_message >= row.last_message_id else [
            (m, docs) for m, docs in self.messages.message_page_tx(conn, workflow_id, after_message, limit)
            if stored_id(m) <= row.last_message_id]
        logs = [] if after_log >= row.last_log_id else [
            (e, m) for e, m in self.messages.log_page_tx(conn, workflow_id, after_log, limit)
            if stored_id(e) <= row.last_log_id]
        filled = sorted({m for _, m in logs if m is not None})
        updated = {stored_id(m): (m, docs) for m, docs in self.messages.messages_by_id_tx(conn, workflow_id, filled)}
        file_ids = sorted({d.file_id for _, docs in messages + list(updated.values()) for d in docs})
        return LivePage(row, messages, self.files.files_by_id_tx(conn, file_ids), logs, updated)
