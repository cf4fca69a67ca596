"""Alembic's entry point: migrates the connection `app.store.schema` hands it, or DATABASE_URL's database.

`app.store.schema.upgrade` passes its own connection (holding the migration lock) in
`config.attributes["connection"]`; the `alembic` command line (for writing a new revision)
connects to the database the environment's settings name.
"""

from __future__ import annotations

import os

from alembic import context

from app.config import from_env
from app.store.schema import METADATA, include_name, sync_engine

config = context.config


def run(connection) -> None:  # type: ignore[no-untyped-def]
    context.configure(connection=connection, target_metadata=METADATA, include_name=include_name,
                      render_as_batch=connection.dialect.name == "sqlite", compare_type=True)
    with context.begin_transaction():
        context.run_migrations()


if context.is_offline_mode():
    raise SystemExit("Foreman's migrations run against a database: drop --sql.")
connection = config.attributes.get("connection")
if connection is not None:
    run(connection)
else:
    engine = sync_engine(from_env(os.environ).app_database_url)
    try:
        with engine.connect() as conn:
            run(conn)
            conn.commit()
    finally:
        engine.dispose()
