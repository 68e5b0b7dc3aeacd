"""Reading the times exports write: ISO 8601 text or epoch seconds, to epoch seconds (UTC)."""

from __future__ import annotations

import math
from datetime import datetime

EARLIEST = 946_684_800.0  # 2000-01-01: an earlier time is a unit mistake (e.g. milliseconds)


def epoch_seconds(value: object) -> float | None:
    """Seconds since the epoch for an ISO 8601 string (no offset: local time, "Z" accepted) or
    a number of seconds (also as text); None when it is neither or implausible."""
    seconds: float | None = None
    if isinstance(value, bool):
        return None
    if isinstance(value, int | float):
        seconds = float(value)
    elif isinstance(value, str) and value.strip():
        text = value.strip()
        try:
            seconds = float(text)
        except ValueError:
            try:
                parsed = datetime.fromisoformat(text.replace("Z", "+00:00"))
            except ValueError:
                return None
            seconds = (parsed if parsed.tzinfo else parsed.astimezone()).timestamp()
    if seconds is None or not math.isfinite(seconds) or seconds < EARLIEST:
        return None
    return seconds if seconds < 32_503_680_000 else None  # before year 3000
