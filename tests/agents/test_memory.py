"""What a round remembers: history within a budget, references to documents, continuation."""

from __future__ import annotations

import pytest

from agents.base import Plan, TaskSpec
from agents.knowledge.memory import (
    PriorRound,
    PriorTask,
    Turn,
    fit_history,
    history_entries,
    recall_terms,
    render_catalogue,
    reusable,
    round_turns,
)
from agents.language import refers_back, resolve_references, rounds_named, split_sentences, wants_continuation
from agents.toolkit.tokens import count_tokens

LONG = " ".join(f"Sentence number {i} tells the reader about topic {i} in some detail." for i in range(60))


def facts(*docs: tuple[str, int, bool]) -> list[dict]:
    return [{"name": n, "ext": n.rsplit(".", 1)[-1], "size": 2048, "round": r, "new": new,
             "origin": "uploaded", "summary": ""} for n, r, new in docs]


def test_history_keeps_the_newest_round_whole_and_older_rounds_as_whole_sentences():
    rounds = [PriorRound(round=n, request=f"Request {n}: {LONG}", final=f"Final {n}: {LONG}", finished=True)
              for n in (1, 2, 3)]
    turns = history_entries(rounds)
    budget = count_tokens(turns[-1][1]) + count_tokens(turns[-2][1]) + 200
    kept = fit_history(turns, budget)
    assert sum(count_tokens(c) for _, c in kept) <= budget
    assert kept[-1] == turns[-1] and kept[-2] == turns[-2]  # round 3 whole
    older = [c for _, c in kept[:-2]]
    assert older and all(c.startswith("[round ") for c in older)
    originals = " ".join(c for _, c in turns)
    for content in older:  # shortened to whole sentences of the original, never cut mid-sentence
        body = content.split("] ", 1)[1]
        assert body.endswith(".") and all(s in originals for s in split_sentences(body))


@pytest.mark.parametrize("budget", [0, 15, 40, 90, 200, 400, 5000])
def test_stored_short_forms_fit_the_history_exactly_as_shortening_it_again_would(budget):
    rounds = [PriorRound(round=n, request=f"Request {n}: {LONG[: 40 * n]}", answer="On it.",
                         final=f"Final {n}: {LONG[: 300 * n]}", finished=True) for n in (1, 2, 3, 4)]
    turns = [t for r in rounds for t in round_turns(r)]
    assert [(t.role, t.text) for t in turns] == history_entries(rounds)
    assert all(Turn.from_record(t.record()) == t for t in turns)  # as stored, as read back
    assert fit_history(turns, budget) == fit_history(history_entries(rounds), budget)


def test_a_request_names_earlier_rounds_by_number_and_by_its_words():
    assert rounds_named("Translate the summary of round 2 and the answer in Runde 7.") == [2, 7]
    assert rounds_named("What is the second largest city?") == []
    assert set(recall_terms("What did the namespaces section say?")) >= {"namespac"}


def test_an_interrupted_round_says_what_was_delivered_and_how_to_continue():
    prior = PriorRound(round=1, request="Summarize and write a report.", answer="On it.", tasks=[
        PriorTask("t1", "summarizer", "Summarize.", delivered=True, text="- A point."),
        PriorTask("t2", "writer", "Write the report.")])
    text = " ".join(c for _, c in history_entries([prior]))
    assert "t1 summarizer: Summarize. (delivered)" in text and "t2 writer: Write the report. (not delivered)" in text
    assert "stopped before it finished" in text


@pytest.mark.parametrize("prompt", ["continue", "Continue please", "weiter", "Bitte mach weiter",
                                    "continue là où tu t'es arrêté", "go on where you left off"])
def test_continuation_requests(prompt):
    assert wants_continuation(prompt)


@pytest.mark.parametrize("prompt", ["Summarize the document", "What continues after chapter 2?", "Was steht weiter unten?"])
def test_other_requests_are_not_continuations(prompt):
    assert not wants_continuation(prompt)


def test_reuse_needs_the_same_task_of_an_interrupted_round():
    prior = PriorRound(round=1, tasks=[PriorTask("t1", "summarizer", "Summarize.", delivered=True, files=[7]),
                                       PriorTask("t2", "writer", "Write.")])
    plan = Plan(language="en", answer="", tasks=[TaskSpec("t1", "summarizer", "Summarize."),
                                                 TaskSpec("t2", "writer", "Write.", depends_on=["t1"])])
    assert list(reusable(plan, prior)) == ["t1"] and reusable(plan, prior)["t1"].files == [7]
    changed = Plan(language="en", answer="", tasks=[TaskSpec("t1", "summarizer", "Summarize it differently.")])
    assert reusable(changed, prior) == {}
    prior.finished = True
    assert reusable(plan, prior) == {}


def test_references_by_name_word_and_kind():
    docs = facts(("scan.pdf", 2, True), ("Contract_2024.pdf", 1, False), ("budget.xlsx", 1, False),
                 ("stanley-cups.tsv", 1, False))
    assert resolve_references("Summarize stanley-cups.tsv", docs) == ["stanley-cups.tsv"]
    assert resolve_references("What does the contract say about termination?", docs) == ["Contract_2024.pdf"]
    assert resolve_references("Extract the tables of the Excel from before", docs) == ["budget.xlsx"]
    assert resolve_references("Summarize the PDF", docs) == []  # this round's upload is what it is about
    assert resolve_references("Extract the tables and write a report", docs) == []


def test_the_catalogue_names_kind_size_pages_round_and_origin():
    line = render_catalogue([{"name": "book.pdf", "ext": "pdf", "size": 3 << 20, "pages": 352, "round": 1,
                              "origin": "uploaded", "tables": 2, "summary": "A book about culture."}])
    assert line == "- book.pdf (pdf, 3.0 MB, 352 pages, 2 tables, round 1, uploaded): A book about culture."


def test_a_question_that_goes_on_by_a_pronoun_refers_back():
    assert refers_back("And what was it in the same half of 2022?")
    assert refers_back("Und wie hoch war er 2022?") and refers_back("Et en 2022 ?")
    assert not refers_back("Et en quelle année Molière est-il mort ?")  # "en" a preposition, "il" named
    assert not refers_back("Und gibt es eine Tabelle der Umsätze nach Zonen?")  # "es gibt": there is
    assert refers_back("And in Zone NA?") and refers_back("Und 2022?")
    # A question of its own, or a follow-up that names what it asks, does not.
    assert not refers_back("What was it in 2022?") and not refers_back("And which zone had the highest sales?")
    assert not refers_back("Android sales in 2022?") and not refers_back("Etats-Unis: ventes en 2022 ?")
