"""The server log's format: `LOG_FORMAT=plain` (default) or `json`, one object per line.

Both name the workflow, round and task a line belongs to when the code that logs runs for one
(the `agents.model.CallScope` the app enters), and the round's trace id while tracing is on.
Model I/O records (`LOG_MODEL_IO=true`) carry their call's fields: merged into the object in JSON,
appended as JSON in plain text.
"""

from __future__ import annotations

import json
import logging
from datetime import UTC, datetime
from typing import Any

from agents.model import CallScope

FORMATS = ("plain", "json")
_PLAIN = "%(asctime)s %(levelname)s %(name)s: %(message)s"


def _where(record: logging.LogRecord) -> dict[str, Any]:
    """Workflow, round and task: from a model I/O record's own fields, else the running context."""
    extra = getattr(record, "model_io", None)
    if isinstance(extra, dict):
        found = {k: extra.get(k) for k in ("workflowId", "round", "taskId")}
        found["traceId"] = CallScope.current().trace
    else:
        scope = CallScope.current()
        found = {"workflowId": scope.workflow, "round": scope.round_no, "taskId": scope.task, "traceId": scope.trace}
    return {k: v for k, v in found.items() if v is not None}


class JsonFormatter(logging.Formatter):
    """One JSON object per line: time, level, logger, message, and where it happened."""

    def format(self, record: logging.LogRecord) -> str:
        entry: dict[str, Any] = {
            "time": datetime.fromtimestamp(record.created, UTC).isoformat(),
            "level": record.levelname.lower(),
            "logger": record.name,
            "message": record.getMessage(),
            **_where(record),
        }
        extra = getattr(record, "model_io", None)
        if isinstance(extra, dict):
            entry.update({k: v for k, v in extra.items() if v is not None})
        if record.exc_info:
            entry["exception"] = self.formatException(record.exc_info)
        return json.dumps(entry, ensure_ascii=False, default=str)


class PlainFormatter(logging.Formatter):
    """The classic text line, with the workflow, round and task appended when known."""

    def __init__(self) -> None:
        super().__init__(_PLAIN)

    def format(self, record: logging.LogRecord) -> str:
        line = super().format(record)
        where = _where(record)
        if where:
            line += " [" + " ".join(f"{k}={v}" for k, v in where.items()) + "]"
        extra = getattr(record, "model_io", None)
        if isinstance(extra, dict):
            line += " " + json.dumps(extra, ensure_ascii=False, default=str)
        return line


def formatter(kind: str) -> logging.Formatter:
    """The formatter for a LOG_FORMAT value."""
    return JsonFormatter() if kind == "json" else PlainFormatter()


def configure_logging(kind: str = "plain", level: int = logging.INFO) -> None:
    """Send the root logger's records to stderr in the given format."""
    handler = logging.StreamHandler()
    handler.setFormatter(formatter(kind))
    root = logging.getLogger()
    root.handlers[:] = [handler]
    root.setLevel(level)
    # Alembic narrates each step at INFO; app.store.schema logs the one line that matters (from, to).
    logging.getLogger("alembic").setLevel(logging.WARNING)
