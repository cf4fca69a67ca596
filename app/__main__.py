"""`python -m app`: serve the API (HOST, PORT and the rest from the environment)."""

from __future__ import annotations

import asyncio
import logging
import os
import signal
import sys
from types import FrameType

import uvicorn

from app.config import SettingsError, from_env, help_text
from app.logs import configure_logging


class Server(uvicorn.Server):
    """uvicorn, with a graceful SIGTERM: the runtime drains and hands its rounds over, then uvicorn stops.

    uvicorn alone would close its socket at once, and /ready could not say 503 to the load balancer.
    A second SIGTERM, or SIGINT, stops at once as before.
    """

    def __init__(self, config: uvicorn.Config, runtime) -> None:  # noqa: ANN001 (app.engine.Runtime)
        super().__init__(config)
        self.runtime = runtime
        self._loop: asyncio.AbstractEventLoop | None = None
        self._draining = False
        self._drain: asyncio.Task | None = None  # held, so the loop does not drop the task

    async def serve(self, sockets=None) -> None:  # noqa: ANN001 (uvicorn's signature)
        self._loop = asyncio.get_running_loop()
        await super().serve(sockets)

    def handle_exit(self, sig: int, frame: FrameType | None) -> None:
        if sig != signal.SIGTERM or self._loop is None or self._draining:
            return super().handle_exit(sig, frame)
        self._draining = True
        self._loop.call_soon_threadsafe(self._begin_drain, sig, frame)

    def _begin_drain(self, sig: int, frame: FrameType | None) -> None:
        async def drain() -> None:
            try:
                await self.runtime.shutdown()
            finally:
                super(Server, self).handle_exit(sig, frame)

        self._drain = asyncio.get_running_loop().create_task(drain())


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
