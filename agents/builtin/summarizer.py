"""The summarizer agent: a summary of each input document, however long."""

from __future__ import annotations

from msgspec import structs

from agents.base import DocumentText, TaskContext, TaskResult, TaskSpec
from agents.language import informative_passages
from agents.model import ModelRequest, lead
from agents.phrases import say
from agents.requests import SummaryHints
from agents.tasks.calls import Ledger, input_budget, map_reduce, messages, output_budget
from agents.tasks.hints import doc_facts
from agents.tasks.inputs import base_hints, instructions, language_name, reminder, task_documents, task_language
from agents.tasks.outputs import TEXT_FORMATS, text_files
from agents.toolkit.cpu import off_gil_if_long
from agents.toolkit.tokens import chunk_text, count_tokens_off_loop

# A summary costs at most this many map calls whatever the text's length: a longer text is first
# cut to its most informative passages (the extractive summariser's choice), PER_PART of them a
# call. A 30 MB text was ~944 map calls; a model reading 20 tokens a second never finished one.
MAP_PARTS = 8
PER_PART = 4
# ... and reads at most about this many tokens of it (two parts at least): a 4K-window model (Qwen 0.5B,
# budget ~2,500 tokens) reads 4 parts, not 8; a model reading 20 tokens a second spends minutes per part.
SUMMARY_TOKENS = 12_000


class Summarizer:
    """Summarises documents; long ones chunk by chunk (map-reduce)."""

    name = "summarizer"
    formats = TEXT_FORMATS  # what it delivers, for the planner (agents.registry.Registry.formats)
    description = (
        "Summarises the given documents (any length) in the user's language, as a message and, "
        "when the task lists outputs, as .md/.docx files."
    )

    async def run(self, task: TaskSpec, context: TaskContext) -> TaskResult:
        ledger = Ledger(context.model)
        docs = task_documents(task, context)
        if not docs:
            return TaskResult(text=say("no_documents", context.language))
        sections: list[str] = []
        for doc in docs:
            heading = f"## {say('summary_of', context.language, doc=doc.name)}\n\n"
            lead(("\n\n" if sections else "") + heading)  # streamed with the summary that follows
            summary = await summarize_document(ledger, task, context, doc, agent=self.name)
            sections.append(f"{heading}{summary}")
        text = "\n\n".join(sections)
        files = await text_files(task, text, title=say("summary_of", context.language,
                                                         doc=", ".join(d.name for d in docs)))
        return TaskResult(text=text, files=files, usage=ledger.usage, model=ledger.model_name,
                          offline=ledger.offline)


async def summarize_document(ledger: Ledger, task: TaskSpec, context: TaskContext,
                             doc: DocumentText, *, agent: str) -> str:
    """A summary of one document; a map-reduce over its chunks when it is too long for one call."""
    if not doc.text.strip():  # a scan without OCR, an encrypted file: nothing to send
        return say("no_text", context.language, doc=doc.name)
    code = task_language(task, context)
    language = language_name(code)
    system = instructions(agent, code, "Summarise the document faithfully as Markdown bullet "
                          f"points. Task: {task.instructions}")
    hints = SummaryHints(**base_hints(task, context, agent))
    budget = input_budget(context.model, agent)
    text = readable(doc)
    tokens = await count_tokens_off_loop(text)
    if tokens > budget:
        chunks, picked, passages = await off_gil_if_long(len(text), bounded_parts, text, budget, tokens,
                                                         part_limit(budget))
        told = context.progress

        async def progress(line: str) -> None:
            if told is not None:
                await told(f"Summarising {doc.name}: {line}")

        if picked < passages:
            await progress(f"{picked} most informative of {passages} passages chosen, "
                           f"{len(chunks)} parts to summarise")
        return await map_reduce(
            ledger, agent=agent, text=text, budget=budget, chunks=chunks, progress=progress,
            map_system=f"Write only in {language}. Summarise this part of a longer document: keep every key "
                       "fact, figure and name." + (" The parts are the document's most informative "
                                                   "passages, not all of it." if picked < passages else ""),
            reduce_system=f"Write only in {language}. These are summaries of consecutive parts of one "
                          "document. Merge them into one summary.",
            hints=hints, doc=doc_facts(doc),
        )
    request = ModelRequest(
        purpose="task",
        messages=messages(system, f"Document {doc.name}:\n\n{text}{reminder(code)}"),
        agent=agent,
        hints=structs.replace(hints, documents=(doc_facts(doc, text=text),)),
        max_tokens=output_budget(context.model, agent),
    )
    return (await ledger.ask(request)).text


def part_limit(budget: int) -> int:
    """How many parts of `budget` tokens a summary reads at most: MAP_PARTS, fewer when they would add
    up to more than SUMMARY_TOKENS (two at least)."""
    return min(MAP_PARTS, max(2, SUMMARY_TOKENS // budget))


def readable(doc: DocumentText) -> str:
    """The document's text for a summary: a sheet's data rows each named by their sheet and carrying
    their headings ("sheet 2023: Zone NA; Sales: 12,553"), so any row a summary quotes says where
    it is from and which year or column it gives; other items as they read."""
    from agents.knowledge.passages import location, table_rows

    parts = []
    for name, text in doc.items:
        if location(name).get("sheet"):
            rows, rest = table_rows(text)
            parts.append("\n".join(filter(None, [rest.strip(), *(f"{name}: {row}." for row in rows)])))
        else:
            parts.append(text)
    return "\n\n".join(p for p in parts if p.strip())


def bounded_parts(text: str, budget: int, tokens: int, limit: int) -> tuple[list[str], int, int]:
    """The text as at most `limit` parts of at most `budget` tokens, with how many passages were
    kept of how many: all of it when it fits, else its most informative passages in their order."""
    if tokens <= limit * budget * 0.9:  # chunks are not filled to the last token
        chunks = chunk_text(text, budget)
        if len(chunks) <= limit:
            return chunks, len(chunks), len(chunks)
    passages = chunk_text(text, max(64, budget // PER_PART - 16))  # PER_PART and their breaks fit one call
    chosen = informative_passages(passages, limit * PER_PART)
    parts = ["\n\n".join(passages[i] for i in chosen[j:j + PER_PART]) for j in range(0, len(chosen), PER_PART)]
    return parts, len(chosen), len(passages)
