"""The data extractor agent: pulls tables and figures out of documents into CSV and XLSX."""

from __future__ import annotations

from typing import Any

from agents.base import DocumentText, OutputFile, TaskContext, TaskResult, TaskSpec
from agents.calls import Ledger, input_budget, messages, output_budget
from agents.hints import doc_facts
from agents.inputs import base_hints, task_documents
from agents.outputs import planned, stem_of, xml_safe
from agents.phrases import say
from agents.toolkit.cpu import off_loop_if_long, text_size
from agents.toolkit.files import CSV_MIME, XLSX_MIME, csv_bytes, xlsx_bytes
from agents.toolkit.tables import Table, find_tables
from agents.toolkit.tokens import chunk_text
from app.model import ModelRequest

TABLES_SCHEMA: dict[str, Any] = {
    "type": "object",
    "additionalProperties": False,
    "required": ["tables"],
    "properties": {
        "tables": {
            "type": "array",
            "items": {
                "type": "object",
                "additionalProperties": False,
                "required": ["name", "rows"],
                "properties": {
                    "name": {"type": "string"},
                    "rows": {"type": "array", "items": {"type": "array", "items": {"type": "string"}}},
                },
            },
        }
    },
}
PREVIEW_ROWS = 6


class DataExtractor:
    """Finds the tables in documents (or asks the model to tabulate figures in prose)."""

    name = "data_extractor"
    description = (
        "Extracts tables and figures from the given documents (spreadsheets, CSV, tables in "
        "PDFs/Word, figures in text) into .csv files (one per table) and one .xlsx workbook."
    )

    async def run(self, task: TaskSpec, context: TaskContext) -> TaskResult:
        ledger = Ledger(context.model)
        docs = task_documents(task, context)
        if not docs:
            return TaskResult(text=say("no_documents", context.language))
        tables: list[Table] = []
        for doc in docs:
            found = await off_loop_if_long(text_size(doc.items), find_tables, doc.items)
            if not found:  # no table structure: let the model tabulate the figures in the prose
                found = await self._tabulate(ledger, task, context, doc)
            tables.extend(found)
        names = ", ".join(d.name for d in docs)
        if not tables:
            return TaskResult(text=say("no_tables", context.language, docs=names),
                              usage=ledger.usage, model=ledger.model_name, offline=ledger.offline)
        # "-tables" keeps a CSV upload and its extracted table from sharing a name.
        stem = f"{stem_of(docs[0].name)}-tables" if len(docs) == 1 else "tables"
        files = _files(task, tables, stem)
        text = _report(tables, files, names, context.language)
        # Tables found without a model call come from the same offline round: say so.
        offline = ledger.offline or bool(getattr(context.model, "offline", False))
        return TaskResult(text=text, files=files, usage=ledger.usage, model=ledger.model_name,
                          offline=offline)

    async def _tabulate(self, ledger: Ledger, task: TaskSpec, context: TaskContext,
                        doc: DocumentText) -> list[Table]:
        system = (f"You are the {self.name} agent. Extract every table and every set of figures "
                  "in the text as tables: a header row, then one row per record, cells as text.")
        hints = base_hints(task, context, self.name, "extract")
        chunks = chunk_text(doc.text, input_budget(context.model, self.name)) if doc.text.strip() else []
        tables: list[Table] = []
        for index, chunk in enumerate(chunks, 1):
            request = ModelRequest(
                purpose="task",
                messages=messages(system, f"Instructions: {task.instructions}\n\n{chunk}"),
                schema=TABLES_SCHEMA,
                schema_name="tables",
                agent=self.name,
                hints=dict(hints, documents=[doc_facts(doc, text=chunk, part=index, parts=len(chunks))]),
                max_tokens=output_budget(context.model, self.name),
            )
            response = await ledger.ask(request)
            tables.extend(_parse_tables(response.data, doc.name))
        return tables


def _parse_tables(data: Any, doc_name: str) -> list[Table]:
    tables = []
    for raw in (data or {}).get("tables", []) if isinstance(data, dict) else []:
        rows = [[str(cell) for cell in row] for row in raw.get("rows", []) if isinstance(row, list)]
        if rows:
            tables.append(Table(name=str(raw.get("name") or stem_of(doc_name)), rows=rows))
    return tables


def _files(task: TaskSpec, tables: list[Table], stem: str) -> list[OutputFile]:
    csv_names = planned(task, {"csv"})
    files = []
    for index, table in enumerate(tables):
        if index < len(csv_names):
            name = csv_names[index]
        elif len(tables) == 1:
            name = f"{stem}.csv"
        else:
            name = f"{stem}-{index + 1}-{stem_of(table.name)[:30]}.csv"
        files.append(OutputFile(name=name, mime=CSV_MIME, data=csv_bytes(table.rows)))
    xlsx_name = (planned(task, {"xlsx"}) or [f"{stem}.xlsx"])[0]
    safe = [Table(name=xml_safe(t.name), rows=[[xml_safe(c) for c in row] for row in t.rows]) for t in tables]
    files.append(OutputFile(name=xlsx_name, mime=XLSX_MIME, data=xlsx_bytes(safe)))
    return files


def _report(tables: list[Table], files: list[OutputFile], docs: str, language: str) -> str:
    lines = [say("tables_found", language, n=len(tables), docs=docs), ""]
    for table in tables[:5]:
        cols = max((len(r) for r in table.rows), default=0)
        lines.append(f"**{say('table_line', language, name=table.name, rows=len(table.rows), cols=cols)}**")
        lines.append("")
        lines.extend(_markdown_table(table.rows[:PREVIEW_ROWS], cols))
        lines.append("")
    lines.append(say("files_delivered", language, files=", ".join(f.name for f in files)))
    return "\n".join(lines)


def _markdown_table(rows: list[list[str]], cols: int) -> list[str]:
    if not rows or not cols:
        return []

    def cell(value: str) -> str:
        return " ".join(value.split()).replace("|", "\\|")[:40]

    padded = [r + [""] * (cols - len(r)) for r in rows]
    out = ["| " + " | ".join(cell(c) for c in padded[0]) + " |", "|" + " --- |" * cols]
    out += ["| " + " | ".join(cell(c) for c in r) + " |" for r in padded[1:]]
    return out
