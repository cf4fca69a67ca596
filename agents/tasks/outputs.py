"""Output documents: which files a task should deliver and how text becomes those files."""

from __future__ import annotations

import io
import re
import zipfile

from agents.base import OutputFile, TaskSpec
from agents.toolkit.cpu import off_loop, off_loop_if_long
from agents.toolkit.files import DOCX_MIME, MARKDOWN_MIME, docx_bytes, markdown_bytes

# The formats a text becomes (`text_file`), most wanted first: what the agents that deliver text declare
# as their `formats` (the planner reads them; a plan asking one of them for another format is invalid).
TEXT_FORMATS = ("docx", "md", "txt", "markdown")
TEXT_EXTS = set(TEXT_FORMATS)
_UNSAFE = re.compile(r"[^\w.-]+", re.UNICODE)
# Characters XML 1.0 forbids; PDF text sometimes carries them and DOCX/XLSX writers refuse them.
_NOT_XML = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f\ufffe\uffff]")


def xml_safe(text: str) -> str:
    """`text` without the control characters Office XML cannot hold."""
    return _NOT_XML.sub("", text)


def ext_of(name: str) -> str:
    """The lowercase extension of a file name, without the dot."""
    return name.rsplit(".", 1)[-1].lower() if "." in name else ""


def stem_of(name: str) -> str:
    """A file name without its extension, safe to build other names from."""
    stem = name.rsplit(".", 1)[0] if "." in name else name
    return _UNSAFE.sub("-", stem).strip("-") or "document"


def title_stem(title: str) -> str:
    """A file stem made of a title, cut at a word within 40 characters ("fasse-diesen-text-auf-deutsch-in-drei",
    not "...-drei-sä")."""
    stem = stem_of(title.lower())
    if len(stem) > 40:
        stem = stem[:41].rsplit("-", 1)[0] if "-" in stem[:41] else stem[:40]
    return stem or "document"


def part_name(planned: str, part: str) -> str:
    """The name of one part of the planned document `planned` when it is delivered as several files."""
    return f"{stem_of(planned)}-{stem_of(part)}.{ext_of(planned)}"


def parts_archive_name(planned: str) -> str:
    """The name of the ZIP archive holding the parts of the planned document `planned`."""
    return f"{stem_of(planned)}.zip"


def delivers(planned: str, names: list[str]) -> bool:
    """Whether files of these names deliver the planned document: itself, its parts or their archive."""
    stem, ext = stem_of(planned), ext_of(planned)
    return any(name == planned or name == parts_archive_name(planned)
               or name.startswith(f"{stem}-") and ext_of(name) == ext for name in names)


def unproduced(task: TaskSpec, files: list[OutputFile]) -> list[str]:
    """The task's planned documents when its files deliver none of them ([] when it planned none, or
    delivered one): a step asked for a workbook that made none did not do what it was asked."""
    wanted = [o.name for o in task.outputs if ext_of(o.name)]
    names = [f.name for f in files]
    return wanted if wanted and not any(delivers(name, names) for name in wanted) else []


def planned(task: TaskSpec, exts: set[str]) -> list[str]:
    """The names of the task's planned outputs with one of these extensions, in plan order."""
    return [o.name for o in task.outputs if ext_of(o.name) in exts]


async def text_file(name: str, markdown: str, title: str | None = None) -> OutputFile:
    """A Markdown text as the file `name` (.docx renders it, .md/.txt keep it). A Word file is built
    in a worker thread: python-docx takes tens of milliseconds a page, which on the loop held up
    every other round's live text (20 writers finishing at once: 200 ms gaps in their streams)."""
    if ext_of(name) == "docx":
        safe_title = xml_safe(title) if title else None
        return OutputFile(name=name, mime=DOCX_MIME, data=await off_loop(docx_bytes, xml_safe(markdown), title=safe_title))
    mime = "text/plain" if ext_of(name) == "txt" else MARKDOWN_MIME
    return OutputFile(name=name, mime=mime, data=markdown_bytes(markdown))


async def text_files(task: TaskSpec, markdown: str, *, title: str | None = None,
                     defaults: list[str] | None = None) -> list[OutputFile]:
    """The task's planned text documents (or `defaults` when none are planned) holding `markdown`."""
    names = planned(task, TEXT_EXTS) or list(defaults or [])
    return [await text_file(name, markdown, title) for name in names]


async def capped(files: list[OutputFile], cap: int, name: str) -> list[OutputFile]:
    """A task's files, at most `cap` of them as they are and the rest in one ZIP archive `name`;
    a large archive is made in a worker thread."""
    if len(files) <= cap:
        return files
    return await off_loop_if_long(sum(len(f.data) for f in files), bundle, files, cap, name)


def bundle(files: list[OutputFile], cap: int, name: str) -> list[OutputFile]:
    """At most `cap` of the files as they are; the rest in one ZIP archive `name` (their names kept,
    numbered where two are alike)."""
    if len(files) <= cap:
        return files
    buffer = io.BytesIO()
    seen: set[str] = set()
    with zipfile.ZipFile(buffer, "w", zipfile.ZIP_DEFLATED) as archive:
        for file in files[cap:]:
            entry, n = file.name, 1
            while entry in seen:
                n += 1
                entry = f"{stem_of(file.name)} ({n}).{ext_of(file.name)}" if ext_of(file.name) else f"{file.name} ({n})"
            seen.add(entry)
            archive.writestr(entry, file.data)
    return [*files[:cap], OutputFile(name=name, mime="application/zip", data=buffer.getvalue())]
