"""When a failed model call is tried again, and how long to wait first (no SDK here)."""

from __future__ import annotations

import email.utils
import random
import time
from collections.abc import Mapping


class TransientError(Exception):
    """One attempt failed in a way worth retrying (a timeout, a dropped connection, 429, 5xx)."""

    def __init__(self, message: str, retry_after: float | None = None) -> None:
        super().__init__(message)
        self.retry_after = retry_after


def is_transient(status: int) -> bool:
    """HTTP statuses that say "try again later" rather than "this request is wrong"."""
    return status in (408, 429) or status >= 500


def backoff(attempt: int, retry_after: float | None, *, base: float, cap: float, retry_after_max: float) -> float:
    """Seconds to wait before attempt `attempt + 1`."""
    # A Retry-After longer than we are willing to wait is ignored, as the SDK does: the
    # round's budget, not the provider, decides how long a round may stall.
    if retry_after is not None and 0 <= retry_after <= retry_after_max:
        return retry_after
    # Exponential backoff with jitter, so parallel agents hitting one limit spread out.
    return min(cap, base * 2.0 ** attempt) * random.uniform(0.5, 1.0)


def retry_after(headers: Mapping[str, str]) -> float | None:
    """The wait a provider asks for: `retry-after-ms`, or `retry-after` in seconds or as a date."""
    value = headers.get("retry-after-ms")
    if value is not None:
        try:
            return float(value) / 1000
        except ValueError:
            pass
    value = headers.get("retry-after")
    if value is None:
        return None
    try:
        return float(value)
    except ValueError:
        pass
    try:
        return email.utils.parsedate_to_datetime(value).timestamp() - time.time()
    except (TypeError, ValueError):
        return None
