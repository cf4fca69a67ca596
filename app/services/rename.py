"""Renaming a workflow: the title a person gives a conversation in the list (`PATCH /api/workflows/{id}`)."""

from __future__ import annotations

from app.contract.schemas import RenameRequest, WorkflowSummary
from app.contract.views import summary_view
from app.errors import BadRequestError, NotFoundError
from app.store.records import Owner
from app.store.repository.workflows import WorkflowStore

MAX_NAME = 80  # what a start keeps of its prompt as the name


def clean_name(name: str) -> str:
    """The name as it is kept: one line, spaces folded; BadRequestError when it cannot be a name."""
    if "\x00" in name:
        raise BadRequestError("The name must not contain NUL characters (\\u0000).", code="nul_character")
    kept = " ".join(name.split())
    if not kept:
        raise BadRequestError("The name is empty; give the conversation a name of at least one character.",
                              code="empty_name")
    if len(kept) > MAX_NAME:
        raise BadRequestError(f"The name has {len(kept)} characters; at most {MAX_NAME} are kept. Shorten it.",
                              code="name_too_long")
    return kept


async def rename(workflows: WorkflowStore, owner: Owner, workflow_id: str, body: RenameRequest) -> WorkflowSummary:
    """The owner's workflow under its new name, or NotFoundError when it is not theirs."""
    name = clean_name(body.name)
    row = await workflows.rename(owner, workflow_id, name) if "\x00" not in workflow_id else None
    if row is None:
        raise NotFoundError(f"There is no workflow {workflow_id!r}.", code="workflow_not_found")
    return summary_view(row)
