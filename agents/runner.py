"""Running one task: the agent's context from the round so far, the call, its output documents."""

from __future__ import annotations

from agents.base import DocumentText, OutputFile, Plan, TaskContext, TaskResult, TaskSpec
from agents.errors import AgentsError
from agents.model import Model
from agents.outputs import ext_of
from agents.registry import Registry
from agents.toolkit.tokens import count_long_texts

_TEXT_EXTS = {"md", "markdown", "txt", "csv", "tsv", "json"}


async def run_task(registry: Registry, task: TaskSpec, context: TaskContext) -> TaskResult:
    """Run the task's agent. Its exceptions propagate: the engine logs them as a failed task."""
    agent = registry.get(task.agent)
    await count_long_texts(d.text for d in context.documents.values())
    result = await agent.run(task, context)
    if not isinstance(result, TaskResult):
        raise AgentsError(f"agent '{task.agent}' returned {type(result).__name__}, not a TaskResult")
    return result


def output_document(file: OutputFile) -> DocumentText | None:
    """An agent's output file as a document later tasks can read; None when it has no text."""
    if ext_of(file.name) in _TEXT_EXTS:
        items = [(file.name, file.data.decode("utf-8", errors="replace"))]
    else:
        try:
            from extractors import extract  # another layer; optional so agents run without it
        except ImportError:
            return None
        extraction = extract(file.data, file.name, mime=file.mime)
        items = [(i.name, i.data) for i in extraction.items if i.is_text and i.data.strip()]
    if not items:
        return None
    return DocumentText(name=file.name, ext=ext_of(file.name), mime=file.mime, size=len(file.data),
                        items=items)


def task_context(plan: Plan, task: TaskSpec, *, prompt: str, uploads: list[DocumentText],
                 results: dict[str, TaskResult], model: Model,
                 history: list[tuple[str, str]] | None = None) -> TaskContext:
    """The context of a task: the uploads, the text of every finished task's outputs, and the
    results of the tasks it depends on."""
    documents = {d.name: d for d in uploads}
    for other in plan.tasks:
        for file in results[other.id].files if other.id in results else []:
            doc = output_document(file)
            if doc is not None and doc.name not in documents:
                documents[doc.name] = doc
    predecessors = {d: results[d] for d in task.depends_on if d in results}
    return TaskContext(prompt=prompt, language=plan.language, documents=documents,
                       predecessors=predecessors, model=model, history=list(history or []))
