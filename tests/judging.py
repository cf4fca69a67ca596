"""How a request case is judged, alike for every side (Foreman with the offline model, Foreman with a
real model, one plain chat call) and for every set of cases (the held-out set, tests/heldout/; the
tuning sets, tests/tuning/); `bench/heldout.py` runs them.

`checks` lists what the delivered text must contain (each an alternative set), `file` a document
type that must be delivered, `lang` the language the answer must be in (`reply_lang`: the project manager's reply to the request
too, where a side has one); `avoid` what it must not contain. Right: every check passes. Wrong: no content check passes. Partly: anything between.
`kind` says what sort of request a case is (one fact, two parts, a superlative, ...), for the
figures per kind.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

NOT_FOUND = ("not found", "could not find", "couldn't find", "no information", "does not mention",
             "doesn't mention", "not mentioned", "does not say", "doesn't say", "does not contain",
             "not in the document", "nicht gefunden", "keine angabe", "keine information", "nicht erwähnt",
             "nicht enthalten", "finde ich nicht", "pas trouvé", "aucune information", "ne mentionne pas",
             "introuvable", "ne contient pas", "n'ai pas trouvé", "no passage", "keine passage", "aucun passage")
COMPLETE = "<complete>"  # the answer is a finished text: some words, ending a sentence


@dataclass(frozen=True)
class Case:
    id: str
    lang: str
    prompt: str
    docs: list[str]
    checks: list[tuple[str, ...]]
    file: str = ""  # "xlsx", "csv", "docx": a delivered document of that type
    before: list[str] = field(default_factory=list)  # earlier rounds' prompts, same conversation
    avoid: tuple[str, ...] = ()
    kind: str = ""
    reply_lang: bool = False  # the manager's reply (the plan's message) must be in `lang` as well


def normal(text: str) -> str:
    """Lower case, one space, digit group separators out ("216,550", "216.550", "216 550" -> "216550")."""
    text = text.replace("\u202f", " ").replace("\xa0", " ").replace("’", "'").casefold()
    text = re.sub(r"(?<=\d)[,. ](?=\d{3}\b)", "", text)
    return " ".join(re.sub(r"[`*_>#|]", " ", text).split())


def complete(text: str) -> bool:
    words = text.split()
    return len(words) >= 3 and bool(re.search(r"[.!?)\]\"»:]\s*$", text.strip()))


def judge(case: Case, delivered: str, main: str, files: list[str], language: str,
          reply_language: str = "") -> tuple[str, list[str]]:
    """('right' | 'partly' | 'wrong', the checks that failed). `delivered` is everything the side
    delivered as text (messages and produced documents), `main` the answer itself (for its
    language and for being finished), `files` the produced documents' extensions, `language` what
    the detector says of `main`, `reply_language` what it says of the manager's reply (read only
    by a case with `reply_lang`)."""
    text = normal(delivered)
    failed, content_ok = [], 0
    for alternatives in case.checks:
        if alternatives == (COMPLETE,):
            ok = complete(main)
        else:
            ok = any(normal(a) in text for a in alternatives)
        content_ok += ok
        if not ok:
            failed.append(alternatives[0] if alternatives != NOT_FOUND else "says not found")
    for word in case.avoid:
        if normal(word) in text:
            failed.append(f"avoid {word!r}")
    if case.file and case.file not in files:
        failed.append(f"a .{case.file} file")
    if case.lang and language != case.lang:
        failed.append(f"language {case.lang} (got {language})")
    if case.reply_lang and case.lang and reply_language != case.lang:
        failed.append(f"the manager's reply in {case.lang} (got {reply_language or 'none'})")
    if not failed:
        return "right", []
    return ("partly" if content_ok else "wrong"), failed
