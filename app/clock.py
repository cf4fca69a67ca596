"""Time, always timezone-aware UTC."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import overload


def now() -> datetime:
    """The current time in UTC, with its time zone."""
    return datetime.now(UTC)


@overload
def aware(value: datetime) -> datetime: ...
@overload
def aware(value: None) -> None: ...
@overload
def aware(value: datetime | None) -> datetime | None: ...
def aware(value: datetime | None) -> datetime | None:
    """`value` with UTC attached when the database handed it back without a zone (SQLite)."""
    if value is None or value.tzinfo is not None:
        return value
    return value.replace(tzinfo=UTC)
