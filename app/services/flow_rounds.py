"""Flows and rounds, both ways: a round's plan saved as a flow (`POST /api/flows` with `fromRound`, drafted by
`agents.round.plan_definition`), and a flow round run again (`POST /api/workflows/{id}/rerun`): from where
it failed, or from a chosen node with changed inputs, what succeeded before reused (its node runs copied,
`reusedFrom` the round) and never run twice. No HTTP here."""

from __future__ import annotations

import re
from collections.abc import Iterable
from typing import Any

from agents.flows import FlowDefinition
from agents.round import plan_definition
from app.contract.flows import FlowView
from app.errors import BadRequestError, ConflictError, NotFoundError
from app.fsm import WorkflowStatus
from app.rounds.records import plan_of
from app.services.workflows import WorkflowService
from app.store.records import Owner
from app.store.tables import stored_id

IDENTIFIER = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")  # a node id, the start of a node run's path


def _no_round(workflow_id: str, round_no: int) -> NotFoundError:
    return NotFoundError(f"Workflow {workflow_id} has no round {round_no}.", code="round_not_found")


def downstream(edges: Iterable[tuple[str, str]], first: str) -> set[str]:
    """`first` and every node that depends on it, through the edges."""
    after: dict[str, list[str]] = {}
    for source, target in edges:
        after.setdefault(source, []).append(target)
    found, stack = {first}, [first]
    while stack:
        for target in after.get(stack.pop(), []):
            if target not in found:
                found.add(target)
                stack.append(target)
    return found


def top_of(path: str) -> str:
    """The top-level node a node run's path belongs to (`m[3]`, `l#2`, `sub/x`: m, l, sub)."""
    match = IDENTIFIER.match(path)
    return match.group() if match else path


class FlowRounds:
    """Rounds made into flows, and flow rounds run again."""

    def __init__(self, workflows: WorkflowService) -> None:
        self.workflows = workflows
        self.flows = workflows.flows
        self.repo = workflows.flows.repo

    async def from_round(self, owner: Owner, workflow_id: str, round_no: int, name: str) -> FlowView:
        """A new flow whose draft is the round's plan (as approved, or as last revised)."""
        row = await self.workflows.owned(owner, workflow_id)
        if round_no > row.current_round:
            raise _no_round(workflow_id, round_no)
        found = await self.repo.messages.round_messages(workflow_id, round_no, f"{workflow_id}:{round_no}:")
        plans = sorted((m for m, _ in found if "plan" in (m.meta or {})), key=stored_id)
        if not plans:
            raise BadRequestError(f"Round {round_no} has no plan to save (a flow's round, or one still planning).",
                                  code="round_has_no_plan")
        plan = plan_of(plans[-1])
        if not plan.tasks:
            raise BadRequestError(f"The plan of round {round_no} has no task (the answer needed none).",
                                  code="round_has_no_plan")
        request = await self.repo.workflows.round_input(workflow_id, round_no)
        prompt, file_ids = (request.prompt, list(request.file_ids)) if request else ("", [])
        return await self.flows.create(owner, plan_definition(plan, name, prompt, file_ids))

    async def rerun(self, owner: Owner, workflow_id: str, round_no: int | None, from_node: str | None,
                    inputs: dict[str, Any] | None) -> dict[str, Any]:
        """A new round of the same flow definition; what succeeded before (not `from_node` or after it) reused."""
        row = await self.workflows.owned(owner, workflow_id)
        if row.status in (WorkflowStatus.RUNNING, WorkflowStatus.WAITING):
            raise ConflictError(f"The workflow's round {row.current_round} is {row.status}; stop it first, then run "
                                "it again.", code="round_running",
                                extra={"status": str(row.status), "currentRound": row.current_round})
        round_no = round_no or row.current_round
        if round_no > row.current_round:
            raise _no_round(workflow_id, round_no)
        request = await self.repo.workflows.round_input(workflow_id, round_no)
        if request is None or not request.flow:
            raise BadRequestError(f"Round {round_no} did not run a flow; only a flow's round runs again.",
                                  code="not_a_flow_round")
        earlier = request.flow
        body = await self.repo.flows.definition(str(earlier.get("hash", "")))
        if body is None:
            raise BadRequestError("The flow's definition of that round is no longer stored.", code="flow_gone")
        definition = FlowDefinition.decode(body.encode())
        node_ids = {node.id for node in definition.nodes}
        if from_node is not None and from_node not in node_ids:
            raise BadRequestError(f"The flow has no node {from_node!r} (its nodes: {', '.join(sorted(node_ids))}).",
                                  code="unknown_node")
        given = dict(earlier.get("inputs") or {}) | dict(inputs or {})
        checked = await self.flows.inputs(owner, definition, given, [])
        runs = await self.repo.flows.node_runs(workflow_id, round_no)
        again = downstream(((e.source, e.target) for e in definition.edges), from_node) if from_node else set()
        reused = [r.path for r in runs if r.status == "succeeded" and top_of(r.path) not in again]
        failed = next((r.node_id for r in runs if r.status == "failed" and "/" not in r.path and "[" not in r.path
                       and "#" not in r.path), None)
        flow: dict[str, Any] = {key: earlier[key] for key in ("id", "version", "hash") if key in earlier}
        flow |= {"inputs": checked, "reuse": {"round": round_no, "nodes": reused},
                 "forkOf": {"round": round_no, "node": from_node or failed}}
        return await self.workflows.rerun(owner, workflow_id, request.prompt, list(request.file_ids), flow)
