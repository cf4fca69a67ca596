"""Statements every round writes many times, run straight on the connection's DB-API cursor.

SQLAlchemy's per-execution work (the compiled cache's key, the execution context, the result
object) costs more than SQLite's own work for the small writes of a round: a log row took 77 µs
through `Connection.execute` and 29 µs on the cursor. A `Prepared` statement is compiled once
per dialect and set of parameter names; each run only binds values and converts what it reads,
with SQLAlchemy's own processors (datetimes on SQLite, JSON), and returns plain tuples. Errors
go through SQLAlchemy's handling, so they are wrapped as `Connection.execute` wraps them and a
lost connection is invalidated; cursor events (statement counters) fire.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from sqlalchemy.engine import Connection
from sqlalchemy.exc import ResourceClosedError

_UNREAD = ()  # no row read yet: what converts a column may depend on the type the driver reports


@dataclass(slots=True)
class _Compiled:
    sql: str
    compiled: Any
    order: tuple[str, ...]  # the positional parameters' names
    processors: dict[str, Callable[[Any], Any]]
    types: tuple[Any, ...]  # the SQLAlchemy type of each returned column
    columns: tuple[str, ...]  # their names
    readers: tuple[Callable[[Any], Any] | None, ...] | None = _UNREAD  # each one's conversion; None: none needs one


class Prepared:
    """One statement of a hot path, run with a dict of parameters; rows come back as tuples."""

    __slots__ = ("statement", "_compiled")

    def __init__(self, statement: Any) -> None:
        self.statement = statement
        self._compiled: dict[tuple[Any, tuple[str, ...]], _Compiled] = {}

    def execute(self, conn: Connection, params: dict[str, Any]) -> Sequence[tuple[Any, ...]]:
        """Run the statement with `params` in `conn`'s transaction; the rows it returns."""
        return self._run(conn, params)[1]

    def execute_many(self, conn: Connection, rows: Sequence[dict[str, Any]]) -> None:
        """Run the statement (one that returns nothing) once per row, in one call of the driver's `executemany`;
        every row has the first one's parameter names."""
        if not rows:
            return
        found = self._found(conn, tuple(rows[0]))
        self._executed(conn, found, [self._bound(found, row) for row in rows], many=True)

    def _found(self, conn: Connection, names: tuple[str, ...]) -> _Compiled:
        found = self._compiled.get((conn.dialect, names))
        if found is None:
            found = self._compiled[(conn.dialect, names)] = self._compile(conn, names)
        return found

    @staticmethod
    def _bound(found: _Compiled, params: dict[str, Any]) -> tuple[Any, ...]:
        values = found.compiled.construct_params(params)
        processors = found.processors
        return tuple(processors[name](values[name]) if name in processors else values[name] for name in found.order)

    @staticmethod
    def _cursor(conn: Connection) -> Any:
        dbapi = conn.connection.dbapi_connection
        if dbapi is None:  # the pooled connection was invalidated and not yet replaced
            raise ResourceClosedError("The connection was invalidated: the statement did not run.")
        return dbapi.cursor()

    def _run(self, conn: Connection, params: dict[str, Any]) -> tuple[_Compiled, Sequence[tuple[Any, ...]]]:
        found = self._found(conn, tuple(params))
        return found, self._executed(conn, found, self._bound(found, params), many=False)

    def _executed(self, conn: Connection, found: _Compiled, bound: Any, many: bool) -> Sequence[tuple[Any, ...]]:
        """Run the compiled statement on a cursor of the connection (`executemany` over `bound`'s rows when
        `many`), firing SQLAlchemy's cursor events as `Connection.execute` does; the rows it returns."""
        cursor = self._cursor(conn)
        events = conn._has_events or conn.engine._has_events
        rows: Sequence[tuple[Any, ...]] = []
        try:
            if events:
                conn.dispatch.before_cursor_execute(conn, cursor, found.sql, bound, None, many)
            if many:
                cursor.executemany(found.sql, bound)
            else:
                cursor.execute(found.sql, bound)
                rows = cursor.fetchall() if cursor.description else []
                if found.readers is _UNREAD and cursor.description:
                    found.readers = _readers(conn, found.types, cursor.description)
                if found.readers:
                    rows = [tuple(value if read is None else read(value) for read, value in zip(found.readers, row))
                            for row in rows]
            if events:
                conn.dispatch.after_cursor_execute(conn, cursor, found.sql, bound, None, many)
        except Exception as exc:
            conn._handle_dbapi_exception(exc, found.sql, bound, cursor, None)
            raise  # pragma: no cover - the handler above raises
        finally:
            cursor.close()
        return rows

    def first(self, conn: Connection, params: dict[str, Any]) -> dict[str, Any] | None:
        """Run the statement; its first row by column name (None when it returns none)."""
        found, rows = self._run(conn, params)
        return dict(zip(found.columns, rows[0])) if rows else None

    def _compile(self, conn: Connection, names: tuple[str, ...]) -> _Compiled:
        compiled = self.statement.compile(dialect=conn.dialect, column_keys=list(names))
        # What only SQLAlchemy's execution context does is refused here, not silently skipped.
        if compiled.insert_prefetch or compiled.update_prefetch or compiled.post_compile_params:
            raise ValueError("a Prepared statement takes every value from its parameters and expands none")
        if compiled.positiontup is None:
            raise ValueError(f"the {conn.dialect.name} driver does not take positional parameters")
        processors = {name: fn for name, fn in compiled._bind_processors.items() if fn is not None}
        returned = compiled._result_columns
        return _Compiled(compiled.string, compiled, tuple(compiled.positiontup), processors,
                         tuple(entry.type for entry in returned), tuple(entry.keyname for entry in returned))


def _readers(conn: Connection, types: tuple[Any, ...], description: Any) -> tuple[Callable[[Any], Any] | None, ...] | None:
    # As SQLAlchemy's result does: each column's processor, for the type code the driver reported.
    readers = tuple(type_._cached_result_processor(conn.dialect, column[1]) for type_, column in zip(types, description))
    return readers if any(read is not None for read in readers) else None
