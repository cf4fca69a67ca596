"""What the API does with workflows: start, stop, delete, read, poll. No HTTP here: the routes parse."""

from __future__ import annotations

import asyncio
import contextlib
import functools
import hashlib
import logging
import time
import uuid
import weakref
from typing import Any

import msgspec

from app.contract.schemas import (
    StartAnswer,
    StartRequest,
    WorkflowStatusView,
)
from app.contract.views import status_view, waiting_view
from app.errors import BadRequestError, ConflictError, NotReadyError, UnprocessableError
from app.fsm import Event, TransitionError, WorkflowStatus, next_status
from app.rounds.journal import transition
from app.rounds.steering import steer_prefix
from app.rounds.supervisor import Engine
from app.services.conversation import Conversation, may_exist, no_workflow
from app.services.flows import FlowService
from app.services.review import Reviews, chat_decision
from app.store.cursors import Cursor
from app.store.notify import announce_steer
from app.store.records import NewLog, NewMessage, Owner
from app.store.repository.files import FilesGoneError
from app.store.repository.idempotency import KeyReusedError
from app.store.repository.workflows import WorkflowExistsError
from app.store.tables import WorkflowRow

log = logging.getLogger("foreman.workflows")

CLAIM_WAIT_SECONDS = 30.0
# Interrupts posted at once each stop the round the one before started: so many rounds at most are
# interrupted for one post before it answers 409 (each retry means another post started a round).
MAX_INTERRUPTS = 8


class WorkflowService(Conversation):
    """Workflows as their owner sees them: started, stopped, deleted, and read (`Conversation`)."""

    def __init__(self, engine: Engine) -> None:
        super().__init__(engine.rt)
        self.engine = engine
        self._key_locks: weakref.WeakValueDictionary[str, asyncio.Lock] = weakref.WeakValueDictionary()
        self.reviews = Reviews(self)
        self.flows = FlowService(self.rt)
        self._queued: set[str] = set()  # workflows with a post queued in this process
        self._background: set[asyncio.Task[bool]] = set()
        self.rt.journal.on_end = self._round_ended
        engine.periodic.append(self.start_due)

    async def start(self, owner: Owner, workflow_id: str | None, body: StartRequest,
                    idempotency_key: str | None, new_id: str | None = None) -> dict[str, Any]:
        """Start a workflow or its next round; the round runs in the background. A new workflow gets
        `new_id` when given (a protocol adapter's id derived from the caller and its thread).

        An Idempotency-Key is bound to the caller (in the key), the target workflow and the body
        (in the fingerprint): a retry gets the first answer, another request with it a 422.
        """
        if self.engine.drain.draining:
            raise NotReadyError("This server is shutting down and starts no new rounds; send the request again "
                                "(a load balancer sends it to another replica).", code="shutting_down")
        key = f"{owner.mandate_id}:{owner.user_id}:{idempotency_key}" if idempotency_key else None
        if key is None:
            return await self._start(owner, workflow_id, body, new_id)
        fingerprint = request_fingerprint(workflow_id, body)
        # Retries with one key wait for each other, so a double submit starts one round, not two:
        # in this process on a lock, across processes on the claim the database arbitrates.
        lock = self._key_locks.setdefault(key, asyncio.Lock())
        async with lock:
            deadline = time.monotonic() + CLAIM_WAIT_SECONDS
            while True:
                try:
                    claimed, first = await self.repo.idempotency.claim(key, fingerprint)
                except KeyReusedError:
                    raise UnprocessableError(
                        "This Idempotency-Key was already used for a different request (another workflow, "
                        "prompt, files or passwords). Use a new key for a new request.",
                        code="idempotency_key_reused") from None
                if claimed:
                    break
                if first is not None:
                    return first
                if time.monotonic() > deadline:
                    raise ConflictError("A request with this Idempotency-Key is still being processed; retry it "
                                        "in a moment to get its answer.", code="idempotency_in_progress")
                await asyncio.sleep(0.05)  # another process is starting it; its answer comes shortly
            try:
                answer = await self._start(owner, workflow_id, body)
            except BaseException:
                await self.repo.idempotency.answer(key, None)  # a retry may try again
                raise
            await self.repo.idempotency.answer(key, answer)
            return answer

    async def rerun(self, owner: Owner, workflow_id: str, prompt: str, file_ids: list[int],
                    flow: dict[str, Any]) -> dict[str, Any]:
        """The next round of the workflow, running `flow` as given (a rerun's: its version, checked inputs and
        the node runs it reuses; `app.services.flow_rounds`)."""
        return await self._start(owner, workflow_id, StartRequest(prompt=prompt, list_file_id=file_ids), flow=flow)

    async def _start(self, owner: Owner, workflow_id: str | None, body: StartRequest,
                     new_id: str | None = None, interrupts: int = 0,
                     flow: dict[str, Any] | None = None) -> dict[str, Any]:
        prompt = body.prompt.strip()
        if "\x00" in prompt or any("\x00" in p for p in body.passwords.values()):
            raise BadRequestError("The prompt and passwords must not contain NUL characters (\\u0000).",
                                  code="nul_character")
        if body.flow is not None and flow is None:  # a saved flow: its inputs are checked now, its name is the request's text
            flow, flow_name = await self.flows.run_spec(owner, body.flow, list(dict.fromkeys(body.list_file_id)))
            prompt = prompt or f"Run flow {flow_name}"
        if not prompt and not body.list_file_id:
            raise BadRequestError("Write a prompt or attach at least one file.", code="empty_request")
        limit = self.rt.settings.max_prompt_chars
        if len(prompt) > limit:
            raise BadRequestError(f"The prompt has {len(prompt):,} characters; at most {limit:,} are accepted "
                                  "(MAX_PROMPT_CHARS). Attach longer text as a file instead.",
                                  code="prompt_too_long")
        file_ids = list(dict.fromkeys(body.list_file_id))
        files = await self.repo.files.files(owner, file_ids)
        missing = [fid for fid in file_ids if fid not in files]
        if missing:
            raise _unknown_files(missing)
        unknown_pw = [k for k in body.passwords if not (k.isascii() and k.isdigit()) or int(k) not in files]
        if unknown_pw:
            raise BadRequestError(f"Passwords were given for files that are not in listFileId: {unknown_pw}.",
                                  code="unknown_password_files")
        new = workflow_id is None
        if workflow_id is None:
            workflow_id = new_id or str(uuid.uuid4())
            name = (prompt or files[file_ids[0]].name)[:80]
            message = "Workflow initialized"
        else:
            current = await self.owned(owner, workflow_id)
        default = body.review_default or ("" if new else current.review) or "none"
        review = "" if (body.review or default) == "none" else (body.review or default)
        if not new:
            if current.status == WorkflowStatus.WAITING:
                return await self._answer_waiting(owner, current, prompt, file_ids)
            if current.status == WorkflowStatus.RUNNING:
                strategy = body.multitask_strategy
                if strategy == "enqueue":
                    queued = await self._enqueue(owner, current, prompt, file_ids, dict(body.passwords), review)
                    if queued is not None:
                        return queued
                elif strategy == "interrupt":
                    await self._interrupt(owner, workflow_id)
                elif strategy == "steer":
                    steered = await self._steer(current, prompt, file_ids)
                    if steered is not None:
                        return steered
                else:
                    raise _still_running(current.current_round)
            name, message = current.name, f"Resuming workflow, round {current.current_round + 1}"
        try:
            row = await self.repo.workflows.start_round(
                owner, workflow_id, name, new, prompt, file_ids, body.passwords,
                NewLog("", message, agent_name="system", progress=0, status="running"),
                review=review, review_default=body.review_default, flow=flow,
            )
        except TransitionError as exc:  # a concurrent start won the compare-and-set
            if exc.status is WorkflowStatus.RUNNING and body.multitask_strategy == "interrupt" \
                    and interrupts < MAX_INTERRUPTS:  # two interrupts at once: the later interrupts the earlier's
                return await self._start(owner, workflow_id, body, interrupts=interrupts + 1, flow=flow)
            if exc.status is WorkflowStatus.RUNNING:  # say which round won, as the non-racing 409 does
                latest = await self.repo.workflows.workflow(owner, workflow_id)
                raise _still_running(latest.current_round if latest else None) from None
            raise
        except WorkflowExistsError:  # a protocol's thread id, started by a concurrent first run: its next
            return await self._start(owner, workflow_id, body, flow=flow)  # round, or the 409 of one still running
        except FilesGoneError as exc:  # deleted with their last workflow since they were read above
            raise _unknown_files(exc.ids) from None
        except LookupError:
            raise no_workflow(workflow_id) from None
        transition(row.id, row.current_round, None if new else "terminal", row.status, Event.START.value)
        self.rt.cursors.put(row.id, Cursor(owner.mandate_id, owner.user_id, row.last_message_id, row.last_log_id))
        self.rt.rounds.started(row.id, row.current_round, prompt, file_ids, dict(body.passwords), review, flow)
        await self.engine.launch(row.id, row.current_round)
        # "running": where every START goes (app.fsm); the dict is what an Idempotency-Key's retry gets back.
        answer: dict[str, Any] = msgspec.to_builtins(StartAnswer(id=row.id, status="running",
                                                                 current_round=row.current_round))
        return answer

    async def _interrupt(self, owner: Owner, workflow_id: str) -> None:
        """Stop the running round as a stop would (the new round knows what it did); a round that ended
        meanwhile (another interrupt stopped it, or it completed) leaves nothing to interrupt."""
        with contextlib.suppress(ConflictError):
            await self.stop(owner, workflow_id)

    async def _enqueue(self, owner: Owner, current: WorkflowRow, prompt: str, file_ids: list[int],
                       passwords: dict[str, str], review: str) -> dict[str, Any] | None:
        """Queue the post behind the running round (None: that round just ended; start normally)."""
        def log(round_no: int, position: int) -> NewLog:
            return NewLog(f"{current.id}:{round_no}:queued:{uuid.uuid4().hex}",
                          f"A message was queued ({position} waiting): it starts the next round when round "
                          f"{round_no} ends", agent_name="system")

        try:
            queued = await self.repo.queue.enqueue(owner, current.id, prompt, file_ids, passwords, review, log)
        except LookupError:
            raise no_workflow(current.id) from None
        if queued is None:
            return None
        row, _ = queued
        self._queued.add(row.id)
        self.rt.journal.written(row.id, row.last_message_id, row.last_log_id)
        return {"id": row.id, "status": "running", "currentRound": row.current_round, "queued": True}

    def _round_ended(self, workflow_id: str) -> None:
        """A round ended (completed, failed, rejected, expired): a post queued here starts the next one."""
        if workflow_id in self._queued:
            task = asyncio.ensure_future(self.start_queued(workflow_id))
            self._background.add(task)
            task.add_done_callback(self._background.discard)

    async def start_queued(self, workflow_id: str) -> bool:
        """Start the workflow's next round from its oldest queued post, if its round has ended."""
        started = await self.repo.queue.start_next(workflow_id, NewLog(
            "", "Resuming workflow with the message queued while the last round ran", agent_name="system",
            progress=0, status="running"))
        if started is None:
            self._queued.discard(workflow_id)
            return False
        row, post = started
        transition(row.id, row.current_round, "terminal", row.status, Event.START.value)
        self.rt.cursors.put(row.id, Cursor(row.mandate_id, row.user_id, row.last_message_id, row.last_log_id))
        self.rt.rounds.started(row.id, row.current_round, post.prompt, post.file_ids, dict(post.passwords),
                               post.review)
        await self.engine.launch(row.id, row.current_round)
        return True

    async def start_due(self) -> None:
        """Queued posts whose round ended elsewhere or before a restart: their rounds start now."""
        for workflow_id in await self.repo.queue.due():
            await self.start_queued(workflow_id)

    async def _steer(self, current: WorkflowRow, prompt: str, file_ids: list[int]) -> dict[str, Any] | None:
        """The post joins the running round as a user message of it; the round revises the unfinished part
        of its plan with it (app.rounds.steering). None: that round just ended; start normally."""
        if file_ids or not prompt:
            raise BadRequestError("A steering message is a prompt without files; attach files in a new round "
                                  "(multitaskStrategy \"enqueue\").", code="steer_needs_prompt")
        key = f"{steer_prefix(current.id, current.current_round)}{uuid.uuid4().hex}"
        written = await self.rt.journal.append(
            current.id, current.current_round,
            messages=[NewMessage(key, "user", "step", prompt, meta={"steer": True})],
            logs=[NewLog(f"{key}:log", "A message joined the running round: the project manager revises the "
                                       "unfinished part of the plan with it", agent_name="system")],
            # announced in the same transaction: the replica running the round looks once it hears of it
            also=functools.partial(announce_steer, is_sqlite=self.rt.db.is_sqlite, workflow_id=current.id))
        if written is None:
            return None
        self.rt.journal.heard_steer(current.id)
        return {"id": current.id, "status": "running", "currentRound": current.current_round, "queued": False}

    async def _answer_waiting(self, owner: Owner, current: WorkflowRow, prompt: str,
                              file_ids: list[int]) -> dict[str, Any]:
        """A chat post while the round waits for the user: its prompt is the decision (see app.services.review)."""
        if file_ids or not prompt:
            raise ConflictError("The workflow's round waits for your decision on its plan: answer with a prompt "
                                "(no files), or POST /api/workflows/{id}/review.", code="round_waiting",
                                extra={"status": current.status, "currentRound": current.current_round,
                                       "waitingFor": msgspec.to_builtins(waiting_view(current))})
        view = await self.reviews.decide(owner, current.id, chat_decision(current, prompt))
        return {"id": view.id, "status": view.status, "currentRound": view.current_round, "queued": False}

    async def stop(self, owner: Owner, workflow_id: str) -> WorkflowStatusView:
        """Stop the running round at once; stopping a stopped workflow again is fine.

        One write answers: it finds the owner's workflow, stops its round if it runs and reads it back.
        """
        stopped = await self.rt.journal.stop(owner, workflow_id) if may_exist(workflow_id) else None
        if stopped is None:
            raise no_workflow(workflow_id)
        row = stopped.workflow
        if stopped.written is None:  # it was not running: a second stop is fine, a finished round a 409
            if row.status != WorkflowStatus.STOPPED:
                _may_stop(row)
            return status_view(row)
        if stopped.written.before is WorkflowStatus.RUNNING:  # a waiting round runs nothing to cancel
            self.engine.stop(workflow_id, row.current_round, row.segment)
        log.info("Workflow %s round %s stopped by its user.", workflow_id, row.current_round)
        return status_view(row)

    async def delete(self, owner: Owner, workflow_id: str) -> None:
        """Stop it if running, then delete it with its messages, logs and files only it used."""
        row = await self.owned(owner, workflow_id)
        if row.status == WorkflowStatus.RUNNING:
            await self.rt.journal.stop(owner, workflow_id)
            await self.engine.stop(workflow_id, row.current_round, row.segment)  # its task ends before its rows go
        files = await self.repo.workflows.delete_workflow(owner, workflow_id)
        if files is None:
            raise no_workflow(workflow_id)
        self.rt.cursors.drop(workflow_id)
        transition(workflow_id, row.current_round, row.status, "deleted", Event.DELETE.value)
        for sha in sorted({file.sha256 for file in files}):
            await self.rt.storage.release(sha)  # unless an upload or a round stores the same bytes meanwhile



def request_fingerprint(workflow_id: str | None, body: StartRequest) -> str:
    """What an Idempotency-Key is bound to besides its caller: the target workflow and the body."""
    canonical = msgspec.json.encode({"workflow": workflow_id, "body": msgspec.to_builtins(body)}, order="sorted")
    return hashlib.sha256(canonical).hexdigest()


def _unknown_files(ids: list[int]) -> BadRequestError:
    return BadRequestError(f"Unknown file ids: {ids}. Upload the files first with POST /api/files.",
                           code="unknown_files")


def _may_stop(row: Any) -> None:
    """TransitionError (409) unless the workflow can be stopped; its body says the status and round."""
    try:
        next_status(WorkflowStatus(row.status), Event.STOP)
    except TransitionError as exc:
        exc.extra = {"status": row.status, "currentRound": row.current_round}
        raise


def _still_running(current_round: int | None) -> ConflictError:
    return ConflictError(
        "The workflow's current round is still running. Wait for it to finish or stop it first.",
        code="round_running", extra={"status": "running", "currentRound": current_round},
    )

