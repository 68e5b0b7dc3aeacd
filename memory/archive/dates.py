"""Dates in a question ("last May", "on May 2nd", "yesterday", "去年五月", "5月2日"): the period
a search may be limited to, in the asker's zone (`tz`; None: the server's), resolved against the
time of the question."""

from __future__ import annotations

import re
from datetime import date, datetime, time, timedelta, tzinfo

MONTHS = {
    name: number
    for number, names in enumerate(
        ("jan january", "feb february", "mar march", "apr april", "may", "jun june",
         "jul july", "aug august", "sep sept september", "oct october", "nov november",
         "dec december"),
        start=1,
    )
    for name in names.split()
}  # fmt: skip
CJK_NUMBERS = {"一": 1, "二": 2, "三": 3, "四": 4, "五": 5, "六": 6, "七": 7, "八": 8, "九": 9,
               "十": 10, "十一": 11, "十二": 12}  # fmt: skip
_MONTH = "|".join(sorted(MONTHS, key=len, reverse=True))
_EN_DAY = re.compile(
    rf"\b(?:on\s+)?(?:the\s+)?(?:({_MONTH})\.?\s+(\d{{1,2}})(?:st|nd|rd|th)?|(\d{{1,2}})(?:st|nd|rd|th)?"
    rf"\s+(?:of\s+)?({_MONTH}))\b(?:,?\s+(\d{{4}}))?",
    re.IGNORECASE,
)
_EN_MONTH = re.compile(rf"\b(last|this|in)?\s*({_MONTH})\b(?:\s+(\d{{4}}))?", re.IGNORECASE)
_EN_RELATIVE = re.compile(r"\b(yesterday|today|last week|last month|last year|this week)\b", re.I)
_NUMERIC_DAY = re.compile(r"\b(\d{4})-(\d{2})-(\d{2})\b|\b(\d{1,2})[./](\d{1,2})[./](\d{4})\b")
_BEFORE = re.compile(r"\bbefore\s*(?:the\s+)?$", re.IGNORECASE)
_AFTER = re.compile(r"\b(?:after|since)\s*(?:the\s+)?$", re.IGNORECASE)
_ZH_DAY = re.compile(r"(?:(\d{4})年)?(\d{1,2}|[一二三四五六七八九十]{1,3})月(\d{1,2})[日号]")
_ZH_MONTH = re.compile(r"(去年|今年)?(\d{1,2}|十[一二]?|[一二三四五六七八九])月(?![\d日号])")
_ZH_RELATIVE = re.compile(r"昨天|前天|今天|上周|上个?星期|这周|本周|上个月|去年")

Period = tuple[float, float]


def _midnight(day: date, tz: tzinfo | None) -> datetime:
    """The start of `day` in `tz` (None: the server's zone)."""
    return (
        datetime.combine(day, time(), tzinfo=tz)
        if tz is not None
        else (datetime.combine(day, time()).astimezone())
    )


def _bounds(first: date, last: date, tz: tzinfo | None = None) -> Period:
    return _midnight(first, tz).timestamp(), _midnight(last + timedelta(days=1), tz).timestamp()


def _month(year: int, month: int, tz: tzinfo | None = None) -> Period:
    last = (date(year + month // 12, month % 12 + 1, 1)) - timedelta(days=1)
    return _bounds(date(year, month, 1), last, tz)


def _past(today: date, month: int, day: int = 1) -> int:
    """The year of the latest month (and day) not after today."""
    return today.year if (month, day) <= (today.month, today.day) else today.year - 1


def _number(text: str) -> int:
    return int(text) if text.isdigit() else CJK_NUMBERS.get(text, 0)


def question_period(question: str, now: datetime | None = None) -> Period | None:
    """The period a question is about when it names one (its first date), else None; "before
    <date>" is everything until that day, "after <date>" everything from the next one. Days
    are the asker's: `now`'s zone (the run's moment), else the server's."""
    now = now or datetime.now().astimezone()
    today, tz = now.date(), now.tzinfo
    found = _named_period(question, today, tz)
    if found is None:
        return None
    (start, end), at = found
    lead = question[:at]
    rest = question[at:]
    if _BEFORE.search(lead.rstrip()) or "之前" in rest or "以前" in rest:
        return 0.0, start
    if _AFTER.search(lead.rstrip()) or "之后" in rest or "以后" in rest:
        return end, _midnight(today + timedelta(days=1), tz).timestamp()
    return start, end


def _named_period(question: str, today: date, tz: tzinfo | None) -> tuple[Period, int] | None:
    """The first period named in the question, and where its words start."""
    for match in _NUMERIC_DAY.finditer(question):
        if match.group(1):
            year, month, day = int(match.group(1)), int(match.group(2)), int(match.group(3))
        else:
            year, month, day = int(match.group(6)), int(match.group(5)), int(match.group(4))
        if (period := _safe_day(year, month, day, tz)) is not None:
            return period, match.start()
    return _words_period(question, today, tz)


def _words_period(question: str, today: date, tz: tzinfo | None) -> tuple[Period, int] | None:
    if match := _ZH_DAY.search(question):
        month, day = _number(match.group(2)), int(match.group(3))
        if 1 <= month <= 12 and 1 <= day <= 31:
            year = int(match.group(1)) if match.group(1) else _past(today, month, day)
            period = _safe_day(year, month, day, tz)
            return (period, match.start()) if period else None
    if match := _ZH_MONTH.search(question):
        month = _number(match.group(2))
        if 1 <= month <= 12:
            lead = match.group(1)
            year = {"去年": today.year - 1, "今年": today.year}.get(lead or "", 0)
            return _month(year or _past(today, month), month, tz), match.start()
    if match := _ZH_RELATIVE.search(question):
        return _relative(match.group(), today, tz), match.start()
    if match := _EN_DAY.search(question):
        name = (match.group(1) or match.group(4)).lower()
        month, day = MONTHS[name], int(match.group(2) or match.group(3))
        year = int(match.group(5)) if match.group(5) else _past(today, month, day)
        period = _safe_day(year, month, day, tz)
        return (period, match.start()) if period else None
    for match in _EN_MONTH.finditer(question):
        word, name, year_text = match.group(1), match.group(2).lower(), match.group(3)
        if name == "may" and not (word or year_text):
            continue  # "may" the verb
        month = MONTHS[name]
        if year_text:
            return _month(int(year_text), month, tz), match.start(2)
        year = _past(today, month)
        if (word or "").lower() == "last" and month == today.month:
            year -= 1
        return _month(year, month, tz), match.start(2)
    if match := _EN_RELATIVE.search(question):
        return _relative(match.group().lower(), today, tz), match.start()
    return None


def _safe_day(year: int, month: int, day: int, tz: tzinfo | None) -> Period | None:
    try:
        moment = date(year, month, day)
    except ValueError:
        return None
    return _bounds(moment, moment, tz)


def _relative(word: str, today: date, tz: tzinfo | None) -> Period:
    monday = today - timedelta(days=today.weekday())
    if word in ("yesterday", "昨天"):
        return _bounds(today - timedelta(days=1), today - timedelta(days=1), tz)
    if word == "前天":
        return _bounds(today - timedelta(days=2), today - timedelta(days=2), tz)
    if word in ("today", "今天"):
        return _bounds(today, today, tz)
    if word in ("this week", "这周", "本周"):
        return _bounds(monday, today, tz)
    if word in ("last week", "上周", "上星期", "上个星期"):
        return _bounds(monday - timedelta(days=7), monday - timedelta(days=1), tz)
    if word in ("last month", "上个月"):
        last = today.replace(day=1) - timedelta(days=1)
        return _month(last.year, last.month, tz)
    return _bounds(date(today.year - 1, 1, 1), date(today.year - 1, 12, 31), tz)  # 去年


def local_day(timestamp: float, tz: tzinfo | None = None) -> str:
    """The calendar day of `timestamp` in `tz` (None: the server's zone), as YYYY-MM-DD (what a
    digest is named by)."""
    return datetime.fromtimestamp(timestamp, tz).astimezone(tz).strftime("%Y-%m-%d")


def day_bounds(day: str, tz: tzinfo | None = None) -> Period:
    """The first and the last instant of the day `day` (YYYY-MM-DD) in `tz` (None: the
    server's zone), as timestamps."""
    return _bounds(date.fromisoformat(day), date.fromisoformat(day), tz)
