"""Dates named in a query ("on May 2nd", "4月30号") and the day each memory was written."""

from __future__ import annotations

import re

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


def dates_in(text: str) -> tuple[int, ...]:
    """The calendar days `text` names, as month * 100 + day ("May 2nd" → 502, "4月30号" → 430);
    a day that no month has (31 June is kept: the year is unknown) or a bare number is none."""
    found: list[int] = []
    for month_name, day, day_first, month_after in _EN_DATE.findall(text):
        month = _MONTH_OF[(month_name or month_after).lower()]
        found.append(month * 100 + int(day or day_first))
    for month, day in _ZH_DATE.findall(text):
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
