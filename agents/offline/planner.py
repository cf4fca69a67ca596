"""Offline planning: the request's intent from keywords (en/de/fr) mapped onto the registry."""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

from agents.memory import resolve_references, wants_continuation
from agents.outputs import stem_of
from agents.phrases import language_label, say, target_language

_INDIRECT = (
    r"\b(?:tell|show) me,? (?:what|which|who|when|where|why|how|whether|if)\b|\btell me the\b"
    r"|\b(?:sag|sage|sagt|sagen sie|zeig|zeige|zeigen sie) mir,? (?:was|wer|wann|wo|welche\w*|warum|wieso|wie|ob)\b"
    r"|\b(?:sag|sage|sagt|sagen sie|nenn|nenne|nennen sie) mir,? (?:den|die|das)\b"
    r"|\b(?:dis|dites|montre|montrez)[- ]moi,? (?:ce qu|quel\w*|qui|quand|où|pourquoi|comment|combien|si)"
    r"|\b(?:dis|dites)[- ]moi,? (?:le|la|les)\b"
)
# A question asked outright: an interrogative first, or a preposition and one ("In which ...",
# "Mit welchem ...", "Dans quel ...", "Womit ...").
_DIRECT = [
    r"^\s*(?:what|who|whom|whose|when|where|which|why|how|explain|compare)\b",
    r"^\s*(?:in|from|for|by|with|at|on|to|of|since|until) (?:what|which|whom|whose|when|where)\b",
    r"^\s*(?:was|wer|wem|wen|wessen|wann|wo|welche\w*|warum|wieso|weshalb|wie|erkläre?|vergleiche?|gibt es)\b",
    r"^\s*(?:in|aus|von|mit|für|bei|an|auf|zu|nach|seit|bis|um|über|unter) (?:was|wem|wen|wann|welche\w*)\b",
    r"^\s*wo(?:r?an|r?auf|r?aus|bei|durch|für|mit|nach|r?in|r?über|von|zu)\b",
    r"^\s*(?:quel(?:le)?s?|qui|quand|où|pourquoi|comment|combien|explique\w*|compare\w*)\b",
    r"^\s*(?:dans|de|d'|pour|par|avec|en|à|sur|chez|depuis|jusqu'à) ?(?:quel(?:le)?s?|qui|quoi|lequel|laquelle"
    r"|lesquel(?:le)?s|où|quand)\b",
]
# Asking for a file of the tables: a verb of extraction or delivery, or a format to deliver in.
# Without one, a question's "the table" or "the CSV file" names where the answer is.
_TABLE_OUTPUT = re.compile(
    r"\bextra(?:ct|hier|i)|\bexport|\bconvert|\bkonvertier|\bumwandel|\bwandle|\bspeicher|\bsave\b"
    r"|\b(?:give|send|make|create|build|produce|put)\b|\b(?:gib|schick\w*|erstell\w*|mach\w*)\b"
    r"|\b(?:donne|envoie|crée|créez|fais|faites|mets|mettez)\b"
    r"|\b(?:as|into|als|en|comme|in)(?: an?| ein\w*| une?)? (?:excel|csv|xlsx?|workbook|spreadsheet|tabellenkalkulation"
    r"|arbeitsmappe|classeur|feuille de calcul)\b"
)
# (intent, agent, patterns) in the order the tasks run; patterns match the lowercased prompt.
INTENTS: list[tuple[str, str, list[str]]] = [
    ("extract", "data_extractor", [
        r"\btab(?:le|elle|leau)", r"\bcsv\b", r"\bexcel\b", r"\bxlsx?\b", r"spreadsheet",
        r"\bfigures\b", r"\bzahlen\b", r"\bchiffres\b", r"\bdonnées\b", r"\bdaten\b", r"\bdata\b",
        r"kalkulationstabelle", r"\bfeuille de calcul",
    ]),
    ("summary", "summarizer", [
        r"summar", r"zusammenfass", r"\bfass\w*\b.*\bzusammen\b", r"résum", r"\bresum",
        r"synthès", r"overview", r"überblick", r"\bgist\b", r"\btl;?dr\b", r"\bkey points\b",
        r"kernpunkte", r"points clés",
    ]),
    ("translate", "translator", [r"translat", r"übersetz", r"tradui", r"traduction"]),
    ("answer", "analyst", [
        *_DIRECT,
        r"analy[sz]", r"\bfind\b", r"\bfinde\b", r"\btrouve\w*\b",
        # An indirect question anywhere: "... and tell me what ...", "sag mir, was ...", "dis-moi ce que ...".
        _INDIRECT,
    ]),
    # A report is asked for with a verb or an indefinite article; "summarise the report" is not.
    ("write", "writer", [
        r"\b(?:write|draft|compose)\b",
        r"\ban? (?:report|memo|letter|article|brief(?:ing)?)\b",
        # A format asked for ("as a Word document", "als DOCX"), not a document referred to
        # ("the comment in the Word document", "im Word-Dokument").
        r"\b(?:as|in|into|als|en|comme)(?: an?| ein\w*| une?)? (?:word[- ]?(?:dok|doc)\w*|docx|document word)\b",
        r"schreib", r"verfass", r"\bentw(?:irf|erfen)",
        r"\beine?n? (?:bericht|memo|brief|artikel)\b", r"rédig", r"écri[sr]",
        r"\bune? (?:rapport|mémo|lettre|article)\b",
    ]),
]
# A yes/no question or a polite request ("Can you ...?", "Kannst du mir ... geben?", "Peux-tu
# ...?") asks a question only when it asks for nothing else: then it is a command.
_WEAK_QUESTION = [
    r"\?", r"^\s*(?:is|are|does|do|did|can|could|would|will)\b",
    r"^\s*(?:ist|sind|hat|haben|kannst|können|könnten|könntest|würdest|würden)\b",
    r"^\s*(?:est-ce|peux|pouvez|pourrais|pourriez|voudrais|voulez)\b",
]


def _any_of(patterns: list[str]) -> re.Pattern[str]:
    """One pattern that matches where any of `patterns` does: a single scan of the prompt, not one per pattern."""
    return re.compile("|".join(f"(?:{p})" for p in patterns))


_INTENT_PATTERNS = [(intent, _any_of(patterns)) for intent, _, patterns in INTENTS]
_DIRECT_PATTERN = _any_of(_DIRECT)
_WEAK_QUESTION_PATTERN = _any_of(_WEAK_QUESTION)
_CSV = re.compile(r"\bcsv\b")
_WORKBOOK = re.compile(r"\b(?:excel|xlsx?|workbook|arbeitsmappe|classeur|spreadsheet|tabellenkalkulation)\b")
_DOC_INTENTS = {"extract", "summary", "translate", "answer"}  # meaningless without documents
_REPORT_NAMES = {"en": "report", "de": "bericht", "fr": "rapport"}
_WORD = re.compile(r"(?<![\d-])\b(?:ms[- ])?word\b(?!\s*(?:count|limit|for word))|\bdocx\b")
_MARKDOWN = re.compile(r"\bmarkdown\b|\.md\b|\bmd\b")


def detect_intents(prompt: str, has_tables: bool) -> list[str]:
    """The intents a request expresses, in task order."""
    text = prompt.lower()
    found = [intent for intent, pattern in _INTENT_PATTERNS if pattern.search(text)]
    # "extract the tables" is table work; "extract" alone only when the documents hold tables.
    if "extract" not in found and has_tables and re.search(r"\bextra(?:ct|hier|i)", text):
        found.insert(0, "extract")
    # "What is the square of 12 in the table?" asks for an answer, not for the table.
    if "extract" in found and is_direct_question(text) and not _TABLE_OUTPUT.search(text):
        found.remove("extract")
    if not found and _WEAK_QUESTION_PATTERN.search(text):
        found.append("answer")
    return found


def is_direct_question(prompt: str) -> bool:
    """The request opens with an interrogative ("What is ...", "In welcher Datei ...", "Dans quel ...")."""
    text = prompt.lower()
    return _DIRECT_PATTERN.search(text) is not None


def question_of(prompt: str) -> str:
    """The indirect question of a request that asks for more ("Give me the table and tell me what
    ... is" asks "tell me what ... is"), so the other work's words do not rank the passages."""
    match = re.search(_INDIRECT, prompt, re.IGNORECASE)
    return prompt[match.start():].strip() if match else prompt


def document_formats(prompt: str) -> list[str]:
    """The formats a written document is asked in: Word only, Markdown only, or (named neither or
    both) Markdown and Word. "A 500-word report" names a length, not Word."""
    text = prompt.lower()
    word, markdown = bool(_WORD.search(text)), bool(_MARKDOWN.search(text))
    if word != markdown:
        return ["docx"] if word else ["md"]
    return ["md", "docx"]


def table_formats(prompt: str) -> list[str]:
    """The file types a table request asks for: a workbook unless only CSV is named."""
    text = prompt.lower()
    csv, workbook = bool(_CSV.search(text)), bool(_WORKBOOK.search(text))
    return ["xlsx", "csv"] if csv and workbook else (["csv"] if csv else ["xlsx"])


def plan_offline(hints: Mapping[str, Any]) -> dict[str, Any]:
    """A plan in the plan schema's shape, built from the request's hints alone."""
    prompt = str(hints.get("prompt") or "")
    language = str(hints.get("language") or "en")
    agents = [a["name"] for a in hints.get("agents", [])]
    docs = list(hints.get("documents", []))
    max_tasks = int(hints.get("max_tasks") or 8)
    doc_names = [d["name"] for d in docs]
    own = [d["name"] for d in docs if d.get("origin") != "answer"]  # not earlier steps' texts, unless named
    previous = hints.get("previous")
    if previous and wants_continuation(prompt):
        return continue_plan(previous, language, doc_names, agents)
    # The documents the request names ("the contract", "the Excel from before"), else this
    # round's uploads, else every document of the conversation.
    fresh = [d["name"] for d in docs if d.get("new", True)]
    picked = resolve_references(prompt, docs) or fresh or own
    intents = detect_intents(prompt, any(d.get("tables") for d in docs if d["name"] in picked))
    if docs and not intents and (fresh or picked != own):
        intents = ["summary"]  # documents without a recognisable request: say what is in them
    if not docs:
        intents = [i for i in intents if i not in _DOC_INTENTS]
    tasks: list[dict[str, Any]] = []
    steps: list[str] = []
    taken = set(doc_names)

    def out(name: str, purpose: str) -> dict[str, str]:
        # An output must not take the name of an upload or of another output.
        stem, dot, ext = name.rpartition(".")
        number = 1
        while name in taken:
            number += 1
            name = f"{stem}-{number}{dot}{ext}"
        taken.add(name)
        return {"name": name, "type": ext, "purpose": purpose}

    def add(agent: str, inputs: list[str], outputs: list[dict[str, str]], step: str,
            depends: list[str] | None = None, instructions: str | None = None) -> None:
        if agent in agents and len(tasks) < max_tasks:
            # Instructions in the user's language: they show in the plan message.
            lead = step if step.startswith(tuple(doc_names) or ("\0",)) else step[:1].upper() + step[1:]
            # The instruction, not the instruction plus the whole prompt again: the user's own words when
            # they ask for this one thing, the step alone when the request asks for several.
            text = instructions if instructions is not None else (prompt if len(intents) == 1 else lead)
            tasks.append({"id": f"t{len(tasks) + 1}", "agent": agent, "instructions": text.strip(),
                          "inputs": inputs, "outputs": outputs, "dependsOn": depends or []})
            steps.append(step)

    names = ", ".join(picked)
    for intent in intents:
        if intent == "extract":
            stem = f"{stem_of(picked[0])}-tables" if len(picked) == 1 else "tables"
            formats = table_formats(prompt)
            purposes = {"xlsx": "tables as a workbook, one sheet per table", "csv": "tables as CSV"}
            add("data_extractor", picked, [out(f"{stem}.{ext}", purposes[ext]) for ext in formats],
                say("step_extract", language, docs=names, formats=" + ".join(f.upper() for f in formats)))
        elif intent == "summary":
            add("summarizer", picked, [], say("step_summarize", language, docs=names))
        elif intent == "translate":
            target = target_language(prompt) or language
            label = language_label(target, language)
            # Offline there is no translation to deliver: the task says so in a sentence.
            add("translator", picked, [], say("step_translate", language, docs=", ".join(picked), target=label))
        elif intent == "answer":
            add("analyst", picked, [], say("step_answer", language, docs=names),
                instructions=question_of(prompt) if len(intents) > 1 else prompt)
        elif intent == "write":
            stem = _REPORT_NAMES.get(language, "report")
            earlier = [t["id"] for t in tasks]
            exts = document_formats(prompt)
            add("writer", [] if earlier else picked, [out(f"{stem}.{ext}", "document") for ext in exts],
                say("step_write", language, name=f"{stem}.{exts[-1]}"), earlier)
    # A plug-in the user names ("use the echo agent") gets a task of its own.
    lowered = prompt.lower()
    planned = {t["agent"] for t in tasks}
    for agent in agents:
        spoken = re.escape(agent.replace("_", " "))
        if agent not in planned and re.search(rf"\b(?:{spoken}|{re.escape(agent)})\b", lowered):
            add(agent, picked, [], say("step_agent", language, agent=agent), instructions=prompt)
    finals = [out for t in tasks for out in t["outputs"]]
    if tasks:
        answer = f"{say('offline_plan', language)} {say('plan_steps', language, n=len(tasks), steps='; '.join(steps))}"
    elif docs:  # documents there, but no request the offline model can carry out: never "without documents"
        answer = f"{say('offline_plan', language)} {say('plan_unclear', language, docs=names or ', '.join(doc_names))}"
    else:
        answer = f"{say('offline_plan', language)} {say('plan_nothing', language)}"
    if language not in ("en", "de", "fr"):
        answer = f"{say('english_only', language)}\n\n{answer}"
    return {"userLanguage": language, "objUserResponse": answer, "objFinalDocuments": finals,
            "objWorkplan": tasks}


_CONTINUING = {
    "en": "Continuing round {round}: reusing what it delivered ({done}); running again: {todo}.",
    "de": "Fortsetzung von Runde {round}: Bereits Geliefertes wird übernommen ({done}); erneut ausgeführt: {todo}.",
    "fr": "Reprise du tour {round} : ce qui a été livré est repris ({done}) ; relancé : {todo}.",
}
_NOTHING = {"en": "nothing", "de": "nichts", "fr": "rien"}


def continue_plan(previous: Mapping[str, Any], language: str, doc_names: list[str],
                  agents: list[str]) -> dict[str, Any]:
    """The interrupted round's plan again: delivered tasks keep their id, agent and instructions
    without outputs (the round reuses their results), the others run again."""
    tasks = []
    for t in previous.get("tasks", []):
        if t["agent"] not in agents:
            continue
        tasks.append({"id": t["id"], "agent": t["agent"], "instructions": t["instructions"],
                      "inputs": list(t.get("inputs", [])), "outputs": [] if t.get("delivered") else list(t["outputs"]),
                      "dependsOn": [d for d in t.get("dependsOn", [])]})
    produced = {o["name"] for t in tasks for o in t["outputs"]}
    finals = [d for d in previous.get("finalDocuments", []) if d["name"] in produced or d["name"] in doc_names]

    def label(ts: list[dict[str, Any]]) -> str:
        return ", ".join(f"{t['id']} ({t['agent']})" for t in ts) or _NOTHING.get(language, "nothing")

    done = [t for t in previous.get("tasks", []) if t.get("delivered")]
    todo = [t for t in previous.get("tasks", []) if not t.get("delivered")]
    answer = _CONTINUING.get(language, _CONTINUING["en"]).format(round=previous.get("round"), done=label(done),
                                                                 todo=label(todo))
    return {"userLanguage": language, "objUserResponse": f"{say('offline_plan', language)} {answer}",
            "objFinalDocuments": finals, "objWorkplan": tasks}
