"""Steering a running round (multitaskStrategy "steer"): the user's post is a user message of the round
(keyed `<workflow>:<round>:steer:<token>`); before the round starts another task, and once its tasks
have ended, it looks for such messages and the project manager revises the unfinished part of the plan
with them. Finished tasks keep their results and never run again; a steer is not a failure, so it does
not count against MAX_REPLANS. The revision is a `step` message that says what changed."""

from __future__ import annotations

from agents.model import Usage
from agents.round import Revision
from app.rounds.replanning import write_revision
from app.rounds.runtime import Runtime
from app.store.records import NewLog
from app.store.tables import MessageRow


def steer_prefix(workflow_id: str, round_no: int) -> str:
    return f"{workflow_id}:{round_no}:steer:"


async def pending(rt: Runtime, workflow_id: str, round_no: int, handled: set[int]) -> list[MessageRow]:
    """The user's steering messages of the round that no revision has taken up yet, oldest first."""
    rows = await rt.repo.messages.round_messages(workflow_id, round_no, steer_prefix(workflow_id, round_no))
    return [m for m, _ in rows if m.role == "user" and m.id not in handled]


async def handled_so_far(rt: Runtime, workflow_id: str, round_no: int) -> tuple[set[int], int]:
    """The steering messages the round's revisions took up, and how many revisions were steers (a resumed round)."""
    rows = await rt.repo.messages.round_messages(workflow_id, round_no, f"{workflow_id}:{round_no}:replan:")
    steers = [m.meta["revision"]["steer"] for m, _ in rows if m.meta.get("revision", {}).get("steer")]
    return {i for ids in steers for i in ids}, len(steers)


async def write(rt: Runtime, workflow_id: str, round_no: int, revision: Revision, usage: Usage | None,
                steers: list[MessageRow], number: int, seconds: float) -> None:
    """Journal the plan the Runner revised with the user's steering messages `steers` (`agents.round.Runner.steer`)."""
    await write_revision(rt, workflow_id, round_no, revision, key_part=f"s{number}",
                         heading="Plan revised at your request",
                         log=NewLog("", f"Work plan revised at the user's request: {revision.why}",
                                    agent_name="project_manager"),
                         meta={"number": number, "steer": [m.id for m in steers]}, offline=rt.model.offline,
                         usage=usage, seconds=seconds)
