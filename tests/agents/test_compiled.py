"""Superlatives, comparisons and totals over tables are computed (agents/knowledge/compiled.py), quoted and said
which is which, in en/de/fr, on tables written for this test; a real model is given the computed rows."""

from __future__ import annotations

from agents.base import DocumentText, TaskContext, TaskSpec
from agents.builtin.analyst import Analyst
from agents.knowledge.compiled import compile_answer
from agents.language import MAX, MIN, SUM, compared, detect_language
from agents.offline import OfflineModel
from extractors import extract
from tests.agents.conftest import text_document
from tests.scripted import ScriptedModel

DEPOTS = (
    "depot,region,deliveries,on_time_rate_pct\n"
    "Northfield,North,1240,91.5\n"
    "Eastgate,East,980,87.2\n"
    "Southmoor,South,1510,94.8\n"
    "Westbrook,West,760,82.9\n")
# A ledger: several rows per month, so a month's total is a sum per label before the maximum.
LEDGER = (
    "month,year,item,amount_eur\n"
    "January,2024,paper,120.50\n"
    "January,2024,toner,310.00\n"
    "February,2024,paper,95.00\n"
    "March,2024,chairs,1280.00\n"
    "March,2024,paper,60.00\n"
    "January,2023,chairs,2200.00\n"
    "February,2023,paper,40.00\n")
PREISE_DE = (
    "# Preisliste Hofladen\n\n"
    "| Artikel | Einheit | Preis (€) |\n"
    "| --- | --- | --- |\n"
    "| Honig | Glas | 7,50 |\n"
    "| Bergkäse | kg | 24,90 |\n"
    "| Eier | 10 Stück | 3,80 |\n"
    "| Apfelsaft | Liter | 2,60 |\n")
RECOLTE_FR = (
    "parcelle;culture;année;rendement_q_ha\n"
    "P1;blé;2023;71\n"
    "P2;orge;2023;64\n"
    "P3;colza;2023;38\n"
    "P1;blé;2024;66\n"
    "P2;orge;2024;69\n"
    "P3;colza;2024;35\n")


def table_document(name: str, text: str) -> DocumentText:
    data = text.encode()
    found = extract(data, name)
    return DocumentText.of(name, name.rsplit(".", 1)[-1], found.mime, len(data), found.items)


def test_the_operations_a_question_asks_for_in_three_languages():
    assert compared("Which month had the highest total in 2024, which the lowest?") == [MAX, MIN]
    assert compared("Welcher Artikel ist am teuersten?") == [MAX]
    assert compared("Quelle culture a le rendement le plus bas en 2024 ?") == [MIN]
    assert compared("Quelle est la culture la plus productive ?") == [MAX]
    assert compared("How much was spent in total in 2024?") == [SUM]
    assert compared("When is the meeting?") == []


def test_the_lowest_rate_is_the_row_that_holds_it_not_the_one_sharing_words():
    doc = table_document("depots.csv", DEPOTS)
    [found] = compile_answer("Which depot had the lowest on-time rate?", [doc])
    assert (found.op, found.label, found.value, found.column) == (MIN, "Westbrook", 82.9, "on_time_rate_pct")
    assert "Westbrook" in found.rows[0]


def test_a_superlative_that_names_nothing_of_the_table_is_no_table_question():
    doc = table_document("depots.csv", DEPOTS)
    assert compile_answer("What is the most important finding of the audit?", [doc]) == []
    assert compile_answer("Quelle est la meilleure solution ?", [doc]) == []


def test_a_ledger_is_summed_per_month_and_the_year_keeps_its_rows():
    doc = table_document("ledger.csv", LEDGER)
    high, low = compile_answer("Which month had the highest total amount in 2024, which the lowest?", [doc])
    assert (high.label, high.value, len(high.rows)) == ("March", 1340.0, 2)
    assert (low.label, low.value) == ("February", 95.0)
    [total] = compile_answer("What was the total amount in 2023?", [doc])
    assert (total.op, total.value, total.count) == (SUM, 2240.0, 2)


async def test_the_offline_answer_says_which_is_which_and_quotes_the_rows_en_de_fr():
    cases = [
        (table_document("ledger.csv", LEDGER), "Which month had the highest total amount in 2024, which the lowest?",
         ["Highest amount_eur: March, 1,340", "Lowest amount_eur: February, 95", "> month: March; year: 2024"]),
        (text_document("preise.md", PREISE_DE), "Welcher Artikel ist am teuersten?",
         ["Höchster Wert von «Preis (€)»: Bergkäse, 24,9", "> Artikel: Bergkäse"]),
        (table_document("recolte.csv", RECOLTE_FR), "Quelle culture a le rendement le plus bas en 2024 ?",
         ["Valeur la plus basse de « rendement_q_ha » : colza, 35", "> parcelle: P3; culture: colza; année: 2024"]),
    ]
    for doc, question, expected in cases:
        text = await _ask(question, doc, OfflineModel())
        for part in expected:
            assert part in text, (question, text)
        assert "Not found" not in text and "Nicht gefunden" not in text and "Introuvable" not in text


async def test_a_real_model_is_given_the_computed_rows():
    doc = table_document("depots.csv", DEPOTS)
    model = ScriptedModel("Westbrook had the lowest on-time rate, 82.9 [1].")
    await _ask("Which depot had the lowest on-time rate?", doc, model)
    sent = model.requests[0].messages
    prompt = "\n".join(m["content"] for m in sent)
    assert "Computed over the table" in prompt and "Lowest on_time_rate_pct: Westbrook, 82.9 [1]" in prompt
    assert "[1] depots.csv" in prompt and "depot: Westbrook" in prompt


async def _ask(question: str, doc: DocumentText, model) -> str:
    result = await Analyst().run(TaskSpec(id="t1", agent="analyst", instructions=question),
                                 TaskContext(prompt=question, language=detect_language(question),
                                             documents={doc.name: doc}, predecessors={}, model=model))
    return result.text
