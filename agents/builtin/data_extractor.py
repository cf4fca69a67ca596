"""The data extractor agent: pulls tables and figures out of documents into CSV and XLSX."""

from __future__ import annotations

from typing import Any

from msgspec import structs

from agents.base import DocumentText, OutputFile, TaskContext, TaskResult, TaskSpec
from agents.model import ModelRequest
from agents.phrases import say
from agents.requests import ExtractHints
from agents.tasks.calls import Ledger, input_budget, messages, output_budget
from agents.tasks.hints import doc_facts
from agents.tasks.inputs import base_hints, task_documents
from agents.tasks.outputs import part_name, parts_archive_name, planned, stem_of, xml_safe
from agents.toolkit.cpu import off_gil
from agents.toolkit.files import CSV_MIME, XLSX_MIME, ZIP_MIME, csv_bytes, sheet_names, xlsx_bytes, zip_bytes
from agents.toolkit.tables import document_tables, markdown_table
from agents.toolkit.tokens import chunk_text
from extractors.tables import Cell, Table, make_table

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
    """Delivers the tables of documents as a workbook (and CSV when asked), cells as found."""

    name = "data_extractor"
    formats = ("xlsx", "csv")  # what it delivers, for the planner (agents.registry.Registry.formats)
    description = (
        "Extracts tables and figures from the given documents (spreadsheets, CSV, tables in "
        "PDFs/Word, figures in text) into one .xlsx workbook (a sheet per table) and .csv files."
    )

    async def run(self, task: TaskSpec, context: TaskContext) -> TaskResult:
        ledger = Ledger(context.model)
        docs = task_documents(task, context)
        if not docs:
            return TaskResult(text=say("no_documents", context.language))
        found: list[tuple[DocumentText, Table]] = []
        for doc in docs:
            tables = document_tables(doc)
            if not tables and not context.model.extractive:
                # No table in the structure: a model may tabulate the figures in the prose.
                tables = await self._tabulate(ledger, task, context, doc)
            found.extend((doc, table) for table in tables)
        names = ", ".join(d.name for d in docs)
        offline = ledger.offline or context.model.offline
        if not found:
            return TaskResult(text=say("no_tables", context.language, docs=names),
                              usage=ledger.usage, model=ledger.model_name, offline=offline)
        # "-tables" keeps a CSV upload and its extracted table from sharing a name.
        stem = f"{stem_of(docs[0].name)}-tables" if len(docs) == 1 else "tables"
        labels = sheet_names([xml_safe(label) for label in _labels(found)])
        # A workbook of hundreds of sheets is seconds of openpyxl, its report of them tens of
        # milliseconds: both in a worker process.
        files, text = await off_gil(_deliver, task, [d.name for d, _ in found], [t for _, t in found], labels, stem,
                                    context.language)
        return TaskResult(text=text, files=files, usage=ledger.usage, model=ledger.model_name,
                          offline=offline)

    async def _tabulate(self, ledger: Ledger, task: TaskSpec, context: TaskContext,
                        doc: DocumentText) -> list[Table]:
        system = (f"You are the {self.name} agent. Extract every table and every set of figures "
                  "in the text as tables: a header row, then one row per record, cells as text.")
        hints = ExtractHints(**base_hints(task, context, self.name))
        chunks = chunk_text(doc.text, input_budget(context.model, self.name)) if doc.text.strip() else []
        tables: list[Table] = []
        for index, chunk in enumerate(chunks, 1):
            request = ModelRequest(
                purpose="task",
                messages=messages(system, f"Instructions: {task.instructions}\n\n{chunk}"),
                schema=TABLES_SCHEMA,
                schema_name="tables",
                agent=self.name,
                hints=structs.replace(hints, documents=(doc_facts(doc, text=chunk, part=index, parts=len(chunks)),)),
                max_tokens=output_budget(context.model, self.name),
            )
            response = await ledger.ask(request)
            tables.extend(_parse_tables(response.data, doc.name))
        return tables


def _parse_tables(data: Any, doc_name: str) -> list[Table]:
    tables = []
    for raw in (data or {}).get("tables", []) if isinstance(data, dict) else []:
        rows: list[list[Cell]] = [[str(cell) for cell in row] for row in raw.get("rows", []) if isinstance(row, list)]
        name = str(raw.get("name") or stem_of(doc_name))
        table = make_table(name, rows, "model", tabulated=True) if rows else None
        if table is not None:
            tables.append(table)
    return tables


def _labels(found: list[tuple[DocumentText, Table]]) -> list[str]:
    """Sheet names: where each table came from ("Revenue", "page 3 table 1"), led by the
    document's name where two documents' tables would share one."""
    labels = []
    for doc, table in found:
        label = table.name
        if label.startswith("sheet "):
            label = label[len("sheet "):]
        elif label == "table":  # the one table of a CSV file
            label = stem_of(doc.name)
        labels.append(label)
    counts: dict[str, set[str]] = {}
    for (doc, _), label in zip(found, labels):
        counts.setdefault(label.casefold(), set()).add(doc.name)
    return [f"{stem_of(doc.name)[:14]} {label}" if len(counts[label.casefold()]) > 1 else label
            for (doc, _), label in zip(found, labels)]


MAX_LOOSE_CSV = 3  # more tables than this as CSV come in one ZIP


def stacked(tables: list[Table], labels: list[str], language: str) -> tuple[list[Table], list[str]]:
    """Tables with the same columns (a sheet a year, a page each of one long table) as one, a first column
    saying where each row comes from: a CSV file holds one table, and a person asking for "the yearly
    totals as a CSV file" means one file, not a file a year. In the first one's place; the rest as they are."""
    groups: dict[tuple[str, ...], list[int]] = {}
    for n, table in enumerate(tables):
        if table.header_row == 0 and table.rows:
            groups.setdefault(tuple(str(c).strip().casefold() for c in table.rows[0]), []).append(n)
    merged = {members[0]: members for members in groups.values() if len(members) > 1}
    taken = {n for members in merged.values() for n in members}
    out: list[tuple[Table, str]] = []
    for n, (table, label) in enumerate(zip(tables, labels, strict=True)):
        if n in merged:
            members = merged[n]
            sheets = all(tables[m].meta.get("sheet") for m in members)
            head = say("csv_sheet" if sheets else "csv_table", language)
            rows: list[list[Cell]] = [[head, *table.rows[0]]]
            rows += [[labels[m], *row] for m in members for row in tables[m].rows[1:]]
            name = f"{labels[members[0]]}-{labels[members[-1]]}"
            out.append((Table(name, rows, 0, table.source, {"stacked": [labels[m] for m in members]}), name))
        elif n not in taken:
            out.append((table, label))
    return [t for t, _ in out], [label for _, label in out]


def _files(task: TaskSpec, tables: list[Table], labels: list[str], stem: str, language: str) -> list[OutputFile]:
    """The workbook (unless only CSV was planned) and CSV files when CSV was planned (tables with the
    same columns stacked in one, `stacked`)."""
    csv_names = planned(task, {"csv"})
    xlsx_names = planned(task, {"xlsx"})
    files = []
    if xlsx_names or not csv_names:
        safe = [_xml_safe(t) for t in tables]
        files.append(OutputFile(name=(xlsx_names or [f"{stem}.xlsx"])[0], mime=XLSX_MIME,
                                data=xlsx_bytes(safe, labels)))
    if csv_names:
        tables, labels = stacked(tables, labels, language)
        if len(tables) == 1:
            files.append(OutputFile(name=csv_names[0], mime=CSV_MIME, data=csv_bytes(tables[0].rows)))
        elif len(tables) <= MAX_LOOSE_CSV:
            for label, table in zip(labels, tables):
                files.append(OutputFile(name=part_name(csv_names[0], label), mime=CSV_MIME, data=csv_bytes(table.rows)))
        else:
            members = [(f"{stem_of(label)}.csv", csv_bytes(t.rows)) for label, t in zip(labels, tables)]
            files.append(OutputFile(name=parts_archive_name(csv_names[0]), mime=ZIP_MIME, data=zip_bytes(members)))
    return files


def _xml_safe(table: Table) -> Table:
    rows = [[xml_safe(c) if isinstance(c, str) else c for c in row] for row in table.rows]
    return Table(table.name, rows, table.header_row, table.source, table.meta)


def _deliver(task: TaskSpec, names: list[str], tables: list[Table], labels: list[str], stem: str,
             language: str) -> tuple[list[OutputFile], str]:
    """The files and the report on them (`names[i]`: the document table i comes from)."""
    files = _files(task, tables, labels, stem, language)
    return files, _report(names, tables, labels, files, language)


def _report(names: list[str], tables: list[Table], labels: list[str], files: list[OutputFile], language: str) -> str:
    """What was found where and what was delivered, then a preview of the first tables."""
    docs = list(dict.fromkeys(names))
    lines = [say("tables_found", language, n=len(tables), docs=", ".join(docs)), ""]
    for name, table, label in zip(names, tables, labels):
        # A workbook's sheet is named by its label already; other sources (a PDF page) are said.
        named = table.meta.get("sheet") == label
        where = name if named else say("table_from", language, doc=name, source=table.source or table.name)
        lines.append(f"- {say('table_sheet', language, sheet=label, where=where, rows=len(table.rows), cols=table.width)}")
    lines.append("")
    for table, label in list(zip(tables, labels))[:3]:
        lines.append(f"**{label}**")
        lines.append("")
        preview = markdown_table(table, PREVIEW_ROWS)
        lines.extend(preview)
        shown = max(0, len(preview) - 1)  # the table's rows in it: the header and the rows under it
        if preview and shown < len(table.rows):  # a cut preview says so, never "8 rows" over 6 shown
            lines.append("")
            lines.append(say("preview_rows", language, shown=shown, rows=len(table.rows)))
        lines.append("")
    delivered = [f"{f.name} ({say('sheets', language, n=len(tables))})" if f.mime == XLSX_MIME else f.name for f in files]
    lines.append(say("files_delivered", language, files=", ".join(delivered)))
    return "\n".join(lines)
