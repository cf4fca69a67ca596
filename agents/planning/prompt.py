"""What the planning call shows a model besides the request: its rules, one worked example per kind
of request, the agents in a few words with the files they make, and a document's first sentences."""

from __future__ import annotations

import json
import re
from functools import lru_cache
from typing import Any

from agents.base import DocumentText
from agents.language import split_sentences
from agents.planning.plan import TASK_KEYS

# Short on purpose: a 0.5B model follows worked examples far better than a page of rules. The
# examples are earlier turns of the conversation, not text in the rules, so a small model takes
# them as requests already answered instead of copying their tasks into the current plan.
PLAN_SYSTEM = """You plan work for a team of agents. Reply with one JSON object:
userLanguage: the request's language code; objUserResponse: your reply to the user in that language \
(the full answer when no agent is needed); objWorkplan: the tasks, at most {max_tasks}, none when you \
can answer yourself; objFinalDocuments: the files the user gets, each an output of a task.
A task's instructions say in your words what it must do for this request; its outputs are the files it \
delivers, named with their extension (none for an answer in a message); its agent is one that makes them; \
its inputs are document names or outputs of tasks in dependsOn.
Plan a task only for what the user asks. Agents: {agents}.{files}"""


def _example(request: str, language: str, answer: str, tasks: list[dict[str, Any]]) -> tuple[str, str]:
    """A worked example: the request and the plan a model should answer it with, its keys in the
    schema's order (with grammar-constrained decoding a model writes them in that order: a task's
    deliverable before its agent, `agents.planning.plan.TASK_KEYS`); its final documents are its tasks' files."""
    shown = [{key: task.get(key, []) for key in TASK_KEYS} for task in tasks]
    finals = [o for task in shown for o in task["outputs"]
              if not any(o["name"] in t["inputs"] for t in shown)]
    return request, json.dumps({"userLanguage": language, "objUserResponse": answer, "objWorkplan": shown,
                                "objFinalDocuments": finals}, ensure_ascii=False, separators=(",", ":"))


def _file(name: str, purpose: str) -> dict[str, str]:
    return {"name": name, "type": name.rsplit(".", 1)[-1], "purpose": purpose}


# One worked example per kind of request: several tasks with a dependency; one task; answer only.
# A small model leans on the last example it saw: answering without a task is the safest lean, and
# "Documents: none" in the request tells it when that is all it can do. The one task works on a
# document when the request has documents (a summary, and a question answered from it: the two
# kinds of task on a document whose answer is a message), else it is a text to write (`examples`).
SEVERAL_TASKS = _example(
    "Request (written in English):\nPut the table of sales.xlsx in a CSV file, then write a memo on it."
    "\n\nDocuments:\n- sales.xlsx", "en", "I will extract the table, then write the memo.",
    [{"id": "t1", "instructions": "Extract the sales table as CSV.", "agent": "data_extractor",
      "inputs": ["sales.xlsx"], "outputs": [_file("sales.csv", "table")]},
     {"id": "t2", "instructions": "Write a short memo on the sales figures.", "agent": "writer",
      "inputs": ["sales.csv"], "outputs": [_file("memo.docx", "memo")], "dependsOn": ["t1"]}])
ONE_TASK_ON_A_DOCUMENT = _example(
    "Request (written in German):\nFasse bericht.pdf zusammen.\n\nDocuments:\n- bericht.pdf", "de",
    "Ich fasse bericht.pdf zusammen.",
    [{"id": "t1", "instructions": "Fasse bericht.pdf in fünf Sätzen zusammen.", "agent": "summarizer",
      "inputs": ["bericht.pdf"]}])
A_QUESTION_ON_A_DOCUMENT = _example(
    "Request (written in French):\nQui a signé le contrat ?\n\nDocuments:\n- contrat.pdf", "fr",
    "Je cherche la réponse dans contrat.pdf.",
    [{"id": "t1", "instructions": "Qui a signé le contrat ? Cite le passage.", "agent": "analyst",
      "inputs": ["contrat.pdf"]}])
ONE_TASK_TO_WRITE = _example(
    "Request (written in French):\nÉcris un mot de remerciement à mon équipe.\n\nDocuments: none", "fr",
    "J'écris le mot.",
    [{"id": "t1", "instructions": "Écris un court mot de remerciement.", "agent": "writer",
      "outputs": [_file("merci.docx", "mot")]}])
ANSWER_ONLY = _example("Request (written in English):\nWhat is the capital of France?\n\nDocuments: none", "en",
                       "Paris is the capital of France.", [])


# What each built-in agent is for, in the fewest words; a plug-in's description is cut instead. Which
# agents make which files is said apart, from their `formats` (`makers`).
AGENT_BRIEFS = {"analyst": "answers questions about documents", "data_extractor": "tables",
                "summarizer": "summaries", "translator": "translations",
                "writer": "new texts: letters, reports, memos"}
SHOWN_FORMATS = 2  # of an agent's formats in the planning prompt: its usual ones ("docx, md", "xlsx, csv")


def makers(agents: list[dict[str, Any]]) -> str:
    """Which agents make which files, from their capability data (`Registry.formats`): a format to
    agents table (".docx, .md: analyst, summarizer, ...; .xlsx, .csv: data_extractor"), so the file a
    task delivers points at the agents that can make it. "" when no agent declares formats."""
    groups: dict[tuple[str, ...], list[str]] = {}
    for agent in agents:
        if agent.get("formats"):
            groups.setdefault(tuple(agent["formats"][:SHOWN_FORMATS]), []).append(agent["name"])
    shown = "; ".join(f".{', .'.join(formats)}: {', '.join(names)}" for formats, names in groups.items())
    return f" Files they make: {shown}." if shown else ""


def short_description(description: str) -> str:
    """An agent's description cut to its first clause: enough for a small model to choose."""
    first = re.split(r"[.;(:]", description, maxsplit=1)[0]
    words = first.split()
    return " ".join(words[:6]) + ("…" if len(words) > 6 else "")


def beginning(doc: DocumentText, sentences: int = 2) -> str:
    """The document's real first sentences, for the planner to see what it is about."""
    return _beginning(doc.text[:4000], sentences)


# Every round of a conversation lists the same documents again (its uploads and the earlier rounds'
# answers in reach: up to 49 of them late in one, `agents.knowledge.recall`); splitting each one's
# beginning into sentences again took 5-11 ms of such a round's planning.
@lru_cache(maxsize=256)
def _beginning(head: str, sentences: int) -> str:
    found = [s for s in split_sentences(head) if len(s.split()) >= 3][:sentences]
    return " ".join(" ".join(s.split()) for s in found)


def examples(has_documents: bool) -> list[tuple[str, str]]:
    """The worked examples for this request. Without documents the summary of one cannot apply,
    and the examples are most of a small model's prompt; the several-task example stays for its
    writer and its dependency."""
    if has_documents:
        return [SEVERAL_TASKS, ONE_TASK_ON_A_DOCUMENT, A_QUESTION_ON_A_DOCUMENT, ANSWER_ONLY]
    return [SEVERAL_TASKS, ONE_TASK_TO_WRITE, ANSWER_ONLY]
