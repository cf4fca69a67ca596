"""The analyst agent: answers questions from the best passages of the documents, citing them."""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import replace
from typing import Any

from msgspec import structs

from agents.base import DocumentText, Likeness, Passage, Retriever, TaskContext, TaskResult, TaskSpec
from agents.knowledge.answer_parts import merged, part_hints, search_parts
from agents.knowledge.bylines import with_bylines
from agents.knowledge.compiled import QUOTED, Compiled, compile_answer, statement
from agents.knowledge.coverage import Coverage, absent_names, coverage
from agents.knowledge.evidence import with_evidence
from agents.knowledge.follow_ups import FOLLOWED, follow_up
from agents.knowledge.measures import asked_measures, meanings
from agents.knowledge.memory import previous_requests
from agents.knowledge.passages import is_row, location
from agents.knowledge.retrieval import MemoryRetriever, without_copies
from agents.knowledge.sequence import Following, after_row, first_rows, meant_row, row_labels
from agents.knowledge.sequence import statement as after_statement
from agents.knowledge.titles import titled_last
from agents.language import (
    asked_kind,
    asks_after,
    best_passages,
    compared,
    goes_on,
    holds,
    normalize_space,
    question_parts,
    refers_back,
    wants_continuation,
    without_instructions,
)
from agents.model import ModelRequest, no_draft
from agents.phrases import say
from agents.requests import AnswerHints, AskedPart, Cited
from agents.tasks.calls import Ledger, input_budget, map_reduce, messages, output_budget
from agents.tasks.hints import doc_facts
from agents.tasks.inputs import base_hints, instructions, reminder, task_documents, task_language
from agents.tasks.outputs import TEXT_FORMATS, text_files
from agents.toolkit.cpu import off_loop_if_long, text_size
from agents.toolkit.tokens import count_tokens_off_loop, fit_to_budget, fit_to_budget_off_loop

PASSAGES = 6  # passages sent to the model (the offline model quotes the best of them)
# Passages quoted under an answer that cited none itself: the best one. Quotes are in the document's
# language and must not outweigh the answer (a German answer under three English quotes reads as English).
SOURCES = 1
_MARK = re.compile(r"\[(\d{1,2})\]")


def quote_of(question: str, passage: Passage) -> str:
    """The sentence(s) of a passage that best answer the question: what a citation quotes. When the
    question asks for a kind of fact (a price, a date, a number), the best of the sentences that hold one;
    a table's row whole."""
    if is_row(passage.text):
        return normalize_space(passage.text)  # a table's row is one record: its remedy comes with its problem
    kind = asked_kind(question)
    found = best_passages(question, passage.text, k=3 if kind else 1)
    found = [s for s in found if holds(kind, s)] or found
    return normalize_space(found[0] if found else passage.text)


def passage_hint(number: int, question: str, passage: Passage) -> dict[str, Any]:
    """A passage as request hints carry it (see `agents.tasks.hints`)."""
    return {"n": number, "name": passage.name, "fileId": passage.file_id, "page": passage.page,
            "sheet": passage.sheet, "section": passage.section, "text": passage.text,
            "quote": quote_of(question, passage), "score": passage.score}


def as_cited(hint: Mapping[str, Any]) -> Cited:
    """A passage hint (`passage_hint`) as the model's request carries it."""
    return Cited(n=hint["n"], name=hint["name"], text=hint["text"], quote=hint["quote"], score=hint["score"],
                 page=hint["page"], sheet=hint["sheet"], section=hint["section"])


def asked_part(part: Mapping[str, Any]) -> AskedPart:
    """A part of a two-part question (`agents.knowledge.answer_parts.part_hints`) as the request carries it."""
    return AskedPart(question=part["question"], absent=tuple(part["absent"]), n=part.get("n"),
                     quote=part.get("quote", ""), documents=tuple(part.get("documents", ())))


def _squashed(text: str) -> str:
    return " ".join(text.casefold().split())


def by_kind(question: str, found: list[Passage]) -> tuple[list[Passage], str]:
    """The passages with those that hold the kind of fact the question asks for first (in their order),
    and that kind when none holds one: "Combien coûte la visite ?" over passages without an amount is
    not answered by the one that shares most of its words. ("", the passages as ranked) for a question
    that asks for no particular kind."""
    kind = asked_kind(question)
    if not kind or not found:
        return found, ""
    holding = [p for p in found if holds(kind, p.text)]
    if not holding:
        return found, kind
    return holding + [p for p in found if p not in holding], ""


def citations(text: str, hints: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The passages an answer cites by [n], in order of first mention, as message metadata."""
    by_number = {h["n"]: h for h in hints}
    cited: list[dict[str, Any]] = []
    for number in dict.fromkeys(int(m) for m in _MARK.findall(text)):
        h = by_number.get(number)
        if h is not None:
            entry = {"fileId": h["fileId"], "name": h["name"]}
            entry.update({k: h[k] for k in ("page", "sheet", "section") if h.get(k)})
            entry["quote"] = h["quote"]
            cited.append(entry)
    return cited


def renumber(text: str, hints: list[dict[str, Any]]) -> str:
    """The answer's passage marks renumbered in the order they first appear ([3] then [1] become [1]
    then [2]), and `hints` renumbered alike, so a reader meets [1] first and `metadata.citations`
    lists [1], [2]... in order. Marks that name no passage are left as they are."""
    known = {h["n"] for h in hints}
    order = list(dict.fromkeys(n for n in (int(m) for m in _MARK.findall(text)) if n in known))
    mapping = {old: new for new, old in enumerate(order, 1)}
    if all(old == new for old, new in mapping.items()):
        return text
    rest = iter(n for n in range(len(order) + 1, len(hints) + len(order) + 1))
    for h in sorted(hints, key=lambda h: h["n"]):
        h["n"] = mapping.get(h["n"]) or next(rest)
    hints.sort(key=lambda h: h["n"])
    return _MARK.sub(lambda m: f"[{mapping[int(m.group(1))]}]" if int(m.group(1)) in mapping else m.group(0), text)


def computed_rows(compiled: list[Compiled], docs: list[DocumentText], found: list[Passage]) -> list[Passage]:
    """The rows each computed result comes from, as passages ranked first (in the order of the
    results, each row once), then the passages found that are not one of them."""
    by_name = {d.name: d for d in docs}
    top = max((p.score for p in found), default=1.0)
    rows: list[Passage] = []
    for result in compiled:
        doc = by_name.get(result.document)
        for text in result.rows[:QUOTED]:
            if all(p.text != text for p in rows):
                rows.append(Passage(name=result.document, text=text, score=top, file_id=doc.file_id if doc else None,
                                    **location(result.source)))
    return rows + [p for p in found if all(p.text != r.text for r in rows)]


def computed_statements(compiled: list[Compiled], language: str) -> list[str]:
    """What was computed, each with the marks of its rows (the first passages, in order)."""
    statements, seen = [], []
    for result in compiled:
        marks = []
        for text in result.rows[:QUOTED]:
            if text not in seen:
                seen.append(text)
            marks.append(f"[{seen.index(text) + 1}]")
        statements.append(statement(result, language, "".join(marks)) + ".")
    return statements


async def _with_sources(question: str, found: list[Passage], docs: list[DocumentText],
                        retriever: Retriever) -> list[Passage]:
    """`found`, then the best passages of the user's own documents for the question, when the
    workflow produced documents too: a row it copied to a workbook or CSV can outrank its source
    by the words of the request that made the copy, and `without_copies` then finds the source
    among these to quote in the copy's place. Their score is 0: they stand in for a copy, and do
    not outrank what the question found in the user's documents itself."""
    uploads = [d for d in docs if d.origin != "produced"]
    if not uploads or len(uploads) == len(docs):
        return found
    return found + [replace(p, score=0.0) for p in await retriever.search(question, uploads, PASSAGES)]


async def _compiled(question: str, asked: str, docs: list[DocumentText], retriever: Retriever,
                    size: int) -> list[Compiled]:
    """The question's comparisons computed over the documents' tables (`compile_answer`)."""
    measures = await _measures(question, docs, retriever, size)
    return await off_loop_if_long(size, compile_answer, question, docs, {h: like for h, (like, _) in measures.items()},
                                  asked, {h: phrase for h, (_, phrase) in measures.items()})


async def _measure_before(question: str, asked: str, docs: list[DocumentText], retriever: Retriever, size: int,
                          history: list[tuple[str, str]]) -> tuple[str, list[Compiled]] | None:
    """A comparison that names none of a table's measures ("Und welche Filiale hatte den niedrigsten?"
    after a question on the sales) compares the one an earlier question named: that question joins
    this one (the newest first, FOLLOWED of them); None when
    none of them names one either."""
    ops = compared(question)
    for earlier in previous_requests(history, FOLLOWED):
        # Its words of comparing stay: the measure is the column named next to them ("das größte Quadrat"),
        # not another it names ("welche Zahl"); only this question's operations are kept.
        joined = f"{question} ({earlier})"
        compiled = [c for c in await _compiled(joined, asked, docs, retriever, size) if c.op in ops]
        if compiled and all(c.column for c in compiled):
            return joined, compiled
    return None


async def _measures(question: str, docs: list[DocumentText], retriever: Retriever,
                    size: int) -> dict[str, tuple[float, str]]:
    """The table headings that mean a word of the question in another language ("Sales" for "Umsatz"),
    with the cosine and that word, by the retriever's vectors when it has them
    (`agents.knowledge.measures.meanings`)."""
    if not docs or not isinstance(retriever, Likeness):
        return {}
    phrases, headings = await off_loop_if_long(size, asked_measures, question, docs)
    cosines = await retriever.likeness(phrases, headings) if phrases else None
    return meanings(phrases, headings, cosines) if cosines else {}


async def _after(question: str, earlier: list[str], docs: list[DocumentText], retriever: Retriever,
                 size: int) -> Following | None:
    """The row after the one the question names by its words; else, when it names none and goes on
    ("Und was kam danach?"), after the row the requests before it reached; else after the row its words
    mean in another language ("the second shop opened" over "Zweiter Laden eröffnet"), by the retriever's vectors."""
    if (found := await off_loop_if_long(size, after_row, question, earlier, docs)) or not isinstance(retriever, Likeness):
        return found
    namings, labels = await off_loop_if_long(size, row_labels, [question, *earlier], docs)
    cosines = await retriever.likeness(list(namings.values()), labels) if namings and labels else None
    meant = {r: meant_row(labels, row) for r, row in zip(namings, cosines or [], strict=False)}
    return await off_loop_if_long(size, after_row, question, earlier, docs, meant) if any(meant.values()) else None


class Analyst:
    """Answers a question from the documents, citing the passages it relies on."""

    name = "analyst"
    formats = TEXT_FORMATS  # what it delivers, for the planner (agents.registry.Registry.formats)
    description = (
        "Answers questions about the given documents and analyses them (facts, comparisons, "
        "figures), quoting and citing the passages it relies on (file and page, sheet or "
        "section). Put the question in the instructions."
    )

    async def run(self, task: TaskSpec, context: TaskContext) -> TaskResult:
        ledger = Ledger(context.model)
        docs = task_documents(task, context)
        question = task.instructions.strip() or context.prompt
        # What the user asked, to judge "not found" by: the request, or the task's question when it is the
        # user's own words for one piece of a request of several ("Summarise the slides and tell me what the
        # Word document says ..."): the other pieces' words ("Summarise", "slides") are not asked of these documents.
        said = question if _squashed(question) in _squashed(context.prompt) else context.prompt
        retriever = context.retriever or MemoryRetriever()
        found = await retriever.search(question, docs, PASSAGES) if docs else []
        asked = question
        # "continue" after a finished answer goes on with what the request before it asked about.
        if docs and (not found or refers_back(question) or wants_continuation(question)):
            question, found = await follow_up(question, found, docs, context.history, retriever, PASSAGES)
        found = titled_last(question, without_copies(await _with_sources(question, found, docs, retriever), docs, PASSAGES), docs)
        found = with_bylines(question, found, docs)  # "Who wrote it?": each document's byline first
        size = sum(text_size(d.items) for d in docs)
        # A name the user asked about that no document writes ("the Canadiens" over a table of other teams):
        # not found, whatever the rows share with the rest of the question; nothing is computed over them.
        missing = await off_loop_if_long(size, absent_names, without_instructions(asked), docs,
                                         without_instructions(said)) if docs else ()
        # "Which depot had the lowest rate?": computed over the table, its rows quoted first.
        compiled = [] if missing else await _compiled(question, asked, docs, retriever, size)
        # A comparison that goes on from the question before and names no measure ("Und welche Zone hatte den
        # niedrigsten?" after one on the sales): the measure an earlier question named.
        if not missing and not any(c.column for c in compiled) and goes_on(question) and compared(question):
            question, compiled = await _measure_before(question, asked, docs, retriever, size,
                                                       context.history) or (question, compiled)
        found = computed_rows(compiled, docs, found)
        # "What came after the move to Hall 2?": the row after the one it names, in its ordered table.
        after = (await _after(asked, previous_requests(context.history, FOLLOWED), docs, retriever, size)
                 if docs and not compiled and asks_after(asked) else None)
        found = first_rows(after, found, docs) if after else found
        # "How much ..., and who ...?": each part searched and judged on its own.
        asks = question_parts(question) if docs and not compiled and not after and question == asked else [question]
        parts = await search_parts(asks, docs, retriever, PASSAGES) if len(asks) > 1 else []
        if parts:
            found = merged(parts, PASSAGES) or found
        if not found and missing:  # nothing shares a word with it, and what it names is in no document
            text = say("searched_absent", task_language(task, context), docs=", ".join(dict.fromkeys(d.name for d in docs)),
                       words=", ".join(f"«{w}»" for w in missing))
            return TaskResult(text=text, files=await text_files(task, text), usage=ledger.usage,
                              model=ledger.model_name, offline=ledger.offline, meta={"retrieval": "keyword"})
        if not found:
            text = await self._from_documents(ledger, task, context, docs, question)
            # Nothing found: no file had vectors yet (they always find something) and no passage
            # shares a word with the question.
            return TaskResult(text=text, files=await text_files(task, text), usage=ledger.usage,
                              model=ledger.model_name, offline=ledger.offline,
                              meta={"retrieval": "keyword"} if docs else {})
        found, lacking = by_kind(question, found) if not compiled else (found, "")
        budget = input_budget(context.model, self.name)
        fitted = fit_to_budget([p.text for p in found], budget)
        passages = [passage_hint(n, question, p) for n, p in enumerate(found, 1)]
        for hint, text in zip(passages, fitted, strict=True):
            hint["text"] = text
        sources = "\n\n".join(f"[{h['n']}] {p.where()}:\n{h['text']}" for h, p in zip(passages, found, strict=True))
        language = task_language(task, context)
        system = instructions(self.name, language,
                              "Answer the question from the numbered passages only, in one to three sentences. "
                              "Copy names and figures exactly as the passage writes them, and put the passage's "
                              "number after what you take from it, like [2]. Say that the documents do not tell "
                              "only when no passage answers.")
        # What the question asks about may be in none of the documents: then that is the answer. A
        # follow-up that leans on an earlier question ("weiter?") is not judged again on that one's words.
        # A question of two parts is judged part by part: a name one part asks about is said for that part.
        covered = (Coverage() if parts else Coverage(share=0.0, absent=missing) if missing
                   else Coverage() if question != asked or after or any(c.column for c in compiled)
                   else await off_loop_if_long(size, coverage, question, docs, [p.text for p in found], said))
        absent, unmentioned = covered.unanswered, covered.unmentioned
        if absent or unmentioned:  # "the highest revenue" of a table with none: not found, not "which column?"
            compiled = [c for c in compiled if c.column]
        if absent:
            system += (f" The documents never mention {', '.join(absent)}: unless a passage answers anyway, say "
                       "that the documents do not tell, naming what was searched.")
        elif lacking:
            system += (f" No passage gives {'an' if lacking[0] in 'aeiou' else 'a'} {lacking}: unless one answers anyway, "
                       "say that the documents give no "
                       f"{lacking} for this, naming what was searched.")
        asked_parts = part_hints(parts, found, passages, quote_of) if parts else []
        if asked_parts:
            system += (f" The question asks {len(asked_parts)} things: answer each in turn, citing its passage"
                       + "".join(f"; the documents never mention {', '.join(p['absent'])}: say so for that part"
                                 for p in asked_parts if p["absent"]) + ".")
        computed = computed_statements(compiled, language) + ([after_statement(after, language)] if after else [])
        if computed:
            system += (" Computed over the table (this is the answer; do not scan the table yourself): "
                       + " ".join(computed))
        request = ModelRequest(
            purpose="task",
            # The question after the passages and the language last: what a small model reads last, it follows.
            messages=messages(system, f"Passages:\n\n{sources}\n\nQuestion: {question}{reminder(language)}"),
            agent=self.name,
            hints=AnswerHints(**base_hints(task, context, self.name), question=question,
                              passages=tuple(as_cited(h) for h in passages),
                              documents=tuple(doc_facts(d) for d in docs), absent=tuple(absent),
                              unmentioned=tuple(unmentioned), lacking=lacking, compiled=tuple(computed),
                              parts=tuple(asked_part(p) for p in asked_parts)),
            max_tokens=output_budget(context.model, self.name),
        )
        text = (await ledger.ask(request)).text
        if not context.model.extractive:  # an extractive model quotes its passages itself
            text = with_evidence(text, passages, [p.where() for p in found], language, SOURCES)
            if absent or unmentioned:  # what was searched and is nowhere, whatever the model made of it
                names = ", ".join(dict.fromkeys(d.name for d in docs))
                text += "\n\n_" + say("searched_absent", language, docs=names,
                                       words=", ".join(f"«{w}»" for w in absent or unmentioned)) + "_"
            for part in asked_parts:  # a part the documents do not hold, whatever the model made of it
                if part["absent"]:
                    searched = part.get("documents") or [d.name for d in docs]
                    text += "\n\n_" + say("searched_absent", language, docs=", ".join(dict.fromkeys(searched)),
                                           words=", ".join(f"«{w}»" for w in part["absent"])) + "_"
        text = renumber(text, passages)
        cited = citations(text, passages)
        # "hybrid": keyword and vector search fused; "keyword": BM25 alone (the files' vectors are
        # still being made, or embeddings are off).
        method = "hybrid" if any(p.method == "hybrid" for p in found) else "keyword"
        return TaskResult(text=text, files=await text_files(task, text), usage=ledger.usage, model=ledger.model_name,
                          offline=ledger.offline, meta={"citations": cited, "retrieval": method})

    async def _from_documents(self, ledger: Ledger, task: TaskSpec, context: TaskContext,
                              docs: list[DocumentText], question: str) -> str:
        """No passage shares a word with the question: the whole documents (condensed when long)."""
        hints = AnswerHints(**base_hints(task, context, self.name), question=question)
        budget = input_budget(context.model, self.name)
        per_doc = budget // max(1, len(docs))
        material = []
        for doc in docs:
            text = doc.text
            if await count_tokens_off_loop(text) > per_doc:
                # Keep only what bears on the question, so every document fits the final call.
                with no_draft():  # material for the answer, not the answer
                    text = await map_reduce(
                        ledger, agent=self.name, text=text, budget=budget,
                        map_system=f"Quote verbatim the passages of this part that help answer: "
                                   f"{question}\nAnswer NONE if there are none.",
                        reduce_system=f"Merge these quoted passages, keeping those that help answer: "
                                      f"{question}",
                        hints=hints, doc=doc_facts(doc),
                    )
            material.append(doc_facts(doc, text=text))
        # Condensed documents can still add up to more than one request holds.
        fitted = await fit_to_budget_off_loop([m.text or "" for m in material], budget)
        material = [structs.replace(m, text=text) for m, text in zip(material, fitted, strict=True)]
        sources = "\n\n".join(f"Document {m.name}:\n\n{m.text}" for m in material)
        language = task_language(task, context)
        system = instructions(self.name, language, "Answer from the documents only, quote the passages you rely "
                              "on, and say so when the documents do not tell.")
        request = ModelRequest(
            purpose="task",
            messages=messages(system, f"{sources or 'No documents.'}\n\nQuestion: {question}"
                                      f"{reminder(language)}"),
            agent=self.name,
            hints=structs.replace(hints, documents=tuple(material)),
            max_tokens=output_budget(context.model, self.name),
        )
        return (await ledger.ask(request)).text
