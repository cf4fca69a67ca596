"""AG-UI: `POST /api/ag-ui` takes a `RunAgentInput` and answers the run as AG-UI events.

A thread is one workflow: its id is derived from the caller and the client's `threadId`, so the
first run on a thread creates the workflow and every later run posts its next round, on any
replica, with nothing stored beside the workflow. The last user message is the round's prompt;
its document and media parts (inline base64 `data` sources, the name in `metadata.filename`) are
uploaded, and `file` sources name files already uploaded (`POST /api/files`) by id.

Map: the round -> RUN_STARTED ... RUN_FINISHED (cancelled outcome when stopped) or RUN_ERROR
(failed); the project manager's answer, each agent's result and the final message ->
TEXT_MESSAGE_START, CONTENT as the text is written (live text), END when its message is written;
a draft discarded while it was written (its call failed or was tried again, the round stopped, its
replica died) -> TEXT_MESSAGE_END and a CUSTOM `foreman.discard` event naming it (AG-UI cannot
take text back: a client that honours it removes the message; the rewritten one follows); each task -> STEP_STARTED/STEP_FINISHED named by its agent;
the plan, progress and delivered documents -> STATE_SNAPSHOT, then STATE_DELTA (JSON Patch);
a round that waits for the user -> RUN_FINISHED with an `interrupt` outcome, answered by the next
run's `resume` (app.protocols.agui_interrupts).
Every event is one of the `ag-ui-protocol` package's models, written by its encoder.
"""

from __future__ import annotations

import base64
import binascii
import uuid
from collections.abc import AsyncGenerator
from contextlib import aclosing
from typing import Any

import pydantic
from ag_ui._generated.models import (  # STATE_DELTA's; not in ag_ui.core
    AddOperation,
    JsonPatchOperation,
    ReplaceOperation,
)
from ag_ui.core import (
    BaseEvent,
    CustomEvent,
    Interrupt,
    RunAgentInput,
    RunErrorEvent,
    RunFinishedEvent,
    RunStartedEvent,
    StateDeltaEvent,
    StateSnapshotEvent,
    StepFinishedEvent,
    StepStartedEvent,
    TextMessageContentEvent,
    TextMessageEndEvent,
    TextMessageStartEvent,
)
from ag_ui.core.events import RunFinishedCancelledOutcome, RunFinishedInterruptOutcome, TokenUsage
from ag_ui.encoder import EventEncoder
from litestar import Request
from litestar.response import Stream

from app.contract.schemas import ReviewRequest
from app.errors import ApplicationError, BadRequestError, NotFoundError, PayloadTooLargeError
from app.protocols.agui_interrupts import (
    NodeStates,
    answerable,
    decisions_of,
    flow_of,
    interrupt_of,
    outstanding,
    review_of,
    start_flow,
)
from app.protocols.flow_tools import one_wait, question
from app.protocols.mounts import max_body
from app.protocols.rounds import (
    CaughtUp,
    Closed,
    Ended,
    Piece,
    Plan,
    Progress,
    Round,
    Rounds,
    StepFinished,
    StepStarted,
    Text,
    Waiting,
    doc_name,
)
from app.rounds.live import one_line
from app.store.records import Owner

THREADS = uuid.UUID("6f1c2a57-5d0e-4c36-9a55-3b8d3f0e2a61")  # the namespace of thread-derived workflow ids
MEDIA = ("document", "image", "audio", "video")
DISCARD = "foreman.discard"  # the CUSTOM event after a discarded draft's TEXT_MESSAGE_END


def workflow_of(owner: Owner, thread_id: str) -> str:
    """The workflow id of a caller's thread: the same on every replica, different for every caller."""
    return str(uuid.uuid5(THREADS, f"{owner.mandate_id}:{owner.user_id}:{thread_id}"))


def parse_input(raw: bytes) -> RunAgentInput:
    """The request body as the package's RunAgentInput, or BadRequestError saying what does not fit."""
    try:
        return RunAgentInput.model_validate_json(raw)
    except pydantic.ValidationError as exc:
        problems = "; ".join(f"{'.'.join(str(p) for p in e['loc'])}: {e['msg']}" for e in exc.errors()[:5])
        raise BadRequestError(f"The body is not an AG-UI RunAgentInput: {problems}.", code="invalid_body") from None


def prompt_and_files(run_input: RunAgentInput) -> tuple[str, list[tuple[str, bytes]], list[int]]:
    """The last user message's text, its inline files to upload, and the file ids it names."""
    users = [m for m in run_input.messages if m.role == "user"]
    if not users:
        raise BadRequestError("messages has no user message: the last one is the request to answer.",
                              code="no_user_message")
    content = users[-1].content
    if isinstance(content, str):
        return content.strip(), [], []
    texts, uploads, ids = [], [], []
    for n, part in enumerate(content):
        if part.type == "text":
            texts.append(part.text)
        elif part.type in MEDIA:
            source = part.source
            metadata = part.metadata if isinstance(part.metadata, dict) else {}
            if source.type == "data":
                try:
                    data = base64.b64decode(source.value, validate=True)
                except (binascii.Error, ValueError):
                    raise BadRequestError(f"Content part {n}: the data is not valid base64.",
                                          code="bad_base64") from None
                name = str(metadata.get("filename") or f"{part.type}-{n + 1}.{source.mime_type.rpartition('/')[2]}")
                uploads.append((name, data))
            elif source.type == "file" and source.value.isascii() and source.value.isdigit():
                ids.append(int(source.value))
            else:
                raise BadRequestError(f"Content part {n}: send the bytes inline (a 'data' source) or the id of a "
                                      "file uploaded with POST /api/files (a 'file' source); Foreman does not fetch "
                                      "URLs.", code="unsupported_source")
    return "\n".join(texts).strip(), uploads, ids


async def ag_ui(request: Request[Any, Any, Any]) -> Stream:
    """Run a round of the thread's workflow and answer its AG-UI event stream."""
    state = request.app.state
    owner = state.auth.owner(request)
    settings = state.settings
    limit = max_body(settings)
    if int(request.headers.get("content-length") or 0) > limit:
        raise PayloadTooLargeError(f"The request is larger than {limit} bytes.", code="body_too_large")
    run_input = parse_input(await request.body())
    rounds: Rounds = state.ag_ui
    workflow_id = workflow_of(owner, run_input.thread_id)
    base = str(request.base_url).rstrip("/")
    encoder = EventEncoder(accept=request.headers.get("accept", ""))
    headers = {"Cache-Control": "no-cache", "X-Accel-Buffering": "no", "X-Foreman-Workflow": workflow_id}
    flow = flow_of(run_input.forwarded_props)
    nodes = flow is not None
    later: list[ReviewRequest] = []  # a resume's decisions after its first, each taken when the round waits again
    if run_input.resume:  # the answers to the interrupts the thread's last run ended with, once
        try:
            first, *later = decisions_of(run_input.resume)
            row, wait = await outstanding(rounds, owner, workflow_id, [first, *later])
            run = await rounds.decide(owner, workflow_id, first, base, row=row)
        except ApplicationError as exc:  # decided nothing: the run ends at once with the reason
            return Stream(refused(run_input, exc, encoder), media_type=encoder.get_content_type(), headers=headers)
        nodes = wait.kind == "node"  # a flow's human node: the run's state has the flow's nodes
    elif flow is not None:
        run = await start_flow(rounds, owner, workflow_id, flow, base)
    else:
        prompt, uploads, file_ids = prompt_and_files(run_input)
        file_ids += await rounds.upload(owner, uploads)
        review = review_of(run_input.forwarded_props)
        try:  # the thread's next round, or its first
            run = await rounds.start(owner, workflow_id, prompt, file_ids, base, review=review)
        except NotFoundError as exc:
            if exc.code != "workflow_not_found":
                raise
            run = await rounds.start(owner, None, prompt, file_ids, base, new_id=workflow_id, review=review)
    states = NodeStates(rounds, run) if nodes else None
    return Stream(events(rounds, run, run_input, encoder, states, later), media_type=encoder.get_content_type(),
                  headers=headers)


async def refused(run_input: RunAgentInput, exc: ApplicationError, encoder: EventEncoder) -> AsyncGenerator[bytes, None]:
    """A run whose resume decided nothing: RUN_STARTED, then RUN_ERROR with the reason."""
    for event in [RunStartedEvent(thread_id=run_input.thread_id, run_id=run_input.run_id),
                  RunErrorEvent(message=exc.detail, code=exc.code)]:
        yield one_line(encoder.encode(event).encode())


async def events(rounds: Rounds, run: Round, run_input: RunAgentInput, encoder: EventEncoder,
                 states: NodeStates | None = None, later: list[ReviewRequest] | None = None
                 ) -> AsyncGenerator[bytes, None]:
    """The round as AG-UI events, encoded (each data line one line for every reader: see `one_line`);
    with `states`, a flow's: its node states in the state's `nodes`, read once per read of the round that
    moved it on (not once per log), each change a JSON Patch operation. `later`: a resume's decisions after
    its first, each taken when the round waits again with its interrupt open (the engine takes one human
    node's decision at a time); one no longer open is dropped, and the run ends with what waits then."""
    thread, run_id = run_input.thread_id, run_input.run_id
    later = list(later or [])

    def encoded(event: BaseEvent) -> bytes:
        return one_line(encoder.encode(event).encode())

    for event in [RunStartedEvent(thread_id=thread, run_id=run_id),
                  StateSnapshotEvent(snapshot={"workflowId": run.workflow_id, "round": run.round,
                                               "status": "running", "progress": 0, "plan": [], "documents": [],
                                               # a resumed flow's nodes so far; a new run's follow as they settle
                                               "nodes": await states.snapshot() if states and run_input.resume else []})]:
        yield encoded(event)
    ended, stale, progress = False, False, 0  # stale: a log came since the node states were last read
    sse = encoder.get_content_type().startswith("text/event-stream")
    try:
        while True:  # one follow per decision taken
            parts = rounds.follow(run, heartbeats=sse, live=True, waits=True, caught_up=states is not None)
            async with aclosing(parts):
                async for part in parts:
                    if part is None:  # a quiet spell: a comment line keeps proxies from closing the stream
                        yield b": keepalive\n\n"
                        continue
                    stale = stale or isinstance(part, Progress)
                    if isinstance(part, Waiting) and later:
                        while later and later[0].message_id not in answerable(part.waiting_for):
                            later.pop(0)  # no longer open (the decisions before it settled it)
                        if later:
                            run = await rounds.decide(run.owner, run.workflow_id, later.pop(0), run.base_url)
                            break  # follow on from the decision
                    if states is not None and (isinstance(part, Waiting) or stale and isinstance(part, CaughtUp | Ended)):
                        stale = False
                        if changed := await states.changes(part.waiting_for if isinstance(part, Waiting) else None):
                            yield encoded(StateDeltaEvent(delta=[
                                AddOperation(path="/nodes/-", value=value) if index is None
                                else ReplaceOperation(path=f"/nodes/{index}", value=value) for index, value in changed]))
                    if isinstance(part, CaughtUp):
                        continue
                    interrupts = ([interrupt_of(w, run, await question(rounds, run.owner, run.workflow_id, w)
                                                if w.kind == "node" else None) for w in one_wait(part.waiting_for)]
                                  if isinstance(part, Waiting) else [])
                    if isinstance(part, Progress):
                        if part.log.progress == progress:
                            continue  # a log that moves nothing: no state to change
                        progress = part.log.progress
                    for event in translate(part, run, thread, run_id, interrupts):
                        yield encoded(event)
                    if isinstance(part, Ended | Waiting):
                        ended = True
                        return
                else:
                    ended = True
                    yield encoded(RunErrorEvent(message="The workflow was deleted during the run.", code="workflow_deleted"))
                    return
    except ApplicationError as exc:
        ended = True
        yield encoded(RunErrorEvent(message=exc.detail, code=exc.code))
    finally:
        if not ended:  # the client left (closed the connection, or aborted the run): the round stops
            rounds.left(run, "AG-UI")


def translate(part: Any, run: Round, thread: str, run_id: str, interrupts: list[Interrupt] | None = None
              ) -> list[BaseEvent]:
    """The AG-UI events of one part of a round."""
    if isinstance(part, Text):
        message_id = f"{run.workflow_id}:{part.message.metadata.get('draftId') or part.message.id}"
        return [TextMessageStartEvent(message_id=message_id, role="assistant"),
                TextMessageContentEvent(message_id=message_id, delta=part.text),
                TextMessageEndEvent(message_id=message_id)]
    if isinstance(part, Piece):
        message_id = f"{run.workflow_id}:{part.draft_id}"
        return [*([TextMessageStartEvent(message_id=message_id, role="assistant")] if part.first else []),
                TextMessageContentEvent(message_id=message_id, delta=part.text)]
    if isinstance(part, Closed):
        message_id = f"{run.workflow_id}:{part.draft_id}"
        if part.message is None:
            return [TextMessageEndEvent(message_id=message_id),
                    CustomEvent(name=DISCARD, value={"messageId": message_id})]
        return [*([TextMessageContentEvent(message_id=message_id, delta=part.text)] if part.text else []),
                TextMessageEndEvent(message_id=message_id)]
    if isinstance(part, Plan):
        plan = [{"id": task_id, "agent": agent, "status": "planned"} for task_id, agent in part.tasks]
        return [StateDeltaEvent(delta=[ReplaceOperation(path="/plan", value=plan)])]
    if isinstance(part, StepStarted):
        return [StepStartedEvent(step_name=step_name(part.agent, part.task_id))]
    if isinstance(part, StepFinished):
        docs: list[JsonPatchOperation] = [
            AddOperation(path="/documents/-", value={"fileId": d.file_id, "name": doc_name(d),
                                                     "url": f"{run.base_url}/api/files/{d.file_id}/content"})
            for d in part.documents]
        return [StepFinishedEvent(step_name=step_name(part.agent, part.task_id)),
                *([StateDeltaEvent(delta=docs)] if docs else [])]
    if isinstance(part, Progress):
        return [StateDeltaEvent(delta=[ReplaceOperation(path="/progress", value=part.log.progress)])]
    if isinstance(part, Waiting):
        return [StateDeltaEvent(delta=[ReplaceOperation(path="/status", value="waiting")]),
                RunFinishedEvent(thread_id=thread, run_id=run_id, outcome=RunFinishedInterruptOutcome(
                    interrupts=interrupts or [interrupt_of(part.waiting_for, run)]))]
    if isinstance(part, Ended):
        status = StateDeltaEvent(delta=[ReplaceOperation(path="/status", value=part.status)])
        if part.status == "failed":
            return [status, RunErrorEvent(message=part.error or "The round failed; see the workflow's log.",
                                          code="round_failed")]
        outcome = RunFinishedCancelledOutcome() if part.status == "stopped" else None
        return [status, RunFinishedEvent(thread_id=thread, run_id=run_id, outcome=outcome,
                                         result={"workflowId": run.workflow_id, "round": run.round},
                                         usage=[TokenUsage(provider="foreman", total_tokens=part.tokens)])]
    return []


def step_name(agent: str, task_id: str) -> str:
    return f"{agent} ({task_id})"
