"""What a flow round's nodes do outside the engine (`agents.flows.runs.Effects`): a registered agent's task,
one model call (streamed as live text), and what is not here yet (code, requests, sub-flows) refused with
a clear node error. Each node that writes text or files gets its `step` message, in the one write that
is its checkpoint's companion (`app.rounds.flow_run`)."""

from __future__ import annotations

import json
import time
from collections.abc import Mapping
from typing import Any

from agents.base import OutputSpec, Plan, TaskSpec
from agents.flows import AgentConfig, FlowRefConfig, HttpConfig, LlmConfig, Node, NodeError, Produced
from agents.model import ModelRequest, use_call_context
from agents.round import RoundInput, written_language
from app.rounds.documents import read_document
from app.rounds.runtime import Runtime, runner_of
from app.rounds.steps import step_keys
from app.store.records import NewDocument, NewMessage


def node_key(workflow_id: str, round_no: int, path: str) -> Any:
    """The keys of one node run's writes."""
    return step_keys(workflow_id, round_no, "node", path)


class RoundEffects:
    """The effects of one flow round's nodes, with the round's input (its request and documents)."""

    def __init__(self, rt: Runtime, workflow_id: str, round_no: int, inp: RoundInput) -> None:
        self.rt, self.workflow_id, self.round_no, self.inp = rt, workflow_id, round_no, inp

    async def agent(self, node: Node, path: str, config: AgentConfig, instructions: str,
                    files: list[int]) -> Produced:
        rt = self.rt
        if config.agent not in rt.registry.names():
            raise NodeError(f"there is no agent {config.agent!r} (the agents: {', '.join(rt.registry.names())})")
        documents = {d.file_id: d for d in self.inp.documents if d.file_id is not None}
        missing = [fid for fid in files if fid not in documents]
        if missing:  # files an earlier node made: read them as a task reads a predecessor's documents
            found = await rt.repo.files.files_by_id(missing)
            for file, contents in await rt.rounds.contents_of([found[i] for i in missing if i in found]):
                doc = await read_document(file, contents, round_no=self.round_no)
                documents[doc.file_id] = doc
        chosen = [documents[f] for f in files if f in documents] if files else list(self.inp.documents)
        task = TaskSpec(id=path, agent=config.agent, instructions=instructions, inputs=[d.name for d in chosen],
                        outputs=[_output(name) for name in config.outputs])
        plan = Plan(language=written_language(instructions) or "en", answer="", tasks=[task])
        inp = RoundInput(prompt=instructions, documents=chosen, history=self.inp.history, round=self.round_no)
        context = await rt.rounds.task_context(plan, task, inp, {}, rt.model, rt.retriever)
        key = node_key(self.workflow_id, self.round_no, path)
        started, t0 = rt.clock(), time.perf_counter()
        with use_call_context(task=path), rt.journal.drafts.writing(self.workflow_id, self.round_no, key("message"),
                                                                    config.agent, path):
            result = await runner_of(rt).run_task(task, context)
        if result.question:
            raise NodeError(f"the {config.agent} agent asked a question a flow cannot answer: {result.question}")
        outputs = await runner_of(rt).capped(result.files, f"{node.id}-more-documents.zip")
        documents_out = await rt.rounds.store(await rt.rounds.owner(self.workflow_id) if outputs else None, outputs)
        await rt.rounds.fill(documents_out)
        written = await self._message(key("message"), result.text, config.agent, path, started, t0,
                                      result.usage.total_tokens, documents_out)
        await rt.rounds.settle(documents_out, kept=written is not None)
        file_ids = written if written is not None else []
        return Produced(output=result.text, files=file_ids, text=result.text)

    async def llm(self, node: Node, path: str, config: LlmConfig, prompt: str, system: str) -> Produced:
        rt = self.rt
        messages = ([{"role": "system", "content": system}] if system.strip() else []) + \
            [{"role": "user", "content": prompt}]
        window = rt.model.context_tokens
        if window and len(prompt) // 4 > window:
            raise NodeError(f"the prompt renders to about {len(prompt) // 4:,} tokens, over the model's window of "
                            f"{window:,}: shorten it or what it includes")
        key = node_key(self.workflow_id, self.round_no, path)
        started, t0 = rt.clock(), time.perf_counter()
        request = ModelRequest(purpose="task", messages=messages, schema=config.schema, agent="llm",
                               hints={"flow_node": node.id, "prompt": prompt})
        with use_call_context(task=path), rt.journal.drafts.writing(self.workflow_id, self.round_no, key("message"),
                                                                    "llm", path):
            response = await rt.model.complete(request)
        output: Any = response.data if config.schema is not None else response.text
        text = response.text if config.schema is None else json.dumps(response.data, ensure_ascii=False, indent=2)
        await self._message(key("message"), text, "llm", path, started, t0, response.usage.total_tokens, [])
        return Produced(output=output, text=text)

    async def code(self, node: Node, path: str, code: str, inputs: Mapping[str, Any],
                   nodes: Mapping[str, Any]) -> Produced:
        raise NodeError("code nodes cannot run on this server: the sandbox they need is not available")

    async def http(self, node: Node, path: str, config: HttpConfig, url: str, headers: dict[str, str],
                   body: str | None) -> Produced:
        raise NodeError("http nodes cannot run on this server: no host is allowed (FLOW_HTTP_ALLOW)")

    async def subflow(self, node: Node, path: str, config: FlowRefConfig, inputs: Mapping[str, Any]) -> Produced:
        raise NodeError("sub-flow nodes are not supported yet")

    async def _message(self, key: str, text: str, agent: str, path: str, started: Any, t0: float, tokens: int,
                       documents: list[NewDocument]) -> list[int] | None:
        """The node's step message (with its documents); the ids of the files it stored, None when the round
        no longer runs."""
        written = await self.rt.journal.append(self.workflow_id, self.round_no, messages=[NewMessage(
            key, "assistant", "step", text, agent_name=agent, started_at=started, meta={"node": path},
            documents=documents, tokens_used=tokens, processing_time=round(time.perf_counter() - t0, 6))])
        return None if written is None else list(written.file_ids)


def _output(name: str) -> OutputSpec:
    return OutputSpec(name=name, type=name.rsplit(".", 1)[-1] if "." in name else "")
