"""`python -m app`: serve the API (HOST, PORT and the rest from the environment)."""

from __future__ import annotations

import logging
import os
import sys

import uvicorn

from app.config import SettingsError, from_env, help_text
from app.logs import configure_logging


def main(argv: list[str] | None = None) -> int:
    args = sys.argv[1:] if argv is None else argv
    if args:
        print(help_text())
        if any(a not in ("-h", "--help") for a in args):
            print(f"\nforeman: unknown arguments {' '.join(args)!r}; settings come from the environment.",
                  file=sys.stderr)
            return 2
        return 0
    from app.main import create_app  # only once we are to serve
    from app.server import Server

    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(levelname)s %(name)s: %(message)s")
    try:
        settings = from_env(os.environ)
        configure_logging(settings.log_format)
        app = create_app(settings)
    except SettingsError as exc:
        print(f"foreman: {exc}", file=sys.stderr)
        return 2
    # log_config=None: uvicorn's records use the format above too (one log format).
    config = uvicorn.Config(app, host=settings.host, port=settings.port, log_level="info", log_config=None,
                            timeout_graceful_shutdown=5)
    Server(config, app.state.engine).run()
    return 0


if __name__ == "__main__":
    sys.exit(main())
