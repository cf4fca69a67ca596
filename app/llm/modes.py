"""Structured-output modes: which one an endpoint takes, found once per served model.

The strongest mode first (`json_schema`, then `json_object`, then the schema in the prompt);
an endpoint that rejects one moves to the next. The first structured call per model probes;
calls made meanwhile wait for its verdict instead of each paying the rejected attempt.
"""

from __future__ import annotations

import asyncio

MODES = ("json_schema", "json_object", "prompt")
_REJECTION_MARKERS = ("response_format", "json_schema", "json_object")


class FormatRejectedError(Exception):
    """The endpoint refused the `response_format` we sent."""


def rejects_format(mode: str | None, status: int, detail: str) -> bool:
    """Whether an error answer refuses the mode rather than the request."""
    # llama-cpp-python answers an unknown response_format with a 500, others with 400/422.
    return (mode in ("json_schema", "json_object") and status in (400, 422, 500)
            and any(marker in detail.lower() for marker in _REJECTION_MARKERS))


class ModeProbes:
    """The mode that works per served model name, and the probes under way."""

    def __init__(self) -> None:
        self.modes: dict[str, str] = {}
        self._probes: dict[str, asyncio.Event] = {}

    async def known(self, model: str) -> str | None:
        """The mode that works for `model`, waiting for a probe under way; None: probe it now."""
        while model not in self.modes:
            probe = self._probes.get(model)
            if probe is None:
                self._probes[model] = asyncio.Event()
                return None
            await probe.wait()
        return self.modes[model]

    def candidates(self, known: str | None) -> tuple[str, ...]:
        """The modes to try, strongest first, from the known one on."""
        return MODES[MODES.index(known or MODES[0]):]

    def accept(self, model: str, mode: str) -> None:
        """The endpoint took `mode`: remember it and let waiting first calls go on."""
        self.modes[model] = mode
        self.settle(model)

    def settle(self, model: str) -> None:
        """The probe ended (taken or failed): waiting calls look again."""
        probe = self._probes.pop(model, None)
        if probe is not None:
            probe.set()
