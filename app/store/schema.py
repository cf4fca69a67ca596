"""The schema is Alembic's: `upgrade` brings a database to the newest revision (at start-up or by
`python -m app migrate`), on SQLite and PostgreSQL alike, one process at a time.

A database made before migrations existed (tables but no `alembic_version`) needs nothing
special: the baseline revision creates only what is missing, so its rows stay where they are
and it is recorded as migrated.
"""

from __future__ import annotations

import logging
from pathlib import Path
from typing import Any

import sqlalchemy as sa
from alembic import command
from alembic.config import Config
from alembic.runtime.migration import MigrationContext
from alembic.script import ScriptDirectory
from sqlalchemy.pool import NullPool
from sqlmodel import SQLModel

from app.store import tables  # noqa: F401  (registers the tables on SQLModel.metadata)

log = logging.getLogger("foreman.schema")

METADATA = SQLModel.metadata
MIGRATIONS = Path(__file__).resolve().parent / "migrations"
# Any constant of our own: replicas starting together on PostgreSQL migrate one after another.
LOCK_KEY = 0x666F72656D616E  # "foreman"
# Made by raw DDL in the migrations, unknown to the models: the full-text index over chunks
# (SQLite's FTS5 table and its shadow tables; PostgreSQL's GIN expression index).
UNMODELLED = ("chunks_fts", "ix_chunks_terms")


def include_name(name: str | None, kind: str, _parents: dict[str, Any]) -> bool:
    """What autogenerate compares: everything but the full-text index objects the models do not describe."""
    return not (kind in ("table", "index") and name is not None and name.startswith(UNMODELLED))


def sync_url(url: str) -> str:
    """The blocking driver's URL for the service's async URL (Alembic runs on a plain connection)."""
    return url.replace("+aiosqlite", "", 1).replace("+asyncpg", "+psycopg", 1)


def sync_engine(url: str) -> sa.Engine:
    """An engine for migrating: on SQLite, DDL in a real transaction that holds the write lock."""
    url = sync_url(url)
    if not url.startswith("sqlite"):
        return sa.create_engine(url, poolclass=NullPool, connect_args={"application_name": "foreman migrate"})
    engine = sa.create_engine(url, poolclass=NullPool, connect_args={"isolation_level": None})

    @sa.event.listens_for(engine, "connect")
    def _pragmas(dbapi_conn: Any, _record: Any) -> None:
        dbapi_conn.execute("PRAGMA busy_timeout=30000")
        dbapi_conn.execute("PRAGMA journal_mode=WAL")

    @sa.event.listens_for(engine, "begin")
    def _begin(conn: sa.Connection) -> None:
        conn.exec_driver_sql("BEGIN IMMEDIATE")

    return engine


def alembic_config() -> Config:
    """Alembic's configuration, pointing at the migrations shipped inside the package."""
    config = Config()
    config.set_main_option("script_location", str(MIGRATIONS))
    return config


def head() -> str:
    """The newest revision."""
    return ScriptDirectory.from_config(alembic_config()).get_current_head() or ""


def current(conn: sa.Connection) -> str | None:
    """The revision the database is at; None before any migration ran."""
    return MigrationContext.configure(conn).get_current_revision()


def upgrade(url: str) -> str:
    """Migrate the database at `url` to the newest revision (blocking; idempotent); return it."""
    engine = sync_engine(url)
    try:
        with engine.connect() as conn:
            postgres = conn.dialect.name == "postgresql"
            if postgres:  # session-level: held across the migration's own transaction
                conn.execute(sa.text("SELECT pg_advisory_lock(:key)"), {"key": LOCK_KEY})
                conn.commit()
            try:
                return _upgrade(conn)
            finally:
                if postgres:
                    conn.rollback()
                    conn.execute(sa.text("SELECT pg_advisory_unlock(:key)"), {"key": LOCK_KEY})
                    conn.commit()
    finally:
        engine.dispose()


def _upgrade(conn: sa.Connection) -> str:
    before = current(conn)
    target = head()
    if before == target:
        conn.commit()
        return target
    if before is None and sa.inspect(conn).has_table("workflows"):
        log.info("The database was made before schema migrations: upgrading it in place to %s.", target)
    config = alembic_config()
    config.attributes["connection"] = conn
    command.upgrade(config, "head")
    conn.commit()
    log.info("Database schema migrated from %s to %s.", before or "empty", target)
    return target
