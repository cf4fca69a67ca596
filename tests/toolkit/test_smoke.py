"""Every toolkit signature the agents code against imports and does its basic job."""

from agents.toolkit.files import CSV_MIME, DOCX_MIME, MARKDOWN_MIME, XLSX_MIME, csv_bytes, docx_bytes, markdown_bytes, xlsx_bytes
from agents.toolkit.language import LANGUAGE_NAMES, detect_language
from agents.toolkit.sentences import best_passages, split_sentences, summarize
from agents.toolkit.tables import Table, find_tables, tables_from_text
from agents.toolkit.tokens import TOKENIZER, TOKENS_EXACT, chunk_text, context_size, count_tokens, fit_to_budget


def test_signatures_work_together() -> None:
    text = "Revenue grew by ten percent in 2024. Costs stayed flat. The board approved the plan."
    assert detect_language("Fasse das Dokument zusammen") == "de"
    assert LANGUAGE_NAMES["fr"] == "French"
    assert split_sentences(text)[1] == "Costs stayed flat."
    assert all(s in text for s in summarize(text, 2))
    assert best_passages("How much did revenue grow?", text, k=1)[0].startswith("Revenue grew")
    assert tables_from_text("t", "a\tb\n1\t2") == [Table("t", [["a", "b"], ["1", "2"]])]
    assert find_tables([("page 1", "no table here")]) == []
    assert count_tokens(text) > 0 and TOKENIZER and isinstance(TOKENS_EXACT, bool)
    assert context_size("gpt-4o") >= 128_000
    assert "".join(chunk_text(text, 8)) == text
    assert fit_to_budget([text], 1000) == [text]
    assert csv_bytes([["a"]]).startswith(b"\xef\xbb\xbf")
    assert xlsx_bytes([Table("t", [["1"]])])[:2] == b"PK"
    assert docx_bytes("# Hi")[:2] == b"PK"
    assert markdown_bytes("x") == b"x\n"
    assert {CSV_MIME, XLSX_MIME, DOCX_MIME, MARKDOWN_MIME}
