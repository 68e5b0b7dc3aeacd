"""Dates in a question ("last May", "on May 2nd", "yesterday", "去年五月", "5月2日"): the period
a search may be limited to, in local time, resolved against the time of the question."""

from __future__ import annotations

import re
from datetime import date, datetime, time, timedelta

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


def _bounds(first: date, last: date) -> Period:
    start = datetime.combine(first, time()).astimezone()
    end = datetime.combine(last + timedelta(days=1), time()).astimezone()
    return start.timestamp(), end.timestamp()


def _month(year: int, month: int) -> Period:
    last = (date(year + month // 12, month % 12 + 1, 1)) - timedelta(days=1)
    return _bounds(date(year, month, 1), last)


def _past(today: date, month: int, day: int = 1) -> int:
    """The year of the latest month (and day) not after today."""
    return today.year if (month, day) <= (today.month, today.day) else today.year - 1


def _number(text: str) -> int:
    return int(text) if text.isdigit() else CJK_NUMBERS.get(text, 0)


def question_period(question: str, now: datetime | None = None) -> Period | None:
    """The period a question is about when it names one (its first date), else None; "before
    <date>" is everything until that day, "after <date>" everything from the next one."""
    today = (now or datetime.now().astimezone()).date()
    found = _named_period(question, today)
    if found is None:
        return None
    (start, end), at = found
    lead = question[:at]
    rest = question[at:]
    if _BEFORE.search(lead.rstrip()) or "之前" in rest or "以前" in rest:
        return 0.0, start
    if _AFTER.search(lead.rstrip()) or "之后" in rest or "以后" in rest:
        return end, datetime.combine(today + timedelta(days=1), time()).astimezone().timestamp()
    return start, end


def _named_period(question: str, today: date) -> tuple[Period, int] | None:
    """The first period named in the question, and where its words start."""
    for match in _NUMERIC_DAY.finditer(question):
        if match.group(1):
            year, month, day = int(match.group(1)), int(match.group(2)), int(match.group(3))
        else:
            year, month, day = int(match.group(6)), int(match.group(5)), int(match.group(4))
        if (period := _safe_day(year, month, day)) is not None:
            return period, match.start()
    return _words_period(question, today)


def _words_period(question: str, today: date) -> tuple[Period, int] | None:
    if match := _ZH_DAY.search(question):
        month, day = _number(match.group(2)), int(match.group(3))
        if 1 <= month <= 12 and 1 <= day <= 31:
            year = int(match.group(1)) if match.group(1) else _past(today, month, day)
            period = _safe_day(year, month, day)
            return (period, match.start()) if period else None
    if match := _ZH_MONTH.search(question):
        month = _number(match.group(2))
        if 1 <= month <= 12:
            lead = match.group(1)
            year = {"去年": today.year - 1, "今年": today.year}.get(lead or "", 0)
            return _month(year or _past(today, month), month), match.start()
    if match := _ZH_RELATIVE.search(question):
        return _relative(match.group(), today), match.start()
    if match := _EN_DAY.search(question):
        name = (match.group(1) or match.group(4)).lower()
        month, day = MONTHS[name], int(match.group(2) or match.group(3))
        year = int(match.group(5)) if match.group(5) else _past(today, month, day)
        period = _safe_day(year, month, day)
        return (period, match.start()) if period else None
    for match in _EN_MONTH.finditer(question):
        word, name, year_text = match.group(1), match.group(2).lower(), match.group(3)
        if name == "may" and not (word or year_text):
            continue  # "may" the verb
        month = MONTHS[name]
        if year_text:
            return _month(int(year_text), month), match.start(2)
        year = _past(today, month)
        if (word or "").lower() == "last" and month == today.month:
            year -= 1
        return _month(year, month), match.start(2)
    if match := _EN_RELATIVE.search(question):
        return _relative(match.group().lower(), today), match.start()
    return None


def _safe_day(year: int, month: int, day: int) -> Period | None:
    try:
        moment = date(year, month, day)
    except ValueError:
        return None
    return _bounds(moment, moment)


def _relative(word: str, today: date) -> Period:
    monday = today - timedelta(days=today.weekday())
    if word in ("yesterday", "昨天"):
        return _bounds(today - timedelta(days=1), today - timedelta(days=1))
    if word == "前天":
        return _bounds(today - timedelta(days=2), today - timedelta(days=2))
    if word in ("today", "今天"):
        return _bounds(today, today)
    if word in ("this week", "这周", "本周"):
        return _bounds(monday, today)
    if word in ("last week", "上周", "上星期", "上个星期"):
        return _bounds(monday - timedelta(days=7), monday - timedelta(days=1))
    if word in ("last month", "上个月"):
        last = today.replace(day=1) - timedelta(days=1)
        return _month(last.year, last.month)
    return _bounds(date(today.year - 1, 1, 1), date(today.year - 1, 12, 31))  # last year, 去年


def local_day(timestamp: float) -> str:
    """The local calendar day of `timestamp`, as YYYY-MM-DD (what a digest is named by)."""
    return datetime.fromtimestamp(timestamp).astimezone().strftime("%Y-%m-%d")


def day_bounds(day: str) -> Period:
    """The first and the last instant of the local day `day` (YYYY-MM-DD), as timestamps."""
    start = datetime.combine(date.fromisoformat(day), datetime.min.time()).astimezone()
    end = datetime.combine(date.fromisoformat(day) + timedelta(days=1), datetime.min.time())
    return start.timestamp(), end.astimezone().timestamp()
