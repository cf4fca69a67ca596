"""What the offline model writes for each kind of request, from the request's hints alone."""

from __future__ import annotations

import re
from typing import Any

from agents.language import asked_sentences, best_passages, detect_language, language_name, summarize
from agents.phrases import say
from agents.requests import (
    AnswerHints,
    Cited,
    ExtractHints,
    FinalHints,
    SummaryHints,
    TaskHints,
    TranslateHints,
    WriteHints,
)
from agents.toolkit.tables import tables_from_text
from agents.toolkit.tokens import count_tokens

SUMMARY_SENTENCES = 5
PASSAGES = 3
MIN_PASSAGE_WORDS = 6
SOURCE_TOKENS = 500  # longer writer material is condensed to its most informative sentences
NONE = "NONE"
_BULLET = re.compile(r"^\s*(?:[-*]|>)\s+")
_PIPE_ROW = re.compile(r"^\|.*\|\s*$", re.M)


def one_line(text: str) -> str:
    """Whitespace collapsed and a leading list marker dropped, so a quote stays one Markdown line."""
    return _BULLET.sub("", " ".join(text.split()))


def _names(hints: TaskHints) -> str:
    return ", ".join(d.name for d in hints.documents)


def _partial_lines(hints: TaskHints) -> str:
    """The map results of a reduce request as paragraphs, markup and NONE answers removed."""
    lines = []
    for partial in hints.partials:
        for line in partial.split("\n"):
            line = _BULLET.sub("", line).strip()
            if line and line != NONE and not line.startswith("_"):
                lines.append(line)
    return "\n\n".join(lines)


def summary(purpose: str, hints: SummaryHints) -> str:
    """The document's most informative sentences, verbatim and in their original order."""
    language = hints.language or "en"
    if purpose == "reduce":
        text = _partial_lines(hints)
    else:
        text = "\n\n".join(d.text or "" for d in hints.documents)
    # The final summary has as many sentences as the request asks for ("in three sentences"); each map call
    # keeps its own, for the reduce to choose among.
    wanted = SUMMARY_SENTENCES if purpose == "map" else asked_sentences(hints.instructions) or SUMMARY_SENTENCES
    sentences = [one_line(s) for s in summarize(text, max_sentences=wanted) if s.strip()]
    if purpose == "map":
        return "\n".join(sentences) or NONE
    if not sentences:
        return say("no_documents", language)
    return "\n\n".join([_extract_note(sentences, language), *(f"> {s}" for s in sentences)])


def _extract_note(sentences: list[str], language: str) -> str:
    """What an extractive summary is, in the reply's language: quoted sentences, and when they are in
    another language than the reply's, which one (the offline model does not translate)."""
    note = say("extractive_note", language)
    written = detect_language(" ".join(sentences), default=language)
    if written != language:
        note += " " + say("extract_language", language, name=language_name(written, language))
    return f"_{note}_"


def passages(question: str, text: str) -> list[str]:
    """The best-matching passages, preferring ones long enough to answer over bare headings."""
    found = [one_line(p) for p in best_passages(question, text, k=PASSAGES * 3) if p.strip()]
    found = [p for p in found if p != NONE]
    full = [p for p in found if len(p.split()) >= MIN_PASSAGE_WORDS]
    return (full or found)[:PASSAGES]


CITED_SHARE = 0.6  # further passages are quoted when they score at least this share of the best


def where(passage: Cited, language: str) -> str:
    """"contract.pdf, page 3" in the reply's language."""
    place = (say("at_page", language, at=passage.page) if passage.page
             else say("at_sheet", language, at=passage.sheet) if passage.sheet
             else passage.section or "")
    return f"{passage.name}, {place}" if place else passage.name


def cited_answer(hints: AnswerHints) -> str:
    """The best passages' key sentences quoted, each with its file and page/sheet/section and [n]."""
    language = hints.language or "en"
    ranked = hints.passages
    best = float(ranked[0].score or 0.0)
    parts = [f"_{say('answer_note', language)}_"]
    absent = list(hints.absent)
    if absent:  # what was asked about is in none of the documents: said first, the nearest passages after
        parts.append(say("not_mentioned", language, words=", ".join(f"«{w}»" for w in absent), docs=_names(hints)))
    elif hints.lacking:  # the question asks for a price, a date or a number, and no passage holds one
        kind = say(f"kind_{hints.lacking}", language)
        parts.append(say("no_fact", language, kind=kind, docs=_names(hints)))
    computed = list(hints.compiled)
    if computed:  # a maximum, minimum or total computed over a table: said, then the rows it comes from
        cited = {int(n) for c in computed for n in re.findall(r"\[(\d+)\]", c)}
        parts.extend(computed)
        parts.extend(f"> {one_line(p.text or '')}\n\n— {where(p, language)} [{p.n}]"
                     for p in ranked if p.n in cited)
        return "\n\n".join(parts)
    if hints.parts:  # a question that asks two things: each part answered, or said not found, in turn
        names = _names(hints)
        by_n = {p.n: p for p in ranked}
        for part in hints.parts:
            parts.append(f"**{part.question}**")
            if part.absent or part.n is None or part.n not in by_n:
                words = ", ".join(f"«{w}»" for w in part.absent)
                parts.append(say("searched_absent", language, docs=", ".join(part.documents) or names, words=words))
            else:
                parts.append(f"> {one_line(part.quote or '')}\n\n— {where(by_n[part.n], language)} "
                             f"[{part.n}]")
        return "\n\n".join(parts)
    quoted: set[str] = set()
    for p in ranked[:PASSAGES]:
        quote = one_line(p.quote or p.text or "")
        if quoted and float(p.score or 0.0) < CITED_SHARE * best:
            break
        if quote in quoted:
            continue
        quoted.add(quote)
        parts.append(f"> {quote}\n\n— {where(p, language)} [{p.n}]")
    unmentioned = list(hints.unmentioned)
    if unmentioned:  # most of the question is answered above; what no document writes is said under it
        names = _names(hints)
        parts.append("_" + say("searched_absent", language, docs=names,
                                words=", ".join(f"«{w}»" for w in unmentioned)) + "_")
    return "\n\n".join(parts)


def answer(purpose: str, hints: AnswerHints) -> str:
    """The passages that best match the question, quoted (with their sources when ranked for it)."""
    language = hints.language or "en"
    question = hints.question or hints.prompt or ""
    if purpose == "task" and hints.passages:
        return cited_answer(hints)
    if purpose == "map":
        text = "\n\n".join(d.text or "" for d in hints.documents)
        return "\n\n".join(passages(question, text)) or NONE
    if purpose == "reduce":
        return "\n\n".join(passages(question, _partial_lines(hints))) or NONE
    parts = [f"_{say('answer_note', language)}_"]
    for doc in hints.documents:
        text = doc.text or ""
        found = passages(question, text) if text.strip() != NONE else []
        if found:
            parts.append(f"**{say('passages_from', language, doc=doc.name)}**")
            parts.extend(f"> {p}" for p in found)
        else:
            parts.append(say("no_passage", language, doc=doc.name))
    if len(parts) == 1:
        parts.append(say("no_documents", language))
    return "\n\n".join(parts)


def translate(hints: TranslateHints) -> str:
    """No translation without a model: one sentence saying so (the translator asks no model offline)."""
    language = hints.language or "en"
    names = _names(hints)
    target = hints.target_language or language
    return say("cannot_translate", language, doc=names, target=target)


def extract(hints: ExtractHints) -> dict[str, Any]:
    """Pipe and tab-separated tables written in the text; prose is never cut into a table."""
    tables = []
    for doc in hints.documents:
        for table in tables_from_text(doc.name, doc.text or "", layout=False):
            tables.append({"name": table.name, "rows": [[str(c) for c in row] for row in table.rows]})
    return {"tables": tables}


def write(hints: WriteHints) -> str:
    """A document compiled from the request and the material, marked as an offline draft."""
    language = hints.language or "en"
    title = hints.title or "Document"
    # The request is not repeated in the document: a report opens with its material, not its brief.
    parts = [f"# {title}", f"_{say('writer_note', language)}_"]
    for source in hints.sources:
        # An earlier step's result brings its own heading ("Summary of a.pdf") and the offline
        # note every offline result carries; the draft says that note once, above.
        lines = [line for line in source.text.splitlines()
                 if not (line.startswith("_") and line.rstrip().endswith("_") and len(line) > 2)]
        text = re.sub(r"\n{3,}", "\n\n", "\n".join(lines)).strip()
        if count_tokens(text) > SOURCE_TOKENS and not _PIPE_ROW.search(text):  # tables are kept whole
            text = "\n".join(f"- {one_line(s)}" for s in summarize(text, max_sentences=8))
        titled = bool(re.match(r"#{1,2} ", text))  # an earlier step's result brings its own heading
        if not titled:
            parts.append(f"## {source.name}")
        parts.append(_demote(text, 2 if titled else 3))
    return "\n\n".join(p for p in parts if p.strip())


def _demote(markdown: str, top: int) -> str:
    """The material's headings shifted so its highest is level `top`: they must not outrank the
    document's own sections (a source is "## name", its sheets and sections "### ...")."""
    levels = [len(m) for m in re.findall(r"^(#{1,6}) ", markdown, flags=re.M)]
    by = max(0, top - min(levels)) if levels else 0
    return re.sub(r"^(#{1,6}) ", lambda m: "#" * min(6, len(m.group(1)) + by) + " ", markdown, flags=re.M)


def final(hints: FinalHints) -> str:
    """The opening of the final message; the delivered/missing checklist is added by the caller."""
    language = hints.language or "en"
    review = hints.review
    total = len(review.done) + len(review.failed) + len(review.skipped)
    done = len(review.done)
    if not total:
        status = say("final_no_steps", language)
    elif done == total and not review.missing:
        status = say("final_all_done", language, n=total)
    else:
        status = say("final_some_missing", language, done=done, n=total)
    # Standing in for a model whose review call failed: the round was planned and worked by that model.
    return f"{say('final_stand_in' if hints.stand_in else 'final_offline', language)} {status}"
