"""A run's time: its `now` (ISO 8601, default the clock) in the user's zone (IANA, default the
server's), checked once where the run's context is read."""

from __future__ import annotations

import os
from datetime import datetime, tzinfo
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError


def check_timezone(value: str) -> str:
    """`value` stripped when it is "" or an IANA zone this machine knows; else ValueError."""
    name = value.strip()
    if name:
        try:
            ZoneInfo(name)
        except (ZoneInfoNotFoundError, ValueError) as exc:
            raise ValueError(
                f"Context.timezone must be an IANA time zone such as 'Asia/Shanghai', got {value!r}"
            ) from exc
    return name


def check_now(value: str) -> str:
    """`value` stripped when it is "" or an ISO 8601 time; else ValueError."""
    text = value.strip()
    if text:
        try:
            datetime.fromisoformat(text)
        except ValueError as exc:
            raise ValueError(
                "Context.now must be an ISO 8601 time such as '2026-12-07T20:30:00+08:00', "
                f"got {value!r}"
            ) from exc
    return text


def deployment_timezone() -> str:
    """GULFSTREAM_TIMEZONE: the zone of a run that names none (`Context.timezone`'s default, as
    every context field defaults to its variable) and of what runs apart from any turn (the
    archive's digests, consolidation); "" for the server's own zone."""
    return check_timezone(os.environ.get("GULFSTREAM_TIMEZONE", ""))


def zone_of(timezone: str) -> tzinfo | None:
    """The zone named `timezone`; None (the server's own) when empty."""
    return ZoneInfo(timezone) if timezone else None


def run_moment(now: str, timezone: str) -> datetime:
    """`now` (else the clock) as an aware time in `timezone` (else the server's zone); a `now`
    without an offset is a wall-clock time in that zone."""
    zone = zone_of(timezone)
    if not now:
        return datetime.now(zone).astimezone(zone)
    moment = datetime.fromisoformat(now)
    if moment.tzinfo is None:
        return moment.replace(tzinfo=zone) if zone is not None else moment.astimezone()
    return moment.astimezone(zone)
