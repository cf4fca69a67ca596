"""Token counts from a shipped vocabulary, context sizes, chunking and budgets."""

import pytest

from agents.language import split_sentences
from agents.toolkit import tokens
from agents.toolkit.tokens import TRUNCATED, chunk_text, context_size, count_tokens, fit_to_budget
from tests import corpus


@pytest.fixture(scope="module")
def french() -> str:
    return corpus.text("sample-french-1.txt", "cp1252")


def test_counts_are_exact_o200k_offline() -> None:
    assert tokens.TOKENS_EXACT is True
    assert "o200k" in tokens.TOKENIZER
    # Reference values of OpenAI's o200k_base encoding.
    assert count_tokens("hello world") == 2
    assert count_tokens("Fasse das Dokument zusammen") == 5


def test_counts_are_stable_and_nonzero(french: str) -> None:
    first = count_tokens(french)
    assert first > 0 and count_tokens(french) == first
    assert count_tokens("") == 0
    assert count_tokens("是人都生而自由") > 0


@pytest.mark.parametrize(
    ("model", "size"),
    [
        ("gpt-4o", 128_000),
        ("openai/gpt-4o-mini", 128_000),
        ("gpt-4.1-nano", 1_047_576),
        ("gpt-5-mini", 400_000),
        ("gpt-3.5-turbo", 16_385),
        ("meta-llama/Meta-Llama-3-8B-Instruct", 8_192),
        ("llama3.1:8b", 131_072),
        ("Qwen/Qwen2.5-7B-Instruct", 32_768),
        ("mistral-7b-instruct-v0.3", 32_768),
        ("HuggingFaceTB/SmolLM2-360M-Instruct", 8_192),
        ("smollm2-1.7b-instruct-q4_k_m.gguf", 8_192),
        ("some-unknown-model", 8_192),
    ],
)
def test_context_sizes(model: str, size: int) -> None:
    assert context_size(model) == size


@pytest.mark.parametrize("max_tokens", [20, 64, 300])
def test_chunks_fit_and_cover_the_whole_text(french: str, max_tokens: int) -> None:
    chunks = chunk_text(french, max_tokens)
    assert "".join(chunks) == french
    assert all(0 < count_tokens(chunk) <= max_tokens for chunk in chunks)
    assert len(chunks) >= count_tokens(french) // max_tokens


def test_chunks_end_on_sentence_or_paragraph_boundaries(french: str) -> None:
    chunks = chunk_text(french, 120)
    # Each cut falls after a paragraph (the chunk ends in a newline) or after a sentence.
    assert all(chunk.endswith("\n") or chunk.rstrip()[-1] in ".!?»" for chunk in chunks[:-1])


def test_overlapping_chunks_fit_cover_and_repeat_context(french: str) -> None:
    chunks = chunk_text(french, 100, overlap_tokens=30)
    assert all(count_tokens(chunk) <= 100 for chunk in chunks)
    joined = "\n".join(chunks)
    for sentence in split_sentences(french):
        assert sentence.split()[0] in joined
    assert chunks[0].startswith("JEAN-BAPTISTE") and french.rstrip().endswith(chunks[-1].rstrip())
    assert any(chunks[i][-40:].strip() in chunks[i + 1] for i in range(len(chunks) - 1))


def test_text_without_boundaries_is_still_cut_to_size() -> None:
    text = "x" * 3000 + " " + "是人都生而自由" * 200
    chunks = chunk_text(text, 50)
    assert "".join(chunks) == text
    assert all(count_tokens(chunk) <= 50 for chunk in chunks)
    assert chunk_text("", 10) == []
    with pytest.raises(ValueError):
        chunk_text("abc", 0)


def test_fit_to_budget_cuts_long_tails_and_keeps_short_texts(french: str) -> None:
    texts = [french, "A short note.", french[:2000]]
    fitted = fit_to_budget(texts, 400)
    assert sum(count_tokens(text) for text in fitted) <= 400
    assert fitted[1] == "A short note."
    assert fitted[0].endswith(TRUNCATED) and fitted[2].endswith(TRUNCATED)
    assert fitted[0].removesuffix(TRUNCATED).rstrip() in french
    assert abs(count_tokens(fitted[0]) - count_tokens(fitted[2])) <= 10  # a fair share each


def test_fit_to_budget_leaves_fitting_texts_alone(french: str) -> None:
    assert fit_to_budget(["a", "b c"], 100) == ["a", "b c"]
    assert fit_to_budget([french], 3) in (["[… truncated]"], [""])
    assert sum(count_tokens(t) for t in fit_to_budget([french] * 3, 2)) <= 2


def test_sheet_text_is_cut_between_rows() -> None:
    sheet = "".join(f"{n},Customer {n},{n * 3}.50\n" for n in range(2000))
    chunks = chunk_text(sheet, 500)
    assert "".join(chunks) == sheet
    assert all(chunk.endswith("\n") and count_tokens(chunk) <= 500 for chunk in chunks)


def test_cutting_a_conversations_catalogue_again_tokenizes_nothing_again(monkeypatch: pytest.MonkeyPatch,
                                                                         french: str) -> None:
    # Late in a long conversation every round cuts the catalogue lines of the same ~49 documents to their
    # share, trying hundreds of heads: the next round finds every count it needs already known.
    sentences = [s for s in split_sentences(french) if len(s) > 40]
    lines = [f"begins \"{sentences[n % len(sentences)]}\"; the analyst's answer in round {n}: "
             f"{sentences[(n + 1) % len(sentences)]}" for n in range(49)]
    first = fit_to_budget(lines, 49 * 20)
    assert first != lines  # cut
    counted: list[str] = []
    count = tokens._count
    monkeypatch.setattr(tokens, "_count", lambda text: counted.append(text) or count(text))
    assert fit_to_budget(lines, 49 * 20) == first
    assert counted == []
