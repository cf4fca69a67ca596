"""A result still in another language than asked after its redo, its own prose translated by the model.

Qwen2.5 0.5B, told twice to answer a French question in French, wrote its answer over an English
report in English both times: what it reads last is the passages, and it goes on in their language.
Asked for nothing but a translation of its own few sentences, the same model writes French. Only
what the agent wrote itself is translated: the quoted passages, their source lines, tables and code
stay as the documents have them (they are evidence, in the documents' language).
"""

from __future__ import annotations

from agents.language import detect_language
from agents.model import Model, ModelRequest, Usage, lead
from agents.requests import TranslateHints
from agents.tasks.calls import Ledger, input_budget, messages, output_budget
from agents.tasks.inputs import instructions, language_name
from agents.toolkit.tokens import count_tokens

CALLS = 6  # translation calls at most: a longer result keeps the rest as written
RUN_TOKENS = 300  # text of one call at most: a 0.5B model asked for more loops, repeating a section
_KEPT = (">", "|", "```", "—", "    ")
_MIN_WORDS = 4  # fewer words are a label or a name, in no language to speak of


def _translatable(paragraph: str, target: str) -> bool:
    lines = [line for line in paragraph.splitlines() if line.strip()]
    if not lines or any(line.lstrip().startswith(_KEPT) for line in lines) or len(paragraph.split()) < _MIN_WORDS:
        return False
    return detect_language(paragraph, default=target) != target


def _runs(text: str, target: str, budget: int) -> list[tuple[str, bool]]:
    """The text's paragraphs as runs to translate (consecutive paragraphs in another language, up to
    `budget` tokens together) and runs to keep, in order."""
    runs: list[tuple[str, bool]] = []
    for paragraph in text.split("\n\n"):
        wrong = _translatable(paragraph, target)
        if runs and runs[-1][1] == wrong and (not wrong or count_tokens(runs[-1][0] + paragraph) <= budget):
            runs[-1] = (f"{runs[-1][0]}\n\n{paragraph}", wrong)
        else:
            runs.append((paragraph, wrong))
    return runs


def _kept_or(source: str, translation: str) -> str:
    """The translation, unless it is none: empty, far longer than its source, or saying a line twice
    that the source says once (a small model that loops); then the source as it was."""
    if not translation or _repeats(translation) > _repeats(source) or len(translation) > 2 * len(source) + 80:
        return source
    return translation


def _repeats(text: str) -> int:
    """How many of the text's lines (of a few words at least) say again what a line above said."""
    lines = [line.strip() for line in text.splitlines() if len(line.split()) >= _MIN_WORDS]
    return len(lines) - len(set(lines))


async def restated(text: str, target: str, model: Model, agent: str) -> tuple[str, Usage, bool]:
    """`text` with its own prose that is not in `target` translated into it (consecutive paragraphs in
    one call, at most CALLS calls), the usage of those calls, and whether a translation was taken."""
    ledger = Ledger(model)
    system = instructions(agent, target, f"Translate the user's text into {language_name(target)}. Keep "
                                         "names, figures, [n] marks and Markdown; output only the translation.")
    budget = min(input_budget(model, agent), output_budget(model, agent), RUN_TOKENS)
    out: list[str] = []
    calls, taken = 0, False
    for run, wrong in _runs(text, target, budget):
        if wrong and calls < CALLS:
            calls += 1
            lead("\n\n" if out else "")
            request = ModelRequest(purpose="task", messages=messages(system, run), agent=agent,
                                   hints=TranslateHints(target_language=target),
                                   max_tokens=output_budget(model, agent))
            translation = _kept_or(run, (await ledger.ask(request)).text.strip())
            taken, run = taken or translation != run, translation
        else:
            lead(("\n\n" if out else "") + run)
        out.append(run)
    return "\n\n".join(out), ledger.usage, taken
