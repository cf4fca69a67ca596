"""A workflow's row as a write transaction locks it, once per batch, and the fence of a round's claim:
every write to a running round goes through here (see app.store.ownership)."""

from __future__ import annotations

from types import SimpleNamespace

from sqlalchemy import bindparam, column, select, table
from sqlalchemy.engine import Connection

from app.store.batch import batch_of
from app.store.database import Database
from app.store.ownership import Claim, ClaimLostError
from app.store.statements import Prepared
from app.store.tables import WorkflowRow, table_of

# DBOS's status row of a round's workflow, in the same PostgreSQL database (schema "dbos").
DBOS_STATUS = table("workflow_status", column("workflow_uuid"), column("owner_xid"), schema="dbos")
# FOR SHARE: a takeover's update of the row waits for this write's commit, while the writes of one
# round's parallel tasks do not wait for each other here.
_FENCE = (select(DBOS_STATUS.c.owner_xid).where(DBOS_STATUS.c.workflow_uuid == bindparam("workflow"))
          .with_for_update(read=True))
_OWNER = "fenced_owner_xid"  # the column `lock` adds for `fence`


def settle_batch(conn: Connection, workflow_id: str) -> None:
    """A statement that changes or reads back the workflow row follows: what the batch left to write goes first."""
    if (shared := batch_of(conn)) is not None:
        shared.settle(workflow_id)


class WorkflowLocks:
    """Locks a workflow's row in a write transaction and checks that a round's claim still owns it."""

    def __init__(self, db: Database) -> None:
        self.db = db
        wt = table_of(WorkflowRow)
        lock = fenced = select(wt).where(wt.c.id == bindparam("wid"))
        if not db.is_sqlite:
            lock = lock.with_for_update()  # appends per workflow commit in id order
            # The same, with the fence's read of the claim's owner (locked FOR SHARE): one statement, not two.
            owner = _FENCE.scalar_subquery().label(_OWNER)
            fenced = select(wt, owner).where(wt.c.id == bindparam("wid")).with_for_update(of=wt)
        # Every append reads the row: straight on the cursor (app.store.statements).
        self._query, self._fenced_query = Prepared(lock), Prepared(fenced)

    def fence(self, conn: Connection, claim: Claim | None) -> None:
        """Raise ClaimLostError unless `claim` still owns its DBOS workflow; its status row stays locked
        until commit. On SQLite one process runs every round, and DBOS's tables are in another file."""
        if claim is None or self.db.is_sqlite:
            return
        fenced = shared.fenced if (shared := batch_of(conn)) is not None else set()
        if claim in fenced:  # checked earlier in this transaction, and locked since
            return
        owners = shared.claim_owners if shared is not None else {}
        owner = owners.pop(claim) if claim in owners else conn.execute(_FENCE, {"workflow": claim.workflow}).scalar()
        if owner != claim.token:
            raise ClaimLostError(f"Round {claim.workflow} was taken over by another replica; this one stops.")
        fenced.add(claim)

    def lock(self, conn: Connection, workflow_id: str, claim: Claim | None = None) -> SimpleNamespace | None:
        """The workflow's row, locked; with a `claim` still to fence in this batch (PostgreSQL), the
        same statement reads and locks the claim's owner, which `fence` then checks."""
        # The row's columns as attributes, unvalidated: every append reads it, and validating
        # it into a WorkflowRow cost more than the statements the append runs. In a batch the
        # first call reads it, and the others get it as the calls before them left it.
        shared = batch_of(conn)
        if shared is not None and workflow_id in shared.rows:
            held: SimpleNamespace = shared.rows[workflow_id]
            return held
        fencing = claim is not None and shared is not None and not self.db.is_sqlite and claim not in shared.fenced
        if fencing and claim is not None:
            values = self._fenced_query.first(conn, {"wid": workflow_id, "workflow": claim.workflow})
        else:
            values = self._query.first(conn, {"wid": workflow_id})
        if values is None:
            return None
        if fencing and shared is not None:
            shared.claim_owners[claim] = values.pop(_OWNER)
        return self.hold(conn, SimpleNamespace(**values))

    @staticmethod
    def hold(conn: Connection, row: SimpleNamespace) -> SimpleNamespace:
        """`row`, locked by this transaction: the later calls of its batch take it from here (see `lock`)."""
        if (shared := batch_of(conn)) is not None:
            shared.rows[row.id] = row
        return row
