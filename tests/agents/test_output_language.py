"""The language a task must write in is checked on what a model wrote; a result in another language
is done once more, told which language (a German summary came back as the document's English)."""

from __future__ import annotations

from agents.base import TaskContext, TaskSpec
from agents.model import CallScope
from agents.registry import build_registry
from agents.tasks.run import expected_language, run_task, written_language
from tests.agents.conftest import text_document
from tests.scripted import ScriptedModel

ENGLISH = ("The project is amber. The migration is sixty-eight percent complete and the budget is "
           "mostly spent, while the vendor delayed the licences by three weeks.")
GERMAN = ("Das Projekt ist gelb. Die Migration ist zu achtundsechzig Prozent abgeschlossen und das Budget "
          "ist größtenteils ausgegeben, während der Lieferant die Lizenzen um drei Wochen verzögert hat.")


def _context(model, language="de"):
    doc = text_document("report.txt", ENGLISH * 3)
    return TaskContext(prompt="Fasse den Bericht zusammen.", language=language, documents={doc.name: doc},
                       predecessors={}, model=model)


async def test_a_result_in_the_wrong_language_is_done_once_more_in_the_right_one():
    model = ScriptedModel(ENGLISH, GERMAN)
    task = TaskSpec(id="t1", agent="summarizer", instructions="Fasse report.txt zusammen.")
    result = await run_task(build_registry(entry_points=False), task, _context(model))
    assert written_language(result.text) == "de" and result.meta["languageRedone"]
    assert "languageMismatch" not in result.meta
    assert any("Write your whole answer in German only" in m["content"] for m in model.requests[1].messages)


async def test_a_result_in_the_right_language_is_kept_as_it_is():
    model = ScriptedModel(GERMAN)
    task = TaskSpec(id="t1", agent="summarizer", instructions="Fasse report.txt zusammen.")
    result = await run_task(build_registry(entry_points=False), task, _context(model))
    assert len(model.requests) == 1 and "languageRedone" not in result.meta


async def test_still_wrong_after_the_second_try_its_own_prose_is_translated_and_its_quotes_kept():
    quoted = f"{ENGLISH}\n\n> The licences are three weeks late, says the vendor.\n\n— report.txt [1]"
    draft = _Draft()
    with CallScope.entered(draft=draft):
        model = _StreamingModel(quoted, quoted, GERMAN)
        task = TaskSpec(id="t1", agent="summarizer", instructions="Fasse report.txt zusammen.")
        result = await run_task(build_registry(entry_points=False), task, _context(model))
    assert result.text == f"## Zusammenfassung von report.txt\n\n{GERMAN}\n\n> The licences are three weeks late, says the vendor.\n\n— report.txt [1]"
    assert result.meta["languageTranslated"] and "languageMismatch" not in result.meta
    translation = model.requests[2]
    assert translation.messages[-1]["content"] == ENGLISH and "into German" in translation.messages[0]["content"]
    assert result.usage.calls == 3
    # The draft shows the translation where the English was, and the quote after it.
    assert "vendor delayed" not in draft.shown and GERMAN in draft.shown and "says the vendor" in draft.shown


async def test_still_wrong_after_its_translation_it_is_marked():
    model = ScriptedModel(ENGLISH, ENGLISH, ENGLISH)
    task = TaskSpec(id="t1", agent="summarizer", instructions="Fasse report.txt zusammen.")
    result = await run_task(build_registry(entry_points=False), task, _context(model))
    assert result.meta["languageMismatch"] == "de" and len(model.requests) == 3


def test_the_language_asked_for_in_the_instructions_wins_over_the_users():
    assert expected_language(TaskSpec(id="t", agent="summarizer", instructions="Summarise it in German."),
                             _context(None, "en")) == "de"
    assert expected_language(TaskSpec(id="t", agent="summarizer", instructions="Now translate that to German."),
                             _context(None, "en")) == "de"
    assert expected_language(TaskSpec(id="t", agent="analyst", instructions="What does the German law say?"),
                             _context(None, "en")) == "en"
    assert written_language("> Das ist ein Zitat auf Deutsch, das lang genug wäre, um erkannt zu werden.\n42") == ""


def test_a_text_of_one_word_repeated_tells_no_language():
    assert written_language("I wrote notes.md.\n\n" + " ".join(f"word{n}" for n in range(120)) + ".") == ""


class _Draft:
    """A message's draft as a model call streams into it (`agents.model.TextSink`)."""

    def __init__(self) -> None:
        self.shown = ""

    def text(self, piece: str) -> None:
        self.shown += piece

    def lead(self, text: str) -> None:
        self.shown += text

    def mark(self) -> int:
        return len(self.shown)

    def retract(self, mark: int) -> None:
        self.shown = self.shown[:mark]


class _StreamingModel(ScriptedModel):
    """Writes each answer into the draft as a real model's stream does."""

    async def complete(self, request):
        response = await super().complete(request)
        if (stream := CallScope.current().stream(request)) is not None:
            stream.sink.text(response.text)
        return response


async def test_the_first_try_is_taken_back_from_the_draft_before_the_second_is_written():
    draft = _Draft()
    draft.lead("Summary: ")
    with CallScope.entered(draft=draft):
        model = _StreamingModel(ENGLISH, GERMAN)
        task = TaskSpec(id="t1", agent="summarizer", instructions="Fasse report.txt zusammen.")
        result = await run_task(build_registry(entry_points=False), task, _context(model))
    assert result.meta["languageRedone"]
    assert "vendor" not in draft.shown and "Lieferant" in draft.shown


async def test_consecutive_paragraphs_in_the_wrong_language_are_translated_in_one_call():
    from agents.tasks.restate import restated

    text = f"## Summary\n\n{ENGLISH}\n\n{ENGLISH}\n\n| a | b |\n| - | - |\n\n{ENGLISH}"
    model = ScriptedModel("Erster Teil.", "Zweiter Teil.")
    out, usage, translated = await restated(text, "de", model, "writer")
    assert translated and usage.calls == 2
    assert out == "## Summary\n\nErster Teil.\n\n| a | b |\n| - | - |\n\nZweiter Teil."
    assert model.requests[0].messages[-1]["content"] == f"{ENGLISH}\n\n{ENGLISH}"


async def test_the_instruction_lines_a_model_repeats_at_the_end_of_its_answer_are_not_the_answer():
    from agents.model import ModelRequest
    from agents.tasks.calls import Ledger

    model = ScriptedModel(f"{GERMAN}\n\nWrite your answer in German.", "Plan.\nWrite your answer in German.")
    ledger = Ledger(model)
    assert (await ledger.ask(ModelRequest(purpose="task", messages=[]))).text == GERMAN
    assert (await ledger.ask(ModelRequest(purpose="plan", messages=[]))).text.endswith("in German.")


async def test_a_translation_that_loops_or_runs_on_is_not_taken():
    from agents.tasks.restate import restated

    looped = "\n".join(["Der Preis ist 12 € pro Schüler und die Kasse zahlt die Hälfte."] * 3)
    out, _, translated = await restated(ENGLISH, "de", ScriptedModel(looped), "writer")
    assert out == ENGLISH and not translated
    out, _, _ = await restated(ENGLISH, "de", ScriptedModel(GERMAN + " " + GERMAN * 2), "writer")
    assert out == ENGLISH
