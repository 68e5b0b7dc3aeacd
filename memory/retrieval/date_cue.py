"""Dates named in a query ("on May 2nd", "4月30号", "明天" once resolved), the day each memory was
written and the days it names."""

from __future__ import annotations

import re
from datetime import date, datetime, timedelta

from memory.text.days import day_mentions, named_days

_MONTHS = ("january", "february", "march", "april", "may", "june", "july", "august",
           "september", "october", "november", "december")  # fmt: skip
_MONTH_OF = (
    {name: number for number, name in enumerate(_MONTHS, 1)}
    | {name[:3]: number for number, name in enumerate(_MONTHS, 1)}
    | {"sept": 9}
)
_MONTH_NAMES = "|".join(sorted(_MONTH_OF, key=len, reverse=True))
_EN_DATE = re.compile(
    r"\b(" + _MONTH_NAMES + r")\.?\s+(\d{1,2})(?:st|nd|rd|th)?\b"
    r"|\b(\d{1,2})(?:st|nd|rd|th)?\s+(?:of\s+)?(" + "|".join(_MONTHS) + r")\b",
    re.IGNORECASE,
)
_ZH_DATE = re.compile(r"(\d{1,2})\s*月\s*(\d{1,2})\s*[日号號]")
_ISO_DATE = re.compile(r"\b(\d{4})-(\d{2})-(\d{2})\b")
# A question about a span ("next month") asks about each of its days, up to this many.
MAX_ASKED_DAYS = 31


def dates_in(text: str) -> tuple[int, ...]:
    """The calendar days `text` names, as month * 100 + day ("May 2nd" → 502, "4月30号" → 430);
    a day that no month has (31 June is kept: the year is unknown) or a bare number is none."""
    found: list[int] = []
    for month_name, day, day_first, month_after in _EN_DATE.findall(text):
        month = _MONTH_OF[(month_name or month_after).lower()]
        found.append(month * 100 + int(day or day_first))
    for month, day in _ZH_DATE.findall(text):
        found.append(int(month) * 100 + int(day))
    for _, month, day in _ISO_DATE.findall(text):
        found.append(int(month) * 100 + int(day))
    return tuple(dict.fromkeys(d for d in found if 1 <= d // 100 <= 12 and 1 <= d % 100 <= 31))


def month_day(iso_time: str) -> int:
    """The calendar day of an ISO time as month * 100 + day, in the writer's own offset (the
    day the user lived it); 0 when the time is missing or unreadable."""
    if len(iso_time) < 10 or iso_time[4] != "-" or iso_time[7] != "-":
        return 0
    try:
        return int(iso_time[5:7]) * 100 + int(iso_time[8:10])
    except ValueError:
        return 0


def with_days(query: str, now: datetime | date) -> str:
    """`query` with the days it names, relative ones resolved from `now` (the run's moment in the
    user's zone), written after it as ISO dates ("帮我查一下明天的天气" asked on 7 December →
    "帮我查一下明天的天气 2026-12-08"): what retrieval reads as the days asked about
    (`iso_days`), and what an LLM ranker reads too. A query naming no day is returned as is."""
    asked: list[str] = []
    for mention in day_mentions(query, now):
        span = min((mention.last - mention.first).days, MAX_ASKED_DAYS - 1)
        asked += [(mention.first + timedelta(days=i)).isoformat() for i in range(span + 1)]
    asked = [day for day in dict.fromkeys(asked) if day not in query]
    return f"{query} {' '.join(asked)}" if asked else query


def iso_days(text: str) -> tuple[tuple[int, ...], str]:
    """The ISO dates in `text` as day ordinals (`date.toordinal`), and the text without them:
    a date is a cue for the day, not words to search for."""
    days: list[int] = []
    for year, month, day in _ISO_DATE.findall(text):
        try:
            days.append(date(int(year), int(month), int(day)).toordinal())
        except ValueError:
            continue
    return tuple(dict.fromkeys(days)), _ISO_DATE.sub(" ", text) if days else text


def planned_days(description: str, written: str) -> frozenset[int]:
    """The days a memory's text names with a date (ordinals), a date without a year read from
    `written` (its creation time, ISO; today when unreadable)."""
    if not any(char.isdigit() for char in description):
        return frozenset()  # most memories name no date: skip the patterns
    try:
        day = datetime.fromisoformat(written).date()
    except ValueError:
        day = date.today()
    return frozenset(found.toordinal() for found in named_days(description, day))
