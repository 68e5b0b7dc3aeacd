"""Absolute dates in English and Chinese memory text, and whether a dated memory has passed."""

from __future__ import annotations

import re
from datetime import date, datetime, timedelta, tzinfo

from memory.store.item import MemoryItem, parse_time
from memory.text.episodic import memory_kind

_MONTHS = {
    "jan": 1, "feb": 2, "mar": 3, "apr": 4, "may": 5, "jun": 6,
    "jul": 7, "aug": 8, "sep": 9, "oct": 10, "nov": 11, "dec": 12,
}  # fmt: skip
_MONTH = (
    r"(jan(?:uary)?|feb(?:ruary)?|mar(?:ch)?|apr(?:il)?|may|june?|july?|aug(?:ust)?|"
    r"sept?(?:ember)?|oct(?:ober)?|nov(?:ember)?|dec(?:ember)?)"
)
_DAY = r"(\d{1,2})(?:st|nd|rd|th)?"
_YEAR = r"(?:,?\s+(\d{4}))?"
_ISO = re.compile(r"\b(\d{4})-(\d{1,2})-(\d{1,2})\b")
_DAY_MONTH = re.compile(rf"\b{_DAY}\s+(?:of\s+)?{_MONTH}\b{_YEAR}", re.IGNORECASE)
_MONTH_DAY = re.compile(rf"\b{_MONTH}\.?\s+{_DAY}\b{_YEAR}", re.IGNORECASE)
_CHINESE = re.compile(r"(?:(\d{4})年)?(\d{1,2})月(\d{1,2})[日号]")
# A date written without a year a little before the memory was written is a past event
# mentioned late ("we met on 2 May", written on 5 May), not next year's.
_LOOK_BACK = timedelta(days=30)


def today(now: datetime | None = None) -> date:
    """The calendar date of `now` in its own zone (default: the current time, the server's)."""
    return (now if now is not None else datetime.now().astimezone()).date()


def _safe_date(year: int, month: int, day: int) -> date | None:
    try:
        return date(year, month, day)
    except ValueError:
        return None


def _with_year(year: str | None, month: int, day: int, written: date) -> date | None:
    if year:
        return _safe_date(int(year), month, day)
    found = _safe_date(written.year, month, day)
    if found is not None and found < written - _LOOK_BACK:
        found = _safe_date(written.year + 1, month, day)
    return found


def dates_in(text: str, written: date) -> list[date]:
    """Every absolute date in `text` ("3 May", "May 3rd, 2026", "2026-05-03", "5月3日",
    "2026年5月3日"); a date without a year takes the first such day not long before `written`."""
    found: list[date | None] = []
    for match in _ISO.finditer(text):
        found.append(_safe_date(int(match[1]), int(match[2]), int(match[3])))
    for match in _DAY_MONTH.finditer(text):
        found.append(_with_year(match[3], _MONTHS[match[2][:3].lower()], int(match[1]), written))
    for match in _MONTH_DAY.finditer(text):
        found.append(_with_year(match[3], _MONTHS[match[1][:3].lower()], int(match[2]), written))
    for match in _CHINESE.finditer(text):
        found.append(_with_year(match[1], int(match[2]), int(match[3]), written))
    return [d for d in found if d is not None]


def written_on(item: MemoryItem, zone: tzinfo | None = None) -> date:
    """The date, in `zone` (None: the server's), the memory's current text was written (its
    last create/update/merge)."""
    for entry in reversed(item.history):
        if entry.get("action") in ("create", "update", "merge"):
            moment = parse_time(entry.get("time"))
            if moment is not None:
                return moment.astimezone(zone).date()
    moment = parse_time(item.latest_update_time)
    return moment.astimezone(zone).date() if moment is not None else today()


def passed_date(item: MemoryItem, now: datetime | None = None) -> date | None:
    """The latest date an episodic memory names, when that day is over; else None (evergreen
    memories, undated ones, and plans still ahead)."""
    if memory_kind(item) != "episodic":
        return None
    dates = dates_in(item.description, written_on(item, now.tzinfo if now is not None else None))
    if not dates:
        return None
    latest = max(dates)
    return latest if latest < today(now) else None


def is_stale(item: MemoryItem) -> bool:
    """Whether consolidation marked the memory stale (its date passed) and its text has not
    changed since: an update, merge or restore makes it current again."""
    return item.stale_since > 0
    return False
