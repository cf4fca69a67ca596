"""The code worker: started by `app.sandbox.code` as `python -I -S worker.py UID`, confines itself,
says it is ready, runs one job and exits (a worker is never reused, so no run sees another's scratch).

Frames on stdin and stdout are a 4-byte big-endian length and JSON. The job: `code`, `inputs`,
`nodes`, `timeoutSeconds`, `memoryMb`, `maxOutputBytes`. The answer: `ok`, `result` or `error`,
`limit`, `cpu`. Only the standard library is imported here, and only before confinement does the
worker import anything of this tree.
"""

from __future__ import annotations

import builtins
import io
import json
import os
import struct
import sys
import time
from collections.abc import Callable, Mapping
from types import CodeType
from typing import Any

# What a code node may import (docs/sandbox.md). The confined worker sees the standard library
# read-only, so these import when the code asks for them; the few whose C part links a shared
# library (not in the worker's root) are imported before confinement.
ALLOWED_IMPORTS = (
    "array", "base64", "binascii", "bisect", "calendar", "cmath", "collections", "copy", "csv",
    "dataclasses", "datetime", "decimal", "difflib", "enum", "fractions", "functools", "hashlib",
    "heapq", "hmac", "html", "itertools", "json", "math", "numbers", "operator", "pprint", "random",
    "re", "statistics", "string", "struct", "textwrap", "time", "typing", "unicodedata", "uuid", "zlib",
)
# Pure modules the C parts of allowed ones import on first use, through the code's own `__import__`
# (`datetime.strptime` imports `_strptime`, `str.encode` an `encodings` codec).
HELPERS = ("_strptime", "encodings", "locale", "warnings")
PRELOADED = ("hashlib", "binascii", "zlib", "uuid", "base64")
NOT_AVAILABLE = ("breakpoint", "input", "exit", "quit", "help", "copyright", "credits", "license")
RESULT_FD = 3
LINE_MAX = 2000


class OutputLimitError(Exception):
    """The code printed more than the run's output limit."""


class BoundedText(io.TextIOBase):
    """`print`'s target: counts what the code prints, keeps none of it, and stops it at the limit."""

    def __init__(self, limit: int) -> None:
        self.limit, self.written = limit, 0

    def writable(self) -> bool:
        return True

    def write(self, text: str) -> int:
        self.written += len(text.encode("utf-8", "replace"))
        if self.written > self.limit:
            raise OutputLimitError(f"the code printed more than {self.limit} bytes")
        return len(text)


def _read_frame(fd: int) -> Any:
    header = _read_exactly(fd, 4)
    return json.loads(_read_exactly(fd, struct.unpack(">I", header)[0]))


def _read_exactly(fd: int, size: int) -> bytes:
    chunks, left = [], size
    while left:
        chunk = os.read(fd, min(left, 1 << 20))
        if not chunk:
            raise EOFError("the service closed the job pipe")
        chunks.append(chunk)
        left -= len(chunk)
    return b"".join(chunks)


def _write_frame(fd: int, payload: Mapping[str, Any]) -> None:
    data = json.dumps(payload).encode()
    os.write(fd, struct.pack(">I", len(data)) + data) if len(data) < 65536 else _write_all(fd, data)


def _write_all(fd: int, data: bytes) -> None:
    view = memoryview(struct.pack(">I", len(data)) + data)
    while view:
        view = view[os.write(fd, view):]


def _guarded_import(real: Callable[..., Any]) -> Callable[..., Any]:
    def guarded(name: str, globals: Any = None, locals: Any = None, fromlist: Any = (), level: int = 0) -> Any:
        top = name.split(".")[0]
        if level != 0 or (top not in ALLOWED_IMPORTS and top not in HELPERS):
            raise ImportError(f"import of {name!r} is not allowed in a code node "
                              "(only the pure standard library: see docs/sandbox.md)")
        return real(name, globals, locals, fromlist, level)
    return guarded


def _user_line(error: BaseException) -> int | None:
    if isinstance(error, SyntaxError) and error.filename == "<code>":
        return error.lineno
    line, trace = None, error.__traceback__
    while trace is not None:  # the innermost frame of the code's own
        if trace.tb_frame.f_code.co_filename == "<code>":
            line = trace.tb_lineno
        trace = trace.tb_next
    return line


def describe(error: BaseException) -> str:
    """The exception's type, message and the user's line: nothing of the worker's own frames."""
    message = error.msg if isinstance(error, SyntaxError) else str(error)
    text = f"{type(error).__name__}: {message}" if message else type(error).__name__
    line = _user_line(error)
    return (text[:LINE_MAX] + (f" (line {line})" if line else "")).strip()


def run(job: Mapping[str, Any]) -> dict[str, Any]:
    """Run one job's code and say what came of it (the caller has confined this process)."""
    limit_output = int(job["maxOutputBytes"])
    namespace: dict[str, Any] = {
        "__builtins__": {**{k: v for k, v in vars(builtins).items() if k not in NOT_AVAILABLE},
                         "__import__": _guarded_import(builtins.__import__)},
        "__name__": "__code_node__", "inputs": job["inputs"], "nodes": job["nodes"], "result": None,
    }
    sys.stdout = sys.stderr = BoundedText(limit_output)
    try:
        code: CodeType = compile(job["code"], "<code>", "exec")
        exec(code, namespace)
        encoded = _encoded(namespace.get("result"), limit_output)
    except OutputLimitError as error:
        return {"ok": False, "error": str(error), "limit": "output"}
    except MemoryError:
        return {"ok": False, "error": f"MemoryError: the code used more than {job['memoryMb']} MB", "limit": "memory"}
    except RecursionError as error:
        return {"ok": False, "error": describe(error), "limit": None}
    except BaseException as error:  # the code's own failure, SystemExit included: reported, never raised
        return {"ok": False, "error": describe(error), "limit": None}
    if encoded is None:
        return {"ok": False, "error": f"the result is larger than {limit_output} bytes", "limit": "output"}
    return {"ok": True, "result": json.loads(encoded), "limit": None}


def _encoded(result: Any, limit: int) -> str | None:
    """The result as JSON, or None as soon as it passes `limit` (a huge result is never built whole)."""
    parts, size = [], 0
    for part in json.JSONEncoder(allow_nan=False).iterencode(result):
        size += len(part)
        if size > limit:
            return None
        parts.append(part)
    return "".join(parts)


def main() -> None:
    """Confine, say ready (or why not), run one job, answer, exit."""
    for name in PRELOADED:
        __import__(name)
    os.dup2(1, RESULT_FD)
    null = os.open(os.devnull, os.O_WRONLY)
    os.dup2(null, 1)
    os.dup2(null, 2)
    os.close(null)
    sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))))
    from app.sandbox import confinement
    try:
        confinement.enter(int(sys.argv[1]), os.path.dirname(os.__file__))
    except (confinement.ConfinementError, OSError) as error:
        _write_frame(RESULT_FD, {"fatal": str(error)})
        return
    del sys.path[0]
    _write_frame(RESULT_FD, {"ready": True})
    job = _read_frame(0)
    confinement.limit_run(float(job["timeoutSeconds"]), int(job["memoryMb"]))
    started = time.process_time()
    answer = run(job)
    answer["cpu"] = time.process_time() - started
    _write_frame(RESULT_FD, answer)


if __name__ == "__main__":
    main()
