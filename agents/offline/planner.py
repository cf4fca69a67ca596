"""Offline planning: the request's intents (`agents.language.detect_intents`) mapped onto the registry."""

from __future__ import annotations

import re
from typing import Any

import msgspec

from agents.language import (
    content_words,
    detect_intents,
    document_formats,
    document_topic,
    documents_by_part,
    question_of,
    resolve_references,
    table_formats,
    target_language,
    wants_continuation,
    without_named_kinds,
)
from agents.phrases import language_label, say
from agents.requests import Interrupted, InterruptedTask, PlanHints
from agents.tasks.outputs import stem_of, title_stem


def plan_offline(hints: PlanHints) -> dict[str, Any]:
    """A plan in the plan schema's shape, built from the request's hints alone."""
    prompt = hints.prompt
    language = hints.language or "en"
    agents = [a.name for a in hints.agents]
    docs = hints.documents
    max_tasks = hints.max_tasks or 8
    doc_names = [d.name for d in docs]
    own = [d.name for d in docs if d.origin != "answer"]  # not earlier steps' texts, unless named
    previous = hints.previous
    if previous and wants_continuation(prompt):
        return continue_plan(previous, language, doc_names, agents)
    # The documents the request names ("the contract", "the Excel from before"), else this
    # round's uploads, else every document of the conversation.
    fresh = [d.name for d in docs if d.new]
    facts = [msgspec.structs.asdict(d) for d in docs]
    picked = resolve_references(prompt, facts) or fresh or own
    # What the request asks for, not the kinds of document it names: "le fichier Excel" asks for no table.
    intents = detect_intents(without_named_kinds(prompt, facts), any(d.tables for d in docs if d.name in picked))
    # A request whose parts name different documents ("Résume le Word et donne le tableau Excel en CSV"):
    # each piece of work reads the documents named in the parts that ask for it; one a part asks for
    # without naming any reads what the request as a whole is about (`picked`).
    parts = documents_by_part(prompt, facts, any(d.tables for d in docs))

    def reading(intent: str) -> list[str]:
        asking = [p for p in parts if intent in p.intents]
        if not asking or not all(p.documents for p in asking):
            return picked
        return list(dict.fromkeys(name for p in asking for name in p.documents))
    if docs and not intents and (fresh or picked != own):
        intents = ["summary"]  # documents without a recognisable request: say what is in them
    if not docs:  # every other intent's agent reads documents; the writer can work from the request alone
        intents = [i for i in intents if i == "write"]
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
        read = reading(intent)
        if intent == "extract":
            stem = f"{stem_of(read[0])}-tables" if len(read) == 1 else "tables"
            # "le tableau Excel en CSV" over a workbook asks for a CSV: the Excel it names is the document.
            formats = table_formats(without_named_kinds(prompt, facts))
            purposes = {"xlsx": "tables as a workbook, one sheet per table", "csv": "tables as CSV"}
            add("data_extractor", read, [out(f"{stem}.{ext}", purposes[ext]) for ext in formats],
                say("step_extract", language, docs=", ".join(read), formats=" + ".join(f.upper() for f in formats)))
        elif intent == "summary":
            add("summarizer", read, [], say("step_summarize", language, docs=", ".join(read)))
        elif intent == "translate":
            target = target_language(prompt) or language
            label = language_label(target, language)
            # Offline there is no translation to deliver: the task says so in a sentence.
            add("translator", read, [], say("step_translate", language, docs=", ".join(read), target=label))
        elif intent == "answer":
            add("analyst", read, [], say("step_answer", language, docs=", ".join(read)),
                instructions=question_of(prompt) if len(intents) > 1 else prompt)
        elif intent == "write":
            # Named for what it is about ("report-orchard-survey-harvest-figures"), not "report".
            topic = content_words(document_topic(prompt), language)
            stem = title_stem(" ".join([say("report_name", language), *topic[1:6]]))
            earlier = [t["id"] for t in tasks]
            exts = document_formats(prompt)
            add("writer", [] if earlier else read, [out(f"{stem}.{ext}", "document") for ext in exts],
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


def continue_plan(previous: Interrupted, language: str, doc_names: list[str],
                  agents: list[str]) -> dict[str, Any]:
    """The interrupted round's plan again: delivered tasks keep their id, agent and instructions
    without outputs (the round reuses their results), the others run again."""
    tasks: list[dict[str, Any]] = []
    for t in previous.tasks:
        if t.agent not in agents:
            continue
        tasks.append({"id": t.id, "agent": t.agent, "instructions": t.instructions,
                      "inputs": list(t.inputs), "outputs": [] if t.delivered else list(t.outputs),
                      "dependsOn": list(t.depends_on)})
    produced = {o["name"] for t in tasks for o in t["outputs"]}
    finals = [d for d in previous.final_documents if d["name"] in produced or d["name"] in doc_names]

    def label(ts: list[InterruptedTask]) -> str:
        return ", ".join(f"{t.id} ({t.agent})" for t in ts) or say("nothing", language)

    done = [t for t in previous.tasks if t.delivered]
    todo = [t for t in previous.tasks if not t.delivered]
    answer = say("continuing", language, round=previous.round, done=label(done), todo=label(todo))
    return {"userLanguage": language, "objUserResponse": f"{say('offline_plan', language)} {answer}",
            "objFinalDocuments": finals, "objWorkplan": tasks}
