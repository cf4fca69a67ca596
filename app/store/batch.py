"""A write transaction's batch: what the calls group-committed together share (see `Database.run_write`)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any


class Batch:
    """What the calls of one write transaction share (see `run_write`): the workflow rows they locked,
    as the calls left them, and each row's update, written once when the calls are done.

    Five tasks of a round ending together are one batch: their appends read the workflow row
    once and write its totals once instead of five times each.
    """

    def __init__(self) -> None:
        self.rows: dict[str, Any] = {}
        self.updates: dict[str, Callable[[], None]] = {}
        self.costs: dict[str, tuple[dict[str, Any], bool]] = {}  # each row's costs to add, and whether to announce
        self.fenced: set[Any] = set()  # claims checked (and their rows locked) in this transaction
        self.claim_owners: dict[Any, Any] = {}  # claims' owners read (and locked) with a row, still to check

    def settle(self, workflow_id: str) -> None:
        """Write the row's update now and forget the row: a statement that changes it otherwise follows."""
        update = self.updates.pop(workflow_id, None)
        if update is not None:
            update()
        self.forget(workflow_id)

    def forget(self, workflow_id: str) -> None:
        """The row is deleted: nothing of it is written."""
        self.updates.pop(workflow_id, None)
        self.costs.pop(workflow_id, None)
        self.rows.pop(workflow_id, None)


def batch_of(conn: Any) -> Batch | None:
    """The batch of the write transaction `conn` is in (None outside `run_write`)."""
    batch: Batch | None = conn.info.get("batch")
    return batch


def run_all(conn: Any, batch: list[tuple[Callable[..., Any], tuple[Any, ...], Any]]) -> list[tuple[bool, Any]]:
    shared = conn.info["batch"] = Batch()
    try:
        results = [(True, work(conn, *args)) for work, args, _ in batch]
        for update in shared.updates.values():
            update()
        return results
    finally:
        if not conn.invalidated:  # a lost connection is discarded with its info (nor can it be read)
            conn.info.pop("batch", None)
