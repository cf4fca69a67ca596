"""The writer agent: writes a new document and delivers it as Markdown and DOCX."""

from __future__ import annotations

from agents.base import TaskContext, TaskResult, TaskSpec
from agents.calls import Ledger, input_budget, message_excerpt, messages, output_budget
from agents.inputs import base_hints, language_name, task_documents
from agents.model import ModelRequest
from agents.outputs import ext_of, planned, stem_of, text_file
from agents.phrases import say
from agents.summarizer import summarize_document
from agents.toolkit.tokens import count_tokens_off_loop, fit_to_budget_off_loop


class Writer:
    """Writes reports, letters and other documents from the instructions and the material."""

    name = "writer"
    description = (
        "Writes a new document (report, memo, letter, article) from the instructions, the given "
        "documents and earlier tasks' results; delivers it as .md and .docx files."
    )

    async def run(self, task: TaskSpec, context: TaskContext) -> TaskResult:
        ledger = Ledger(context.model)
        names = planned(task, {"md", "markdown", "docx", "txt"})
        title = _title(task, names)
        budget = input_budget(context.model, self.name)
        sources: list[dict[str, str]] = []
        for task_id, result in context.predecessors.items():
            sources.append({"name": f"{task_id}", "text": result.text})
        for doc in task_documents(task, context) if task.inputs or not sources else []:
            text = doc.text
            if await count_tokens_off_loop(text) > budget // 2:  # condense long inputs instead of cutting them
                text = await summarize_document(ledger, task, context, doc, agent=self.name)
            sources.append({"name": doc.name, "text": text})
        fitted = await fit_to_budget_off_loop([s["text"] for s in sources], budget)
        sources = [dict(s, text=t) for s, t in zip(sources, fitted, strict=True)]
        material = "\n\n".join(f"### {s['name']}\n\n{s['text']}" for s in sources)
        system = (f"You are the {self.name} agent. Write the document '{title}' in "
                  f"{language_name(context.language)} as Markdown, starting with a '# ' title. "
                  "Use only the material given; do not invent facts.")
        request = ModelRequest(
            purpose="task",
            messages=messages(system, f"Instructions: {task.instructions}\n\nMaterial:\n\n"
                                      f"{material or 'none'}"),
            agent=self.name,
            hints=dict(base_hints(task, context, self.name, "write"), title=title, sources=sources),
            max_tokens=output_budget(context.model, self.name),
        )
        markdown = (await ledger.ask(request)).text
        files = [text_file(name, markdown, title) for name in _with_both_formats(names, title)]
        text = say("document_written", context.language, files=", ".join(f.name for f in files))
        return TaskResult(text=f"{text}\n\n{await message_excerpt(markdown)}", files=files, usage=ledger.usage,
                          model=ledger.model_name, offline=ledger.offline)


def _title(task: TaskSpec, names: list[str]) -> str:
    """The document's title: from its planned file name ("quarterly-report.docx": "Quarterly report")."""
    if names:
        return stem_of(names[0]).replace("-", " ").replace("_", " ").strip().capitalize()
    first_line = task.instructions.strip().splitlines()[0] if task.instructions.strip() else ""
    return first_line[:80] or "Document"


def _with_both_formats(names: list[str], title: str) -> list[str]:
    """The planned names plus the missing counterpart, so a .md always comes with a .docx."""
    if not names:
        stem = stem_of(title.lower())[:40] or "document"
        return [f"{stem}.md", f"{stem}.docx"]
    result = list(names)
    exts = {ext_of(n) for n in names}
    stem = stem_of(names[0])
    if "docx" not in exts:
        result.append(f"{stem}.docx")
    if not exts & {"md", "markdown"}:
        result.append(f"{stem}.md")
    return result
