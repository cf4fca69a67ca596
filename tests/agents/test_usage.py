"""A model call's usage: summed over calls, and counted by the project's tokenizer for a server that
reports none (`Usage.counted`, what `app.llm.client` records then)."""

from __future__ import annotations

from agents.model import Usage
from agents.toolkit.tokens import count_tokens


def test_a_call_without_reported_usage_is_counted_by_the_tokenizer_with_its_other_fields():
    prompt = "Summarise the quarterly report in three sentences."
    usage = Usage.counted(prompt, "", bytes_sent=120, bytes_received=40, calls=1, seconds=0.5)
    assert usage.prompt_tokens == count_tokens(prompt) > 0 and usage.completion_tokens == 0
    assert (usage.bytes_sent, usage.bytes_received, usage.calls, usage.seconds) == (120, 40, 1, 0.5)
    both = usage + Usage.counted("", "Three sentences.")
    assert both.total_tokens == usage.prompt_tokens + count_tokens("Three sentences.") and both.calls == 1
