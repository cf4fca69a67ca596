"""A flow run is a round: no planning call and no final-review call, the flow engine (the round's
`Runner.run_flow`, the engine a plan's tasks run on too) runs the definition the round was started
with, and this module is its journal: each node run's start is a log, its outcome one row in
`node_runs` (the checkpoint: a resumed round reads the settled runs back and runs only the rest), a
human node's wait the durable wait every round uses, and the `last` message renders the flow's outputs.

A node that computes at once (`start`, `end`, `template`, `condition`, a map or loop of them, a skip) needs
no checkpoint of its own: its run and logs go with the round's next write, as do the start logs of the
others unless that write is over HOLD_SECONDS away (measured on `bench/flow_overhead.py`'s 10-node graph:
18 write transactions a run -> 8, the run's CPU 22 -> 15 ms on a loaded 2-core machine).

The round's user message names the flow (`metadata.flow`: id, version, hash, inputs); the definition
is read by its hash, so a run keeps its version whatever is published while it runs.
"""

from __future__ import annotations

import asyncio
import json
import logging
import os
from collections.abc import Callable, Iterable, Mapping
from dataclasses import replace
from typing import Any

import msgspec
from sqlalchemy.engine import Connection

from agents.flows import FlowDefinition, FlowResult, Node, NodeRun
from agents.round import RoundInput
from app.clock import now
from app.fsm import Event
from app.rounds.flow_effects import RoundEffects, node_key
from app.rounds.handle import current
from app.rounds.item_queue import spreader
from app.rounds.runtime import Runtime
from app.rounds.steps import step_keys
from app.store.records import NewDocument, NewLog, NewMessage, Wait

# Nodes that compute what they give from the run's own values at once (no effect outside the round).
INSTANT = frozenset({"start", "end", "template", "condition"})
# How long a node's start log may wait for a write to go with (its outcome's, the next node's) before it is
# written on its own: a node that settles sooner costs one transaction, not two, and a person reading the
# logs of a longer one sees it start this much later.
HOLD_SECONDS = 0.1
failures = logging.getLogger("foreman.failures")


def computes(node: Node) -> bool:
    """Whether the node computes what it gives at once: an instant node, or a map or loop of one."""
    body = node.config.get("body") if node.type in ("map", "loop") else None
    return node.type in INSTANT or isinstance(body, dict) and body.get("type") in INSTANT


def progress(done: int, total: int) -> int:
    """Logs carry progress by node count, from 10 (started) to 90 (every node settled)."""
    return 10 + 80 * done // max(total, 1)


class RoundJournal:
    """The flow engine's journal (`agents.flows.runs.FlowJournal`) for one round."""

    def __init__(self, rt: Runtime, workflow_id: str, round_no: int, decision: Mapping[str, Any] | None,
                 reuse: Mapping[str, Any] | None = None) -> None:
        self.rt, self.workflow_id, self.round_no = rt, workflow_id, round_no
        self.reuse = dict(reuse or {})  # a rerun's: {round, nodes}, the earlier round's runs it takes as they were
        self.decision_taken = dict(decision or {})
        self.started_at: dict[str, Any] = {}
        self.pending: dict[str, NewMessage] = {}  # a node's message, written with its outcome
        # Held for the next write of the round (`carried`), in the order they happened: start logs, and the
        # runs of instant nodes (their logs with them), which a round stopped before that write computes again
        # at no cost. A start log held longer than HOLD_SECONDS is written on its own (`_hold`).
        self.logs: list[NewLog] = []
        self.later: list[dict[str, Any]] = []
        self._timer: asyncio.TimerHandle | None = None
        self.computed: set[str] = set()  # the paths of top-level nodes that compute at once (`computes`)
        self._flushing: set[asyncio.Task[None]] = set()
        # The last `seq` given to the round's node runs, read with them (`recorded`) and counted on from there:
        # a node run's write need not read it (one statement fewer each). Only this execution writes them.
        self.seq: int | None = None
        self.secrets: dict[str, str] = {}
        self.item: str | None = None  # a map item run here for another replica: what it reads (`recorded`)
        # A round that has just written its first log (not a replay) and reuses no earlier round's runs has none.
        self.fresh = False

    async def recorded(self) -> dict[str, NodeRun]:
        """The round's settled node runs; a rerun's first call copies in the earlier round's runs it reuses
        (each saying `reused_from`, once: a resumed rerun finds them written)."""
        if self.fresh:  # nothing can have settled yet: nothing to read
            self.fresh, self.seq = False, 0
            return {}
        store = self.rt.repo.flows
        runs = await store.node_runs(self.workflow_id, self.round_no, self.item)
        wanted = set(self.reuse.get("nodes") or []) - {r.path for r in runs}
        if wanted:
            earlier = int(self.reuse["round"])
            copies = [{"path": r.path, "node_id": r.node_id, "type": r.type, "status": r.status,
                       "attempts": r.attempts, "started_at": r.started_at, "finished_at": r.finished_at,
                       "record": dict(r.record, reused_from=r.record.get("reused_from") or earlier)}
                      for r in await store.node_runs(self.workflow_id, earlier)
                      if r.path in wanted and r.status == "succeeded"]
            await store.settle(self.workflow_id, self.round_no, copies)
            runs = await store.node_runs(self.workflow_id, self.round_no)
        # A sub-flow reads them again while writes of its siblings may still be on their way: never back. A map
        # item run here for another replica counts none: its siblings write too (each write reads the last seq).
        if self.item is None:
            self.seq = max([self.seq or 0, *(r.seq for r in runs)])
        return {r.path: msgspec.convert(r.record, NodeRun) for r in runs if r.status != "waiting"}

    def _after(self, rows: list[dict[str, Any]]) -> int | None:
        """The last `seq` before `rows`, which take the next ones (None: not counted, the write reads it)."""
        if self.seq is None:
            return None
        after, self.seq = self.seq, self.seq + len(rows)
        return after

    async def started(self, node: Node, path: str, done: int, total: int) -> None:
        self.started_at[path] = now()
        what = node.name or node.id
        log = NewLog(node_key(self.workflow_id, self.round_no, path)("start"), f"Node {what} ({node.type}) started",
                     agent_name=node.type, progress=progress(done, total))
        self.logs.append(log)
        if computes(node):
            self.computed.add(path)
        if node.type == "agent":  # it writes its own message and logs while it runs: its start goes first
            await self.flush()
        elif node.type not in INSTANT:  # it settles at once: its start is logged in its outcome's write
            self._hold()

    async def settled(self, run: NodeRun, done: int, total: int) -> None:
        """The node run's row, its log and the message its effect left (`RoundEffects.pending`) in one write,
        with what was held for it; an instant node's is held for the next write instead."""
        row = {"path": run.path, "node_id": run.node_id, "type": run.type, "status": run.status,
               "attempts": run.attempts, "started_at": self.started_at.pop(run.path, None), "finished_at": now(),
               "record": redacted(msgspec.to_builtins(run), self.secrets.values())}
        inner = any(mark in run.path for mark in "[#/")  # a map's item, a loop's iteration, a sub-flow's node
        self.later.append(row)
        if not inner:  # an inner run's node's log tells how it went
            word = {"succeeded": "finished", "failed": "failed", "skipped": "skipped"}[run.status]  # its node's log
            text = f"Node {run.node_id} ({run.type}) {word}" + (f": {run.error}" if run.error else "")
            kind = "error" if run.status == "failed" else "warning" if run.status == "skipped" else "info"
            self.logs.append(NewLog(node_key(self.workflow_id, self.round_no, run.path)("done"), text, type=kind,
                                    agent_name=run.type, progress=progress(done, total)))
        # Computed again at no cost should the round stop before the next write: kept for it. (A top-level
        # skip too: what the edges decide is computed again.)
        if run.type in INSTANT and run.status == "succeeded" or not inner and (
                run.status == "skipped" or run.path in self.computed):
            return
        message = self.pending.pop(run.path, None)
        if message is not None and self.secrets:
            message = replace(message, content=redacted(message.content, self.secrets.values()))
        if message is None and not self.logs:  # an inner run with nothing to show: its row alone
            await self.flush()
            return
        await self.flushed()
        logs, also = self.carried()
        await self.rt.journal.append(self.workflow_id, self.round_no, messages=[message] if message else [], logs=logs,
                                     also=also)

    def carried(self) -> tuple[list[NewLog], Callable[[Connection], None] | None]:
        """What is held for the next write of the round, taken: its logs, and what writes its node runs in that
        write's transaction (None: none held)."""
        logs, rows, after = self._take()
        if not rows:
            return logs, None
        store = self.rt.repo.flows
        return logs, lambda conn: store.settle_tx(conn, self.workflow_id, self.round_no, rows, after)

    def _take(self) -> tuple[list[NewLog], list[dict[str, Any]], int | None]:
        if self._timer is not None:
            self._timer.cancel()
            self._timer = None
        logs, self.logs = self.logs, []
        rows, self.later = self.later, []
        return logs, rows, self._after(rows) if rows else None

    async def flush(self) -> None:
        """Write what is held now: before a map's items go to other replicas (they read the nodes before the
        map from the database), after a map item run for another replica (it has no next write of its own),
        and once a start log was held HOLD_SECONDS."""
        await self.flushed()
        if not self.logs:
            rows, after = self._take()[1:]
            await self.rt.repo.flows.settle(self.workflow_id, self.round_no, rows, after)
            return
        logs, also = self.carried()
        await self.rt.journal.append(self.workflow_id, self.round_no, logs=logs, also=also)

    async def flushed(self) -> None:
        """Once a write of held logs under way is over: on PostgreSQL two writes may commit in either order, and
        a node's start log goes before its outcome's."""
        others = self._flushing - {asyncio.current_task()}  # the held logs' own write does not wait for itself
        if others:
            await asyncio.wait(others)

    def drop(self) -> None:
        """Forget what is held, unwritten (the run ends without a next write)."""
        self._take()

    def _hold(self) -> None:
        if self._timer is None:
            self._timer = asyncio.get_running_loop().call_later(HOLD_SECONDS, self._flush_later)

    def _flush_later(self) -> None:
        self._timer = None
        task = asyncio.ensure_future(self._flush_quietly())
        self._flushing.add(task)
        task.add_done_callback(self._flushing.discard)

    async def _flush_quietly(self) -> None:
        try:
            await self.flush()
        except Exception:  # noqa: BLE001 - a start log that could not be written; the node's outcome still will be
            failures.warning("held logs of round %s:%s were not written", self.workflow_id, self.round_no,
                             exc_info=True)

    async def decision(self, path: str) -> str | None:
        taken = self.decision_taken
        if taken.get("kind") == "node" and taken.get("path") == path:
            return str(taken["decision"])
        return None


def redacted(value: Any, secrets: Iterable[str]) -> Any:
    """`value` with every secret's text replaced by "[secret]" (a server may echo a token it was sent)."""
    hidden = [s for s in secrets if len(s) >= 4]
    if not hidden:
        return value
    if isinstance(value, str):
        for secret in hidden:
            value = value.replace(secret, "[secret]")
        return value
    if isinstance(value, dict):
        return {k: redacted(v, hidden) for k, v in value.items()}
    if isinstance(value, list):
        return [redacted(v, hidden) for v in value]
    return value


def definition_of(body: str) -> FlowDefinition:
    return FlowDefinition.decode(body.encode())


async def run_flow(rt: Runtime, workflow_id: str, round_no: int, flow: Mapping[str, Any],
                   decision: Mapping[str, Any] | None = None) -> None:
    """Run (or resume) the flow round: read its files, run the definition, write how it ended."""
    key = step_keys(workflow_id, round_no, "flow")
    body = await rt.repo.flows.definition(str(flow.get("hash", "")))
    if body is None:
        await rt.journal.fail(workflow_id, round_no, "The flow's definition is no longer stored; the run "
                              "cannot go on.", key("failed"))
        return
    definition = definition_of(body)
    prepared = await rt.rounds.prepare(workflow_id, round_no, then=[NewLog(
        key("start"), f"Running flow {definition.name}: {len(definition.nodes)} nodes", agent_name="flow",
        progress=10)]) if decision is None else None
    if decision is None and prepared is None:
        return  # stopped, deleted or finished before it began
    inp = prepared[0] if prepared else await rt.rounds.round_input(workflow_id, round_no)
    effects, journal = prepared_parts(rt, workflow_id, round_no, inp, definition, decision, flow.get("reuse"))
    journal.fresh = prepared is not None and not prepared[1] and not flow.get("reuse")
    inputs = dict(flow.get("inputs") or {})
    replicas = current().replicas  # None on SQLite: one process runs every item
    spread = None if replicas is None else spreader(journal, str(flow.get("hash", "")), inputs,
                                                    rt.settings.flow_map_workers, lambda: replicas.peers)
    try:
        result = await rt.runner.run_flow(definition, effects, journal, inputs, secrets=journal.secrets, spread=spread)
    except BaseException:
        journal.drop()  # stopped, taken over or failing: what it held is computed again by whoever goes on
        raise
    result.outputs, result.error = (redacted(result.outputs, journal.secrets.values()),
                                    redacted(result.error, journal.secrets.values()))
    if result.status == "waiting":
        await wait(rt, workflow_id, round_no, result, journal)
    else:
        await finish(rt, workflow_id, round_no, definition, result, journal)


def prepared_parts(rt: Runtime, workflow_id: str, round_no: int, inp: RoundInput, definition: FlowDefinition,
                   decision: Mapping[str, Any] | None = None,
                   reuse: Mapping[str, Any] | None = None) -> tuple[RoundEffects, RoundJournal]:
    """What the engine runs a flow round (or one of its map items) with: its effects and its journal (its
    limits are the Runner's, FLOW_MAX_NODE_RUNS)."""
    s = rt.settings
    effects, journal = RoundEffects(rt, workflow_id, round_no, inp), RoundJournal(rt, workflow_id, round_no,
                                                                                  decision, reuse)
    effects.pending = journal.pending
    effects.definition = definition
    # Secrets are read from the environment when a run starts, for http nodes only; a node run's record
    # never holds one (`redacted`).
    journal.secrets = {name: os.environ[name] for name in s.flow_secret_env if os.environ.get(name)}
    return effects, journal


async def run_map_item(rt: Runtime, workflow_id: str, round_no: int, flow_hash: str, inputs: Mapping[str, Any],
                       body: Node, path: str, extra: Mapping[str, Any]) -> NodeRun | None:
    """One map item another replica's run of the flow round shared (`app.rounds.map_items`): run and settled
    here; None when the definition is no longer stored."""
    text = await rt.repo.flows.definition(flow_hash)
    if text is None:
        return None
    definition = definition_of(text)
    inp = await rt.rounds.round_input(workflow_id, round_no)
    effects, journal = prepared_parts(rt, workflow_id, round_no, inp, definition)
    # It reads the top-level nodes' runs and its own, not every other item's; other replicas write this
    # round's runs too, so each of its writes reads the last seq.
    journal.item = path
    run = await rt.runner.run_item(definition, effects, journal, inputs, body, path, extra, journal.secrets)
    await journal.flush()
    return run


async def wait(rt: Runtime, workflow_id: str, round_no: int, result: FlowResult, journal: RoundJournal) -> None:
    """The run `result` waits for the user's decisions on its human nodes: each asks in its own `step` message
    (written once: a node still waiting after another's decision is not asked twice), and the wait lists
    them all (`waitingFor.nodes`); a decision names the one it is for by its message (none: the first). What
    the journal held is written with it."""
    waits, total, done = result.waits, result.total, result.done
    first = waits[0]
    nodes = [{"path": h.path, "nodeId": h.node_id, "actions": list(h.actions), "defaultAction": h.default_action,
              "messageKey": node_key(workflow_id, round_no, h.path)("message")} for h in waits]
    seconds = first.timeout_seconds or rt.settings.review_timeout_seconds
    extra = {**{k: v for k, v in nodes[0].items() if k != "messageKey"}, "nodes": nodes}
    await journal.flushed()
    held, also = journal.carried()
    await rt.journal.append(
        workflow_id, round_no,
        messages=[NewMessage(node["messageKey"], "assistant", "step", human.message, agent_name="human",
                             meta={"node": human.path, "human": {"state": "pending", **{
                                 k: v for k, v in node.items() if k != "messageKey"}}})
                  for human, node in zip(waits, nodes)],
        logs=[*held, *(NewLog(node_key(workflow_id, round_no, human.path)("waiting"), f"Waiting for your decision on "
                              f"node {human.node_id}: {', '.join(human.actions)}", agent_name="human",
                              progress=progress(done, total)) for human in waits)],
        event=Event.WAIT, wait=Wait("node", nodes[0]["messageKey"], seconds, extra), also=also)


async def finish(rt: Runtime, workflow_id: str, round_no: int, definition: FlowDefinition,
                 result: FlowResult, journal: RoundJournal) -> None:
    """The `last` message: the flow's outputs (or which node failed and why), with the files nodes made, and
    what the journal held (the end node's run, say) in the same write."""
    key = step_keys(workflow_id, round_no, "flow")
    file_ids = list(dict.fromkeys(fid for run in result.runs.values() if run.status == "succeeded"
                                  for fid in run.files))
    if result.status == "completed":
        text = render_outputs(definition, result.outputs)
        log = NewLog(key("done"), "Workflow completed successfully", agent_name="flow", progress=100,
                     status="completed")
        event = Event.FINISH
    else:
        where = f"node {result.failed_node}" if result.failed_node else "the flow"
        text = f"The flow {definition.name} failed at {where}: {result.error}"
        log = NewLog(key("failed"), f"Flow failed at {where}: {result.error}", type="error", agent_name="flow",
                     progress=100, status="failed")
        event = Event.FAIL
    await journal.flushed()
    held, also = journal.carried()
    await rt.journal.append(
        workflow_id, round_no,
        messages=[NewMessage(key("message"), "assistant", "last", text, agent_name="flow",
                             meta={"outputs": result.outputs} if result.status == "completed" else {},
                             documents=[NewDocument(fid) for fid in file_ids])],
        logs=[*held, log], event=event, also=also)


def render_outputs(definition: FlowDefinition, outputs: Mapping[str, Any]) -> str:
    """The outputs as a person reads them: one an output's text itself, several each under its name."""
    if not outputs:
        return f"The flow {definition.name} finished."
    if len(outputs) == 1:
        return _text(next(iter(outputs.values())))
    return "\n\n".join(f"**{name}**\n\n{_text(value)}" for name, value in outputs.items())


def _text(value: Any) -> str:
    return value if isinstance(value, str) else json.dumps(value, ensure_ascii=False, indent=2)
