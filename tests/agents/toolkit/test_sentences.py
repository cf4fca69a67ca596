"""Sentence splitting, extractive summaries and question answering passages on real text."""

import pytest

from agents.language import best_passages, normalize_space, split_sentences, summaries, summarize
from tests import corpus


@pytest.fixture(scope="module")
def french() -> str:
    return corpus.text("sample-french-1.txt", "cp1252")


@pytest.fixture(scope="module")
def paper() -> str:
    return "\n\n".join(corpus.pdf_pages("tracemonkey.pdf"))


def test_abbreviations_and_decimals_do_not_end_sentences() -> None:
    text = "Dr. Smith paid 3.50 dollars, e.g. for coffee at 9 a.m. in the U.S. office. He left. Then?"
    assert split_sentences(text) == [
        "Dr. Smith paid 3.50 dollars, e.g. for coffee at 9 a.m. in the U.S. office.",
        "He left.",
        "Then?",
    ]


def test_german_and_french_abbreviations() -> None:
    text = "Die Zahlen, z.B. der Umsatz, stiegen am 3. Oktober stark. Mme Dupont est arrivée."
    assert split_sentences(text) == [
        "Die Zahlen, z.B. der Umsatz, stiegen am 3. Oktober stark.",
        "Mme Dupont est arrivée.",
    ]


def test_wrapped_pdf_lines_join_and_headings_stand_alone(french: str) -> None:
    sentences = split_sentences(french)
    assert sentences[0] == "JEAN-BAPTISTE POQUELIN MOLIÈRE"
    assert sentences[1] == "NÉ LE 15 JANVIER 1622, MORT LE 17 FÉVRIER 1673"
    # Wrapped over five lines in the file, one sentence here.
    assert any(s.startswith("Non-seulement Despréaux") and s.endswith("génie français.") for s in sentences)
    assert "Les types qu'il a créés ne peuvent mourir." in sentences


def test_list_items_and_cjk_full_stops_break() -> None:
    text = "Steps:\n- open the file\n- read it\n\n是人都生而自由。他们赋有理性和良心！"
    assert split_sentences(text) == ["Steps:", "- open the file", "- read it", "是人都生而自由。", "他们赋有理性和良心！"]


def test_every_sentence_is_found_in_the_text(french: str) -> None:
    flat = normalize_space(french)
    for sentence in split_sentences(french):
        assert sentence in flat


def test_summary_sentences_are_verbatim_informative_and_in_order(french: str) -> None:
    summary = summarize(french, 3)
    flat = normalize_space(french)
    assert len(summary) == 3
    positions = [flat.index(sentence) for sentence in summary]
    assert positions == sorted(positions)
    assert all(len(sentence.split()) >= 8 for sentence in summary)  # no headings or fragments
    assert any("Molière" in sentence for sentence in summary)


def test_summary_of_a_paper_states_its_contribution(paper: str) -> None:
    summary = summarize(paper, 5)
    flat = normalize_space(paper)
    assert len(summary) == 5 and all(sentence in flat for sentence in summary)
    assert any("compilation technique" in sentence for sentence in summary)
    assert len(set(summary)) == 5


def test_summary_of_short_text_returns_what_there_is() -> None:
    text = "The plant opened in 2019 and now employs 120 people. Output doubled last year."
    assert summarize(text, 5) == [
        "The plant opened in 2019 and now employs 120 people.",
        "Output doubled last year.",
    ]
    assert summarize("", 3) == []
    assert summarize(text, 0) == []


def test_summaries_of_several_sizes_are_each_the_summary_of_that_size(paper: str, french: str) -> None:
    # One ranking gives every size (a round's memory keeps two sentences and one of each turn).
    for text in (paper, french, "One short line.", ""):
        assert summaries(text, [5, 2, 1, 0]) == [summarize(text, 5), summarize(text, 2), summarize(text, 1), []]
    two, one = summaries(paper, [2, 1])
    assert len(two) == 2 and set(one) < set(two)


def test_chinese_summary_is_verbatim() -> None:
    text = corpus.path("sample-chinese.txt").read_bytes().decode("big5", errors="strict")
    summary = summarize(text, 2)
    assert len(summary) == 2
    assert all(sentence in normalize_space(text) for sentence in summary)


def test_question_gets_the_passage_that_answers_it(paper: str) -> None:
    passages = best_passages("What speedups were measured?", paper, k=2)
    assert "speedups of 10x" in passages[0]
    assert all(passage in normalize_space(paper) for passage in passages)


def test_french_question_on_french_text(french: str) -> None:
    passages = best_passages("Quelle légende s'est formée autour de Molière ?", french, k=1)
    assert passages and "légende inexacte" in passages[0]


def test_multilingual_text_answers_in_the_question_language() -> None:
    udhr = corpus.text("UDHR_first_article_all.txt")
    assert best_passages("born free and equal in dignity and rights", udhr, k=1) == [
        "All human beings are born free and equal in dignity and rights."
    ]


def test_no_match_gives_no_passage(french: str) -> None:
    assert best_passages("quantum chromodynamics lattice", french) == []
    assert best_passages("", french) == []


def test_k_limits_and_passages_do_not_overlap(paper: str) -> None:
    passages = best_passages("nested trace trees", paper, k=4)
    assert len(passages) == 4
    assert len(set(passages)) == 4
    assert best_passages("nested trace trees", paper, k=1) == passages[:1]


GERMAN_REPORT = """Geschäftsbericht 2023

Der Umsatz des Konzerns stieg im Geschäftsjahr 2023 um 12 Prozent auf 4,2 Mio. Euro. Die Zahl der
Mitarbeiter blieb mit 58 konstant.
Wegen höherer Energiekosten sank die Umsatzrendite auf 6,1 %. Für 2024 erwartet der Vorstand ein
moderates Wachstum.
Das neue Werk in Leipzig wurde im Mai eröffnet und beschäftigt 14 Mitarbeiterinnen und Mitarbeiter.
"""


@pytest.mark.parametrize(
    ("question", "answer"),
    [
        ("Wie hoch war der Umsatz 2023?", "4,2 Mio. Euro"),
        ("Was erwartet der Vorstand für 2024?", "moderates Wachstum"),
        ("Wann wurde das Werk eröffnet?", "im Mai eröffnet"),
    ],
)
def test_german_questions_find_inflected_words(question: str, answer: str) -> None:
    passages = best_passages(question, GERMAN_REPORT, k=1)
    assert passages and answer in passages[0]


def test_running_headers_repeated_on_every_page_are_not_the_summary(paper: str) -> None:
    footer = "TraceMonkey records trace trees of hot loops in the JavaScript virtual machine."
    pages = [f"{footer}\n\n{page}" for page in corpus.pdf_pages("tracemonkey.pdf")]
    summary = summarize("\n\n".join(pages), 5)
    assert footer not in summary
    assert len(summary) == 5


@pytest.mark.parametrize(
    "section",
    ["English", "French", "German, Standard (1996)", "Arabic, Standard", "Hindi", "Japanese",
     "Russian", "Korean", "Chinese, Mandarin (Simplified)", "Greek (monotonic)"],
)
def test_udhr_article_one_has_two_sentences_in_every_script(section: str) -> None:
    blocks = {}
    for block in corpus.text("UDHR_first_article_all.txt").split("\n\n"):
        name, _, body = block.strip().partition("\n")
        blocks[name.strip()] = body
    sentences = split_sentences(blocks[section])
    assert len(sentences) == 2
    assert all(sentence in normalize_space(blocks[section]) for sentence in sentences)


def test_table_rows_are_separate_passages() -> None:
    text = corpus.text("stanley-cups.tsv")
    assert split_sentences(text)[-1] == "Maple Leafs TOR 13"
    question = "How many Stanley Cups did the Maple Leafs win?"
    assert best_passages(question, text, k=1) == ["Maple Leafs TOR 13"]


def test_korean_keeps_its_word_spaces_and_chinese_wraps_join() -> None:
    korean = "모든 인간은 태어날 때부터 자유로우며\n그 존엄과 권리에 있어 동등하다. 인간은 이성과 양심을 부여받았다."
    assert split_sentences(korean)[0] == "모든 인간은 태어날 때부터 자유로우며 그 존엄과 권리에 있어 동등하다."
    chinese = "是人都生而自由，在尊严和\n权利上一律平等。"
    assert split_sentences(chinese) == ["是人都生而自由，在尊严和权利上一律平等。"]


def test_a_german_ordinal_is_no_sentences_end_but_a_number_ending_one_still_is():
    """sentencex ended a sentence at "am 25." before "September, 9 - 12 Uhr.": the answer quoted a training
    "am 25." with no month. In languages that write ordinals with a dot, a number and its dot before a
    word that is no function word go on; before "Das" or "Wir" they end the sentence."""
    text = ("Frank Schulte organisiert eine Schulung am 25. September, 9 - 12 Uhr.\n\n"
            "Die Druckerwartung im 3. Stock ist offen. Wir zählten 25. Das war alles.")
    assert split_sentences(text) == ["Frank Schulte organisiert eine Schulung am 25. September, 9 - 12 Uhr.",
                                     "Die Druckerwartung im 3. Stock ist offen.", "Wir zählten 25.", "Das war alles."]
    assert split_sentences("We counted 25. September was busy.") == ["We counted 25.", "September was busy."]
