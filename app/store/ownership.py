"""Fencing: a round's output lands only while its execution still owns the round's DBOS workflow.

DBOS gives every execution of a workflow an ownership token (`owner_xid` on its status row)
and refuses the checkpoints of an execution whose token was replaced, as recovery does when
another replica takes a silent one's rounds over. A replica that was only paused comes back
with its old token: each write of the round checks that token in the same transaction as the
write, with the status row locked until commit, so a takeover can never land between the check
and the write, and the stale execution writes nothing (`ClaimLostError` ends its local work).
On SQLite DBOS keeps its tables in another file, and one process runs everything: no check.
"""

from __future__ import annotations

from dataclasses import dataclass

from dbos._context import get_local_dbos_context  # the token is not in DBOS's public API


class ClaimLostError(Exception):
    """Another execution owns the round now (it was taken over): this one must stop, writing nothing."""


@dataclass(frozen=True)
class Claim:
    """The DBOS workflow an execution runs and the ownership token it holds."""

    workflow: str
    token: str


def current_claim() -> Claim | None:
    """The claim of the DBOS workflow running in this context; None outside any (an API call, a sweep)."""
    ctx = get_local_dbos_context()
    if ctx is None or not ctx.workflow_id or ctx.owner_xid is None:
        return None
    return Claim(ctx.workflow_id, ctx.owner_xid)
