"""`python -m app`: serve the API; `python -m app migrate`: only bring the database schema up to date.

Settings (HOST, PORT, DATABASE_URL and the rest) come from the environment.
"""

from __future__ import annotations

import time

LAUNCHED = time.monotonic()  # before the imports: they are the first part of a start's time

import logging  # noqa: E402
import os  # noqa: E402
import sys  # noqa: E402

from app.config import Settings, SettingsError, from_env, help_text  # noqa: E402
from app.logs import configure_logging  # noqa: E402


def main(argv: list[str] | None = None) -> int:
    args = sys.argv[1:] if argv is None else argv
    if args and args != ["migrate"]:
        print(help_text())
        if any(a not in ("-h", "--help") for a in args):
            print(f"\nforeman: unknown arguments {' '.join(args)!r}; settings come from the environment.",
                  file=sys.stderr)
            return 2
        return 0
    try:
        settings = from_env(os.environ)
    except SettingsError as exc:
        print(f"foreman: {exc}", file=sys.stderr)
        return 2
    configure_logging(settings.log_format)
    if args == ["migrate"]:
        return migrate(settings.app_database_url, settings.data_dir)
    return serve(settings)


def migrate(url: str, data_dir: os.PathLike[str]) -> int:
    """Apply every pending migration and exit (the service also does this itself at start-up)."""
    from app.store import schema

    if url.startswith("sqlite"):
        os.makedirs(data_dir, exist_ok=True)
    revision = schema.upgrade(url)
    logging.getLogger("foreman.schema").info("The database schema is at revision %s.", revision)
    return 0


def serve(settings: Settings) -> int:
    import uvicorn

    from app.main import create_app  # only once we are to serve
    from app.web.server import Server, settle_heap

    # Each part of a start says how long it took as it ends (issue 51, item 11: a restart took 25-80 s
    # to be ready on a loaded machine, and the log did not say where the time went).
    log = logging.getLogger("foreman")
    log.info("Start-up: code imported in %.2f s.", time.monotonic() - LAUNCHED)
    began = time.monotonic()
    try:
        app = create_app(settings)
    except SettingsError as exc:
        print(f"foreman: {exc}", file=sys.stderr)
        return 2
    log.info("Start-up: the service wired in %.2f s.", time.monotonic() - began)
    app.on_startup.append(settle_heap)  # the process's own heap: not in create_app, which tests call many times
    # log_config=None: uvicorn's records use the root logger's format too (one log format).
    config = uvicorn.Config(app, host=settings.host, port=settings.port, log_level="info", log_config=None,
                            timeout_graceful_shutdown=5)
    Server(config, app.state.engine).run()
    return 0


if __name__ == "__main__":
    sys.exit(main())
