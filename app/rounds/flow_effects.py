"""What a flow round's nodes do outside the engine (`agents.flows.Effects`): a registered agent's task,
one model call (streamed as live text), code in the sandbox, a request, and the definition of another flow
of the owner's that a sub-flow node runs (the engine runs it, its paths under the node's: every path here
is from the top). Each node that writes text or files gets its `step` message, in the one write that is
its checkpoint's companion (`app.rounds.flow_run`)."""

from __future__ import annotations

import json
import time
from collections.abc import Mapping
from types import SimpleNamespace
from typing import Any
from urllib.parse import urlsplit

from agents.flows import (
    AgentConfig,
    FlowDefinition,
    FlowRefConfig,
    HttpConfig,
    LlmConfig,
    Node,
    NodeError,
    Produced,
)
from agents.model import ModelRequest
from agents.round import RoundInput
from app.rounds.documents import read_document
from app.rounds.runtime import Runtime
from app.rounds.steps import step_keys
from app.sandbox.code import CodeLimits
from app.sandbox.http import HttpPolicy, send_request
from app.store.records import NewDocument, NewMessage, Owner
from app.store.tables import stored_id


def node_key(workflow_id: str, round_no: int, path: str) -> Any:
    """The keys of one node run's writes."""
    return step_keys(workflow_id, round_no, "node", path)


HTTP_TIMEOUT_SECONDS = 30.0  # an http node's request without its own timeoutSeconds


class RoundEffects:
    """The effects of one flow round's nodes, with the round's input (its request and documents)."""

    def __init__(self, rt: Runtime, workflow_id: str, round_no: int, inp: RoundInput) -> None:
        self.rt, self.workflow_id, self.round_no, self.inp = rt, workflow_id, round_no, inp
        self.pending: dict[str, NewMessage] = {}  # messages the journal writes with their node's outcome
        self.definition: FlowDefinition | None = None  # what runs (an agent node's predecessors are its edges')

    async def agent(self, node: Node, path: str, config: AgentConfig, instructions: str,
                    files: list[int]) -> Produced:
        rt = self.rt
        if config.agent not in rt.runner.registry.names():
            raise NodeError(f"there is no agent {config.agent!r} (the agents: {', '.join(rt.runner.registry.names())})")
        documents = {d.file_id: d for d in self.inp.documents if d.file_id is not None}
        missing = [fid for fid in files if fid not in documents]
        if missing:  # files an earlier node made: read them as a task reads a predecessor's documents
            found = await rt.repo.files.files_by_id(missing)
            for file, contents in await rt.rounds.contents_of([found[i] for i in missing if i in found]):
                doc = await read_document(file, contents, round_no=self.round_no)
                documents[stored_id(file)] = doc
        chosen = [documents[f] for f in files if f in documents] if files else list(self.inp.documents)
        delivered = await self._delivered(node.id) if path == node.id else {}  # a top-level node's predecessors
        outputs_in = await rt.rounds.outputs_of(list(delivered), delivered)
        key = node_key(self.workflow_id, self.round_no, path)
        started, t0 = rt.clock(), time.perf_counter()
        with rt.journal.drafts.writing(self.workflow_id, self.round_no, key("message"), config.agent, path):
            # A node that names no input reads as a round's task that names none: the uploads, and what the
            # agent nodes just before it delivered (their text and files), not every upload as its input.
            result = await rt.runner.run_node(path, config, instructions, chosen, history=self.inp.history,
                                              round_no=self.round_no, outputs=outputs_in, named=bool(files) or not delivered,
                                              texts={t: d.text for t, d in delivered.items()})
        if result.question:
            raise NodeError(f"the {config.agent} agent asked a question a flow cannot answer: {result.question}")
        outputs = await rt.runner.capped(result.files, f"{node.id}-more-documents.zip")
        documents_out = await rt.rounds.store(await rt.rounds.owner(self.workflow_id) if outputs else None, outputs)
        await rt.rounds.fill(documents_out)
        written = await self._message(key("message"), result.text, config.agent, path, started, t0,
                                      result.usage.total_tokens, documents_out)
        await rt.rounds.settle(documents_out, kept=written is not None)
        file_ids = written if written is not None else []
        return Produced(output=result.text, files=file_ids, text=result.text)

    async def _delivered(self, node_id: str) -> dict[str, Any]:
        """The agent nodes with an edge into `node_id` that succeeded: their text and files, as a round's
        task gets those of the tasks it depends on."""
        sources = [e.source for e in self.definition.edges if e.target == node_id] if self.definition else []
        if not sources:
            return {}
        runs = {r.node_id: r for r in await self.rt.repo.flows.node_runs(self.workflow_id, self.round_no)
                if r.path == r.node_id and r.type == "agent" and r.status == "succeeded"}
        return {s: SimpleNamespace(text=str(runs[s].record.get("output") or ""),
                                   files=list(runs[s].record.get("files") or [])) for s in sources if s in runs}

    async def llm(self, node: Node, path: str, config: LlmConfig, prompt: str, system: str) -> Produced:
        rt = self.rt
        window = rt.model.context_tokens
        if window and len(prompt) // 4 > window:
            raise NodeError(f"the prompt renders to about {len(prompt) // 4:,} tokens, over the model's window of "
                            f"{window:,}: shorten it or what it includes")
        key = node_key(self.workflow_id, self.round_no, path)
        started, t0 = rt.clock(), time.perf_counter()
        request = ModelRequest.of_node(node.id, prompt, system, config.schema)
        with rt.journal.drafts.writing(self.workflow_id, self.round_no, key("message"), "llm", path):
            response = await rt.model.complete(request)
        output: Any = response.data if config.schema is not None else response.text
        text = response.text if config.schema is None else json.dumps(response.data, ensure_ascii=False, indent=2)
        # Written with the node's outcome, in its checkpoint's transaction (`RoundJournal.settled`).
        self.pending[path] = NewMessage(key("message"), "assistant", "step", text, agent_name="llm", started_at=started,
                                        meta={"node": path}, tokens_used=response.usage.total_tokens,
                                        processing_time=round(time.perf_counter() - t0, 6))
        return Produced(output=output, text=text)

    async def code(self, node: Node, path: str, code: str, inputs: Mapping[str, Any],
                   nodes: Mapping[str, Any]) -> Produced:
        """The code in a confined worker process (`app.sandbox.code`), never in this one: its `result` is
        the output; its exception (type, message, line) or the limit it hit is the node's error."""
        sandbox, s = self.rt.sandbox, self.rt.settings
        if sandbox is None or not await sandbox.ready():
            why = sandbox.reason if sandbox is not None else "no sandbox is configured"
            raise NodeError(f"code nodes cannot run on this server: {why}; nothing was run")
        result = await sandbox.run_code(code, inputs, nodes, CodeLimits(
            timeout_seconds=s.code_timeout_seconds, memory_mb=s.code_memory_mb,
            max_output_bytes=s.code_max_output_bytes))
        if not result.ok:
            raise NodeError(result.error or "the code failed")
        return Produced(output=result.result)

    async def http(self, node: Node, path: str, config: HttpConfig, url: str, headers: dict[str, str],
                   body: str | None) -> Produced:
        """One request to a host FLOW_HTTP_ALLOW allows (`app.sandbox.http`: private and metadata addresses
        refused, redirects checked, the answer bounded); a status of 400 or more fails the node unless
        `failOnStatus` is false."""
        s = self.rt.settings
        policy = HttpPolicy(allow=s.flow_http_allow, secret_env=s.flow_secret_env)
        result = await send_request(config.method, url, headers, body, config.timeout_seconds or HTTP_TIMEOUT_SECONDS,
                                    policy)
        if result.error is not None:
            raise NodeError(result.error)
        if result.status is not None and result.status >= 400 and config.fail_on_status:
            raise NodeError(f"{urlsplit(url).hostname} answered {result.status}")
        return Produced(output={"status": result.status, "headers": result.headers, "body": result.body})

    async def definition_of(self, config: FlowRefConfig) -> FlowDefinition:
        """A sub-flow node's definition: the owner's flow, at the version the node names (the engine runs it,
        each of its paths under the node's, `agents.flows.subflows`)."""
        owner = await self.rt.rounds.owner(self.workflow_id)
        row = await self.rt.repo.flows.flow(Owner(owner.mandate_id, owner.user_id), config.flow_id)
        if row is None:
            raise NodeError(f"there is no flow {config.flow_id}")
        digest = row.draft_hash
        if config.version != "draft":
            found = await self.rt.repo.flows.version(config.flow_id, config.version)
            if found is None:
                raise NodeError(f"flow {config.flow_id} has no {'published ' if config.version is None else ''}"
                                f"version{'' if config.version is None else f' {config.version}'}")
            digest = found.hash
        body = await self.rt.repo.flows.definition(digest)
        if body is None:
            raise NodeError(f"the definition of flow {config.flow_id} is not stored")
        return FlowDefinition.decode(body.encode())

    async def _message(self, key: str, text: str, agent: str, path: str, started: Any, t0: float, tokens: int,
                       documents: list[NewDocument]) -> list[int] | None:
        """The node's step message (with its documents); the ids of the files it stored, None when the round
        no longer runs."""
        written = await self.rt.journal.append(self.workflow_id, self.round_no, messages=[NewMessage(
            key, "assistant", "step", text, agent_name=agent, started_at=started, meta={"node": path},
            documents=documents, tokens_used=tokens, processing_time=round(time.perf_counter() - t0, 6))])
        return None if written is None else list(written.file_ids)
