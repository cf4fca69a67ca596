"""Long text work leaves the event loop free: other requests are served while a book is processed.

Each test runs a ticker beside the work. Work done on the event loop never yields to it; work
done in a worker thread awaits its result, so the ticker runs meanwhile. No timing is measured:
the ticker either ran during the work or it did not.
"""

from __future__ import annotations

import asyncio
from contextlib import asynccontextmanager

from agents.base import OutputSpec, TaskContext, TaskSpec
from agents.builtin.summarizer import MAP_PARTS
from agents.language import load_detector
from agents.model import ModelRequest
from agents.offline.model import OfflineModel
from agents.planning.manager import RoundInput, make_plan
from agents.registry import build_registry
from agents.requests import AnswerHints, DocFacts, SummaryHints
from agents.tasks.run import run_task
from agents.toolkit.tokens import TRUNCATED
from tests.agents.conftest import load_document, text_document
from tests.harness import plan_of
from tests.scripted import ScriptedModel

BOOK = "freeculture.pdf"


@asynccontextmanager
async def ticker():
    ticks = [0]

    async def tick() -> None:
        while True:
            ticks[0] += 1
            await asyncio.sleep(0)

    task = asyncio.create_task(tick())
    await asyncio.sleep(0)
    start = ticks[0]
    ticks[0] = 0
    try:
        yield ticks
    finally:
        task.cancel()
    assert start == 1


async def test_planning_over_a_book_keeps_the_loop_turning():
    book = load_document(BOOK)
    model = ScriptedModel(plan_of(1))  # answers without ever yielding: only the sizing work can
    async with ticker() as ticks:
        outcome = await make_plan(RoundInput(prompt="Summarise the book.", documents=[book]), model,
                                  build_registry(entry_points=False))
    assert outcome.plan.tasks and ticks[0] > 0


async def test_planning_a_short_request_stays_on_the_loop():
    load_detector()  # as the engine does in a thread at start-up
    model = ScriptedModel(plan_of(1))
    async with ticker() as ticks:
        await make_plan(RoundInput(prompt="Say hello.", documents=[]), model, build_registry(entry_points=False))
    assert ticks[0] == 0  # no thread hop for small work


async def test_checking_a_plan_for_copies_of_the_catalogue_is_done_off_the_loop():
    # Small documents (no sizing work in a thread) but long instructions against their catalogue lines:
    # difflib's character matching, tens of milliseconds, goes to a worker thread.
    load_detector()
    docs = [text_document(f"minutes-{n}.txt", f"Meeting {n}. " + "The board discussed the budget and the new hall. " * 40)
            for n in range(8)]
    long = "Compare what the minutes say about the budget, the hall and the members' fees, and list every figure. " * 6
    plan = {"userLanguage": "en", "objUserResponse": "On it.", "objFinalDocuments": [], "objWorkplan": [
        {"id": f"t{n}", "agent": "analyst", "instructions": long, "inputs": [d.name], "outputs": [], "dependsOn": []}
        for n, d in enumerate(docs[:3], 1)]}
    async with ticker() as ticks:
        outcome = await make_plan(RoundInput(prompt="Compare the budgets.", documents=docs), ScriptedModel(plan),
                                  build_registry(entry_points=False))
    assert len(outcome.plan.tasks) == 3 and ticks[0] > 0


async def test_the_offline_model_summarises_a_book_off_the_loop():
    text = load_document(BOOK).text
    request = ModelRequest(purpose="task", messages=[{"role": "user", "content": text}], agent="summarizer",
                           hints=SummaryHints(language="en", documents=(DocFacts(name=BOOK, text=text),)))
    async with ticker() as ticks:
        response = await OfflineModel().complete(request)
    assert response.text.count("\n> ") >= 3 and response.usage.prompt_tokens > 100_000
    assert ticks[0] > 0


async def test_the_offline_model_answers_over_a_chunk_in_a_worker_process(monkeypatch):
    """A summary of one chunk is tens of milliseconds of CPU: a thread of the service would hold
    the GIL that long, and with ten rounds summarising, every poll and stop waited for it."""
    from agents.offline import model as offline

    chunk = load_document(BOOK).text[20_000:25_000]
    ran_in_process: list[str] = []

    async def recording(fn, *args):
        ran_in_process.append(fn.__name__)
        return await real(fn, *args)

    real = offline.off_gil
    monkeypatch.setattr(offline, "off_gil", recording)
    request = ModelRequest(purpose="task", messages=[{"role": "user", "content": chunk}], agent="summarizer",
                           hints=SummaryHints(language="en", documents=(DocFacts(name=BOOK, text=chunk),)))
    response = await OfflineModel().complete(request)
    assert ran_in_process == ["_complete"]
    assert response.text.count("\n> ") >= 2  # a summary, made in the worker
    short = ModelRequest(purpose="task", messages=[{"role": "user", "content": "Say hello."}], agent="writer",
                         hints=AnswerHints(language="en"))
    await OfflineModel().complete(short)
    assert ran_in_process == ["_complete"]  # a short answer is not worth a process hop


async def test_writing_a_workbook_keeps_the_loop_turning():
    book = load_document("2023-half-year-analyses-by-segment.xlsx")
    task = TaskSpec(id="t1", agent="data_extractor", instructions="Extract the tables.", inputs=[book.name])
    context = TaskContext(prompt="Extract the tables.", language="en", documents={book.name: book}, predecessors={},
                          model=OfflineModel(), history=[])
    async with ticker() as ticks:
        result = await run_task(build_registry(entry_points=False), task, context)
    assert result.files[0].name.endswith(".xlsx") and ticks[0] > 0


async def test_a_word_document_is_built_off_the_loop():
    """python-docx takes tens of milliseconds a page: built on the loop, twenty writers finishing
    at once held up every other round's live text by hundreds of milliseconds."""
    markdown = "# Notes\n\n" + "\n\n".join(f"Paragraph {n}: the work that was done and what comes next."
                                             for n in range(40))
    task = TaskSpec(id="t1", agent="writer", instructions="Write the notes as notes.docx.", inputs=[],
                    outputs=[OutputSpec(name="notes.docx")])
    context = TaskContext(prompt="Write the notes.", language="en", documents={}, predecessors={},
                          model=ScriptedModel(markdown), history=[])
    async with ticker() as ticks:
        result = await run_task(build_registry(entry_points=False), task, context)
    assert [f.name for f in result.files] == ["notes.docx"] and ticks[0] > 0


async def test_a_task_over_a_book_keeps_the_loop_turning():
    book = load_document(BOOK)
    task = TaskSpec(id="t1", agent="data_extractor", instructions="Extract the tables.", inputs=[BOOK])
    context = TaskContext(prompt="Extract the tables.", language="en", documents={BOOK: book}, predecessors={},
                          model=ScriptedModel(), history=[])
    async with ticker() as ticks:
        await run_task(build_registry(entry_points=False), task, context)
    assert ticks[0] > 0


async def test_the_full_text_index_of_a_book_is_built_off_the_loop():
    from agents.knowledge.indexed import build_rows
    from extractors.base import ContentItem

    book = load_document(BOOK)
    items = [ContentItem(sequence_nr=n, name=name, ext="txt", content_type="text/plain", data=text)
             for n, (name, text) in enumerate(book.items, 1)]
    async with ticker() as ticks:
        rows = await build_rows(items)
    first_page = int(book.items[0][0].removeprefix("page "))  # 1 with OCR (the cover has no text layer), else 2
    assert len(rows) > 500 and rows[0]["page"] == first_page and ticks[0] > 0


async def test_ranking_a_books_passages_in_memory_keeps_the_loop_turning():
    from agents.knowledge.retrieval import MemoryRetriever

    book = load_document(BOOK)
    async with ticker() as ticks:
        found = await MemoryRetriever().search("What is the public domain?", [book], 3)
    assert found and found[0].page and ticks[0] > 0


def _fresh_book() -> str:
    """The book's text under a new first line, so no count of it is cached from another test."""
    import uuid

    return f"Copy {uuid.uuid4()}.\n" + load_document(BOOK).text


async def test_the_final_answer_is_fitted_to_its_budget_off_the_loop():
    from agents.base import TaskResult
    from agents.planning.plan import parse_plan
    from agents.planning.review import write_final

    plan = parse_plan(plan_of(2))
    results = {"t1": TaskResult(text=_fresh_book()), "t2": TaskResult(text=_fresh_book())}
    model = ScriptedModel("All done.")  # answers without ever yielding: only the fitting can
    async with ticker() as ticks:
        final = await write_final(RoundInput(prompt="Summarise the book twice.", documents=[]), plan, results, {}, [],
                                  model)
    [request] = model.requests
    sent = request.messages[-1]["content"]
    assert final.text.startswith("All done.") and sent.count(TRUNCATED) == 2 and len(sent) < len(results["t1"].text) // 10
    assert ticks[0] > 0


async def test_a_long_document_is_chunked_for_its_summary_off_the_loop():
    from tests.agents.conftest import text_document

    doc = text_document("book.txt", _fresh_book())
    task = TaskSpec(id="t1", agent="summarizer", instructions="Summarise it.", inputs=[doc.name])
    model = ScriptedModel(*["A part's summary."] * 400)  # answers without ever yielding
    context = TaskContext(prompt="Summarise it.", language="en", documents={doc.name: doc}, predecessors={},
                          model=model, history=[])
    async with ticker() as ticks:
        result = await run_task(build_registry(entry_points=False), task, context)
    purposes = [r.purpose for r in model.requests]
    assert 1 < purposes.count("map") <= MAP_PARTS and purposes[-1] == "reduce" and "A part's summary." in result.text
    assert ticks[0] > 0


async def test_a_long_result_is_cut_for_its_chat_message_off_the_loop():
    from agents.tasks.calls import message_excerpt

    text = _fresh_book()
    async with ticker() as ticks:
        excerpt = await message_excerpt(text)
    assert excerpt.endswith(TRUNCATED) and len(excerpt) < len(text) // 20 and text.startswith(excerpt[:1000])
    assert ticks[0] > 0


async def test_a_long_document_that_fits_is_counted_off_the_loop():
    from agents.builtin.summarizer import summarize_document
    from agents.tasks.calls import Ledger
    from tests.agents.conftest import text_document

    doc = text_document("book.txt", _fresh_book()[:200_000])
    task = TaskSpec(id="t1", agent="summarizer", instructions="Summarise it.", inputs=[doc.name])
    model = ScriptedModel("The summary.")  # answers without ever yielding: only the counting can
    model.context_tokens = 1_000_000  # room for the whole text: one call, no chunks
    context = TaskContext(prompt="Summarise it.", language="en", documents={doc.name: doc}, predecessors={},
                          model=model, history=[])
    async with ticker() as ticks:  # the summary itself, without the runner counting the documents first
        summary = await summarize_document(Ledger(model), task, context, doc, agent="summarizer")
    [request] = model.requests
    assert doc.text in request.messages[-1]["content"] and summary == "The summary."
    assert ticks[0] > 0


async def test_bundling_a_task_s_many_large_outputs_into_a_zip_keeps_the_loop_turning():
    from agents.base import OutputFile
    from agents.tasks.outputs import capped

    text = load_document(BOOK).text.encode()
    files = [OutputFile(f"copy-{i}.txt", "text/plain", text) for i in range(8)]
    async with ticker() as ticks:
        delivered = await capped(files, 2, "t1-more-documents.zip")
    assert [f.name for f in delivered] == ["copy-0.txt", "copy-1.txt", "t1-more-documents.zip"]
    assert ticks[0] > 0
