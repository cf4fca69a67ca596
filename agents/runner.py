"""Running one task: the agent's context from the round so far, the call, its output documents."""

from __future__ import annotations

from typing import TYPE_CHECKING, Mapping

from agents.base import DocumentText, Plan, TaskContext, TaskResult, TaskSpec
from agents.errors import AgentsError
from agents.model import Model
from agents.registry import Registry
from agents.toolkit.tokens import count_long_texts

if TYPE_CHECKING:
    from agents.base import Retriever


async def run_task(registry: Registry, task: TaskSpec, context: TaskContext) -> TaskResult:
    """Run the task's agent. Its exceptions propagate: the engine logs them as a failed task."""
    agent = registry.get(task.agent)
    await count_long_texts(d.text for d in context.documents.values())
    result = await agent.run(task, context)
    if not isinstance(result, TaskResult):
        raise AgentsError(f"agent '{task.agent}' returned {type(result).__name__}, not a TaskResult")
    return result


def task_context(plan: Plan, task: TaskSpec, *, prompt: str, uploads: list[DocumentText],
                 results: Mapping[str, TaskResult], outputs: Mapping[str, list[DocumentText]], model: Model,
                 history: list[tuple[str, str]] | None = None, retriever: Retriever | None = None) -> TaskContext:
    """What a task sees: the uploads, the output documents of the tasks it depends on (an output
    named like an upload replaces it) and those tasks' results; `results` and `outputs` hold the
    tasks that delivered."""
    documents = {d.name: d for d in uploads}
    for dep in task.depends_on:
        for doc in outputs.get(dep, []):
            documents[doc.name] = doc
    predecessors = {d: results[d] for d in task.depends_on if d in results}
    return TaskContext(prompt=prompt, language=plan.language, documents=documents, predecessors=predecessors,
                       model=model, history=list(history or []), retriever=retriever)
