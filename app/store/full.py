"""A full disk, recognised from whichever layer reports it: the file system, SQLite or PostgreSQL."""

from __future__ import annotations

import errno

from sqlalchemy import exc as sa_exc

# Out of space: errno ENOSPC or EDQUOT from the file system, SQLite's SQLITE_FULL ("database or
# disk is full"), PostgreSQL's disk_full (53100) or its "could not extend file" (a full disk).
_FULL_ERRNOS = (errno.ENOSPC, errno.EDQUOT)
_FULL_STATES = ("53100",)
_FULL_TEXTS = ("database or disk is full", "no space left on device", "could not extend file")


def storage_full(exc: BaseException) -> bool:
    """True when `exc` (or what caused it) says the disk or the database ran out of space."""
    for error in causes(exc):
        if isinstance(error, OSError) and error.errno in _FULL_ERRNOS:
            return True
        state = getattr(error, "sqlstate", None) or getattr(error, "pgcode", None)
        if isinstance(state, str) and state in _FULL_STATES:
            return True
        if getattr(error, "sqlite_errorname", None) == "SQLITE_FULL":
            return True
        if isinstance(error, sa_exc.DBAPIError) or type(error).__module__.startswith(("sqlite3", "asyncpg")):
            text = str(error).lower()
            if any(phrase in text for phrase in _FULL_TEXTS):
                return True
    return False


def causes(exc: BaseException) -> list[BaseException]:
    """`exc` and what caused it (orig, __cause__, __context__), each once."""
    seen: set[int] = set()
    out: list[BaseException] = []
    todo: list[BaseException | None] = [exc]
    while todo:
        error = todo.pop()
        if error is None or id(error) in seen:
            continue
        seen.add(id(error))
        out.append(error)
        todo += [getattr(error, "orig", None), error.__cause__, error.__context__]
    return out
