"""The writer agent: writes a new text; delivers it as the files its task lists (Markdown, DOCX), or as
its message when the task lists none."""

from __future__ import annotations

import re

from agents.base import DocumentText, TaskContext, TaskResult, TaskSpec
from agents.builtin.summarizer import summarize_document
from agents.knowledge.passages import location
from agents.knowledge.retrieval import MemoryRetriever
from agents.language import document_topic, summarize
from agents.model import ModelRequest, lead, no_draft
from agents.phrases import say
from agents.requests import Source, WriteHints
from agents.tasks.calls import Ledger, input_budget, message_excerpt, messages, output_budget
from agents.tasks.inputs import base_hints, instructions, reminder, task_documents, task_language
from agents.tasks.outputs import TEXT_FORMATS, planned, stem_of, text_file, title_stem
from agents.toolkit.cpu import off_gil_if_long
from agents.toolkit.tokens import count_tokens_off_loop, fit_to_budget_off_loop

PASSAGES = 6  # of a long input document, the ones that bear on the task
OVERVIEW_SENTENCES = 5  # and its most informative sentences


class Writer:
    """Writes reports, letters and other documents from the instructions and the material."""

    name = "writer"
    formats = TEXT_FORMATS  # what it delivers, for the planner (agents.registry.Registry.formats)
    description = (
        "Writes a new text (report, memo, letter, article, summary) from the instructions, the given "
        "documents and earlier tasks' results; delivers the files the task lists (.docx, .md); with "
        "none listed, its text is the answer in the conversation."
    )

    async def run(self, task: TaskSpec, context: TaskContext) -> TaskResult:
        ledger = Ledger(context.model)
        names = planned(task, {"md", "markdown", "docx", "txt"})
        title = _title(task, names)
        budget = input_budget(context.model, self.name)
        sources: list[dict[str, str]] = []
        for task_id, result in context.predecessors.items():
            # An earlier step is named by what it delivered, never by its task id ("## t1"); of a step that
            # delivered files, its tables are the material, not its lines about them ("1 table extracted").
            name = ", ".join(f.name for f in result.files) or task_id
            sources.append({"name": name, "text": delivered_material(result.text) if result.files else result.text})
        numbered = 0
        for doc in task_documents(task, context) if task.inputs or not sources else []:
            text = material_of(doc)
            if await count_tokens_off_loop(text) > budget // 2:  # condense long inputs instead of cutting them
                grounded = await passages_of(task, context, doc, numbered)
                if grounded:
                    text, numbered = grounded
                else:
                    with no_draft():  # material, not the message's text
                        text = await summarize_document(ledger, task, context, doc, agent=self.name)
            sources.append({"name": doc.name, "text": text})
        fitted = await fit_to_budget_off_loop([s["text"] for s in sources], budget)
        sources = [dict(s, text=t) for s, t in zip(sources, fitted, strict=True)]
        material = "\n\n".join(f"### {s['name']}\n\n{s['text']}" for s in sources)
        language = task_language(task, context)
        system = instructions(self.name, language,
                              f"Write the document '{title}' as Markdown, starting with a '# ' title. "
                              "Use only the material given; do not invent facts." +
                              (" Put a passage's number after what you take from it, like [2]." if numbered else ""))
        request = ModelRequest(
            purpose="task",
            messages=messages(system, f"Instructions: {task.instructions}\n\nMaterial:\n\n"
                                      f"{material or 'none'}{reminder(language)}"),
            agent=self.name,
            hints=WriteHints(**base_hints(task, context, self.name), title=title,
                             sources=tuple(Source(s["name"], s["text"]) for s in sources)),
            max_tokens=output_budget(context.model, self.name),
        )
        if not task.outputs:  # no file asked for: the text is the answer, in the conversation (issue 50)
            markdown = (await ledger.ask(request)).text
            return TaskResult(text=markdown, usage=ledger.usage, model=ledger.model_name, offline=ledger.offline)
        lead(say("document_written", context.language, files=", ".join(_formats(names, title))) + "\n\n")
        markdown = (await ledger.ask(request)).text
        files = [await text_file(name, markdown, title) for name in _formats(names, title)]
        text = say("document_written", context.language, files=", ".join(f.name for f in files))
        return TaskResult(text=f"{text}\n\n{await message_excerpt(markdown)}", files=files, usage=ledger.usage,
                          model=ledger.model_name, offline=ledger.offline)


async def passages_of(task: TaskSpec, context: TaskContext, doc: DocumentText, before: int) -> tuple[str, int] | None:
    """A long document as material without a model call: its most informative sentences (the extractive
    summariser's), then the passages that bear on the task, numbered from `before + 1` with where they are
    from, so what the writer takes from them can be cited and checked, whichever agent the plan chose for
    a question. With the numbers used; None when no passage bears on it."""
    retriever = context.retriever or MemoryRetriever()
    found = await retriever.search(f"{task.instructions}\n{context.prompt}", [doc], PASSAGES)
    if not found:
        return None
    overview = await off_gil_if_long(len(doc.text), summarize, doc.text, OVERVIEW_SENTENCES)
    lines = [f"- {' '.join(s.split())}" for s in overview]
    for n, passage in enumerate(found, before + 1):
        lines.append(f"\n[{n}] {passage.where()}:\n{passage.text}")
    return "\n".join(lines), before + len(found)


def _title(task: TaskSpec, names: list[str]) -> str:
    """The document's title: the one its instructions imply ("Write a report on the harvest": "Report on
    the harvest"), else from its planned file name ("quarterly-report.docx": "Quarterly report")."""
    implied = document_topic(task.instructions)
    if implied:
        return implied
    if names:
        return stem_of(names[0]).replace("-", " ").replace("_", " ").strip().capitalize()
    first_line = task.instructions.strip().splitlines()[0] if task.instructions.strip() else ""
    return first_line[:80] or "Document"


def delivered_material(text: str) -> str:
    """Of a step's message about the files it made: its tables with their captions and headings; the
    whole text when it holds no table."""
    lines = text.splitlines()
    keep = [i for i, line in enumerate(lines) if line.lstrip().startswith("|")]
    if not keep:
        return text
    captions = [i for i, line in enumerate(lines) if re.match(r"\s*(?:#{1,6} |\*\*[^*]+\*\*\s*$)", line)]
    picked = sorted(set(keep) | set(captions))
    out: list[str] = []
    for i in picked:
        if out and i - 1 not in picked:
            out.append("")
        out.append(lines[i])
    return "\n".join(out).strip()


def _formats(names: list[str], title: str) -> list[str]:
    """The planned names (asked for Word, Word only); with files planned that are none of the writer's
    (a PDF), Markdown and Word."""
    if names:
        return list(names)
    stem = title_stem(title)
    return [f"{stem}.md", f"{stem}.docx"]


TABLE_ROWS = 60  # rows of one sheet or table shown in a written document


def material_of(doc: DocumentText) -> str:
    """A document as Markdown material: a heading per part when it has several (each sheet, page or
    section), a sheet as a pipe table of its values as the sheet shows them ("12,553", "(81)"),
    which a Word report shows as a Word table."""
    parts = []
    several = len(doc.items) > 1
    for name, text in doc.items:
        table = sheet_markdown(text, TABLE_ROWS) if location(name).get("sheet") or _tabbed(text) else ""
        body = table or text
        parts.append(f"### {name}\n\n{body}" if several or location(name).get("sheet") else body)
    return "\n\n".join(parts)


def _tabbed(text: str) -> bool:
    """Rows of cells as a CSV or TSV file is read (tab-separated, most lines): a table, not prose."""
    lines = [line for line in text.splitlines() if line.strip()]
    return len(lines) >= 2 and 2 * sum("\t" in line for line in lines) > len(lines)


def sheet_markdown(text: str, limit: int) -> str:
    """A sheet's tab-separated rows as a caption (title lines above the table) and a pipe table
    whose header is the first row that fills half the columns; empty rows and columns dropped."""
    rows = [[" ".join(c.split()).replace("|", "\\|") for c in line.split("\t")] for line in text.split("\n")]
    rows = [r for r in rows if any(r)]
    if not rows:
        return ""
    width = max(len(r) for r in rows)
    rows = [r + [""] * (width - len(r)) for r in rows]
    head = next((i for i, r in enumerate(rows) if sum(1 for c in r if c) >= max(2, width / 2)), None)
    if head is None:
        return ""
    body = rows[head:head + limit + 1]
    cols = [c for c in range(width) if any(r[c] for r in body)]
    caption = [" ".join(c for c in r if c) for r in rows[:head]]
    lines = ["| " + " | ".join(body[0][c] for c in cols) + " |", "|" + " --- |" * len(cols)]
    lines += ["| " + " | ".join(r[c] for c in cols) + " |" for r in body[1:]]
    rest = len(rows) - head - 1
    if rest > limit:
        lines.append(f"\n({limit} of {rest} rows)")
    return "\n\n".join(filter(None, ["\n\n".join(caption), "\n".join(lines)]))
