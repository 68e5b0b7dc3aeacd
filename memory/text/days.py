"""Days a text names, relative or not ("后天", "next Friday", "the 15th"), resolved from a moment.

Deterministic, English and Chinese. A relative day means a different day every day, so what is
kept is the day it resolves to from the moment it was said, in the speaker's own zone.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass
from datetime import date, datetime, timedelta

WEEKDAYS_EN = ("Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday", "Sunday")
WEEKDAYS_ZH = ("周一", "周二", "周三", "周四", "周五", "周六", "周日")
_MONTHS = ("january", "february", "march", "april", "may", "june", "july", "august",
           "september", "october", "november", "december")  # fmt: skip
_MONTH_NAMES = {name: n for n, name in enumerate(_MONTHS, 1)} | {
    name[:3]: n for n, name in enumerate(_MONTHS, 1)
} | {"sept": 9}  # fmt: skip
_MONTH = "|".join(sorted(_MONTH_NAMES, key=len, reverse=True))
# Full names only: "sat", "sun" and "wed" are words too.
_WEEKDAY_EN = {name.lower(): n for n, name in enumerate(WEEKDAYS_EN)}
_WEEKDAY_EN_NAMES = "|".join(sorted(_WEEKDAY_EN, key=len, reverse=True))
_WEEKDAY_ZH = dict(zip("一二三四五六日天", (0, 1, 2, 3, 4, 5, 6, 6), strict=True))
_ZH_NUMBER = {"一": 1, "二": 2, "两": 2, "三": 3, "四": 4, "五": 5, "六": 6, "七": 7, "八": 8,
              "九": 9, "十": 10, "十一": 11, "十二": 12}  # fmt: skip
# A date written without a year a little before it was said is a past day mentioned late ("we met
# on 2 May", said on 5 May), not next year's.
LOOK_BACK = timedelta(days=30)

_PREPOSITIONS = r"(?:(?:on|by|until|till|before|after|from|since|for)\s+)?"
_EN = re.compile(
    r"\b(?P<prep>" + _PREPOSITIONS + r")(?:"
    r"(?P<iso>(?P<iy>\d{4})-(?P<im>\d{1,2})-(?P<id>\d{1,2}))"
    r"|(?P<after>(?:the\s+)?day\s+after\s+tomorrow)|(?P<before>(?:the\s+)?day\s+before\s+yesterday)"
    r"|(?P<word>today|tonight|tomorrow|yesterday)"
    r"|(?P<pwd>" + _WEEKDAY_EN_NAMES + r")\s+(?P<pwmod>this|next|last)\s+week\b"
    r"|(?<!every\s)(?:(?P<wmod>this|next|last|coming)\s+)?(?P<wd>" + _WEEKDAY_EN_NAMES + r")\b"
    r"|(?P<wemod>this|next|last)\s+weekend"
    r"|(?P<pmod>next|last|this)\s+(?P<period>week|month|year)"
    r"|in\s+(?P<in_n>\d{1,3}|a|one|two|three)\s+(?P<in_unit>days?|weeks?)"
    r"|(?P<mname>" + _MONTH + r")\.?\s+(?P<mday>\d{1,2})(?:st|nd|rd|th)?\b(?:,?\s+(?P<my>\d{4}))?"
    r"|(?:the\s+)?(?P<tday>\d{1,2})(?:st|nd|rd|th)?\s+of\s+(?P<tmod>this|next)\s+month\b"
    r"|(?:the\s+)?(?P<dday>\d{1,2})(?:st|nd|rd|th)?\s+(?:of\s+)?(?P<dname>" + _MONTH + r")\b"
    r"(?:,?\s+(?P<dy>\d{4}))?"
    r"|the\s+(?P<nth>\d{1,2})(?:st|nd|rd|th)\b"
    r")",
    re.IGNORECASE,
)
_ZH = re.compile(
    r"(?P<ymd>(?:(?P<y>\d{4})\s*年\s*)?(?P<m>\d{1,2}|十[一二]?|[一二三四五六七八九])\s*月\s*"
    r"(?P<d>\d{1,2})\s*[日号號])"
    r"|(?P<rel>大后天|大後天|后天|後天|明天|明日|明早|明晚|今天|今日|今晚|今早|昨天|昨日|昨晚|前天|大前天)"
    # "每周六" / "每个周末" is a habit, not a day; a bare "周末" too ("我喜欢周末"). "查一下下周四"
    # is "查一下" + "下周四", not the week after next.
    r"|(?<!每)(?<!每个)(?P<wzmod>这|這|本|(?<!一)下下|下|上)?(?:个|個)?(?P<wz>周|星期|礼拜|禮拜)"
    r"(?P<wzd>[一二三四五六日天])"
    r"|(?P<wezmod>这|這|本|下|上)(?:个|個)?周末"
    r"|(?P<pzmod>下|上|这|這|本)(?:个|個)?(?P<pz>周|星期|礼拜|月)(?![一二三四五六日天末])"
    r"|(?P<zn>\d{1,3}|[一二两三四五六七八九十])\s*天[以之]?后"
    r"|(?P<zday>\d{1,2})\s*[号號]"
)


@dataclass(frozen=True)
class DayMention:
    """One day (or span of days: a week, a weekend, a month) named in a text: where it is said
    (`start`, `end`), the first and last day it covers, whether it was relative (it means another
    day tomorrow) and the words themselves."""

    start: int
    end: int
    first: date
    last: date
    relative: bool
    words: str
    chinese: bool = False

    @property
    def one_day(self) -> bool:
        return self.first == self.last


def _safe(year: int, month: int, day: int) -> date | None:
    try:
        return date(year, month, day)
    except ValueError:
        return None


def _with_year(year: str | None, month: int, day: int, today: date) -> date | None:
    if year:
        return _safe(int(year), month, day)
    found = _safe(today.year, month, day)
    if found is not None and found < today - LOOK_BACK:
        found = _safe(today.year + 1, month, day)
    return found


def _week_start(day: date) -> date:
    return day - timedelta(days=day.weekday())


def _weekday(today: date, weekday: int, modifier: str) -> date:
    """A weekday named with this/next/last (这/下/上); bare, the next such day from today on."""
    if modifier in ("next", "下"):
        return _week_start(today) + timedelta(days=7 + weekday)
    if modifier == "下下":
        return _week_start(today) + timedelta(days=14 + weekday)
    if modifier in ("last", "上"):
        return _week_start(today) - timedelta(days=7 - weekday)
    if modifier in ("this", "这", "這", "本"):
        return _week_start(today) + timedelta(days=weekday)
    return today + timedelta(days=(weekday - today.weekday()) % 7)


def _nth_of_month(today: date, day: int) -> date | None:
    """ "the 15th" / "15号": this month's when it has not passed, else next month's."""
    year, month = today.year, today.month
    for _ in range(3):
        found = _safe(year, month, day)
        if found is not None and found >= today:
            return found
        year, month = (year + 1, 1) if month == 12 else (year, month + 1)
    return None


def _month_span(year: int, month: int) -> tuple[date, date]:
    nxt = date(year + 1, 1, 1) if month == 12 else date(year, month + 1, 1)
    return date(year, month, 1), nxt - timedelta(days=1)


def _period(today: date, period: str, modifier: str) -> tuple[date, date]:
    step = {"next": 1, "下": 1, "last": -1, "上": -1}.get(modifier, 0)
    if period in ("week", "周", "星期", "礼拜"):
        first = _week_start(today) + timedelta(days=7 * step)
        return first, first + timedelta(days=6)
    if period == "year":
        return date(today.year + step, 1, 1), date(today.year + step, 12, 31)
    month = today.month - 1 + step
    return _month_span(today.year + month // 12, month % 12 + 1)


def zh_number(text: str) -> int:
    """A number written in digits or as a Chinese numeral up to twelve ("三" → 3)."""
    return int(text) if text.isdigit() else _ZH_NUMBER.get(text, 0)


def _english(match: re.Match[str], today: date) -> tuple[date, date, bool] | None:
    g = match.groupdict()
    if g["iso"]:
        found = _safe(int(g["iy"]), int(g["im"]), int(g["id"]))
        return (found, found, False) if found else None
    if g["after"]:
        return today + timedelta(days=2), today + timedelta(days=2), True
    if g["before"]:
        return today - timedelta(days=2), today - timedelta(days=2), True
    if g["word"]:
        shift = {"today": 0, "tonight": 0, "tomorrow": 1, "yesterday": -1}[g["word"].lower()]
        return today + timedelta(days=shift), today + timedelta(days=shift), True
    if g["wd"] or g["pwd"]:
        modifier = (g["wmod"] or g["pwmod"] or "").lower().replace("coming", "")
        day = _weekday(today, _WEEKDAY_EN[(g["wd"] or g["pwd"]).lower()], modifier)
        return day, day, True
    if g["tday"]:
        first, _ = _period(today, "month", g["tmod"].lower())
        found = _safe(first.year, first.month, int(g["tday"]))
        return (found, found, True) if found else None
    if g["wemod"]:
        saturday = _weekday(today, 5, g["wemod"].lower())
        return saturday, saturday + timedelta(days=1), True
    if g["period"]:
        first, last = _period(today, g["period"].lower(), g["pmod"].lower())
        return first, last, True
    if g["in_n"]:
        count = {"a": 1, "one": 1, "two": 2, "three": 3}.get(g["in_n"].lower()) or int(g["in_n"])
        days = count * (7 if g["in_unit"].lower().startswith("week") else 1)
        return today + timedelta(days=days), today + timedelta(days=days), True
    if g["mname"] or g["dname"]:
        month = _MONTH_NAMES[(g["mname"] or g["dname"]).lower().rstrip(".")]
        found = _with_year(g["my"] or g["dy"], month, int(g["mday"] or g["dday"]), today)
        return (found, found, False) if found else None
    if g["nth"]:
        found = _nth_of_month(today, int(g["nth"]))
        return (found, found, True) if found else None
    return None


def _chinese(match: re.Match[str], today: date) -> tuple[date, date, bool] | None:
    g = match.groupdict()
    if g["ymd"]:
        found = _with_year(g["y"], zh_number(g["m"]), int(g["d"]), today)
        return (found, found, False) if found else None
    if g["rel"]:
        word = g["rel"].replace("後", "后")
        shift = {"大后天": 3, "后天": 2, "前天": -2, "大前天": -3}.get(word)
        if shift is None:
            shift = 1 if word.startswith("明") else -1 if word.startswith("昨") else 0
        return today + timedelta(days=shift), today + timedelta(days=shift), True
    if g["wz"]:
        day = _weekday(today, _WEEKDAY_ZH[g["wzd"]], g["wzmod"] or "")
        return day, day, True
    if match.group(0).endswith("周末"):
        saturday = _weekday(today, 5, g["wezmod"] or "这")
        return saturday, saturday + timedelta(days=1), True
    if g["pz"]:
        first, last = _period(today, g["pz"], g["pzmod"])
        return first, last, True
    if g["zn"]:
        shift = zh_number(g["zn"])
        return today + timedelta(days=shift), today + timedelta(days=shift), True
    if g["zday"]:
        found = _nth_of_month(today, int(g["zday"]))
        return (found, found, True) if found else None
    return None


def _matches(text: str) -> Iterator[tuple[re.Match[str], bool]]:
    for match in _EN.finditer(text):
        yield match, True
    for match in _ZH.finditer(text):
        yield match, False


def day_mentions(text: str, now: datetime | date) -> list[DayMention]:
    """Every day `text` names, resolved against `now` (its calendar date: pass the moment in the
    speaker's zone), in text order; overlapping mentions keep the longer one."""
    today = now.date() if isinstance(now, datetime) else now
    found: list[DayMention] = []
    for match, english in _matches(text):
        resolved = _english(match, today) if english else _chinese(match, today)
        if resolved is None:
            continue
        first, last, relative = resolved
        if not relative:  # "the week of 2026-12-14", "2026年12月14日起的那一周" name a span
            last = _span_end(text, match.start(), match.end(), first, last)
        found.append(DayMention(match.start(), match.end(), first, last, relative,
                                match.group(0), chinese=not english))  # fmt: skip
    found.sort(key=lambda m: (m.start, -(m.end - m.start)))
    kept: list[DayMention] = []
    for mention in found:
        if kept and mention.start < kept[-1].end:
            continue
        if kept and _same_day_spelled_twice(text, kept[-1], mention):
            mention = _joined(text, kept.pop(), mention)
        kept.append(mention)
    return kept


_WEEK_OF = re.compile(r"(?:week|weekend) of\s*$", re.IGNORECASE)
_UNTIL_ZH = re.compile(r"^至(\d{1,2})日")


def _span_end(text: str, start: int, end: int, first: date, last: date) -> date:
    """The last day of a span written around a date (how `anchor_days` writes a week, a
    weekend): a date alone is one day."""
    before, after = text[max(0, start - 12) : start], text[end : end + 8]
    if _WEEK_OF.search(before):
        return first + timedelta(days=1 if "weekend" in before.lower() else 6)
    if after.startswith("起的那一周"):
        return first + timedelta(days=6)
    until = _UNTIL_ZH.match(after)
    if until:
        return _safe(first.year, first.month, int(until.group(1))) or last
    return last


_BETWEEN = re.compile(r"[\s,，(（]*")


def _same_day_spelled_twice(text: str, before: DayMention, after: DayMention) -> bool:
    """ "Wednesday 2026-12-09", "2026年12月9日（周三）": a weekday beside a date is that date."""
    if not _BETWEEN.fullmatch(text[before.end : after.start]) or before.relative == after.relative:
        return False
    weekday, dated = (before, after) if before.relative else (after, before)
    return dated.one_day and weekday.one_day and weekday.first.weekday() == dated.first.weekday()


def _joined(text: str, before: DayMention, after: DayMention) -> DayMention:
    dated = after if before.relative else before
    end = after.end + (1 if text[after.end : after.end + 1] in ")）" else 0)
    return DayMention(before.start, end, dated.first, dated.last, False, text[before.start : end],
                      chinese=dated.chinese)  # fmt: skip


def named_days(text: str, written: date) -> list[date]:
    """The calendar days a stored text names with a date (ISO, "12月9日", "December 9"), a date
    without a year read from the day it was written; relative words are not read (stored text has
    had them resolved, `anchor_days`)."""
    return [m.first for m in day_mentions(text, written) if not m.relative and m.one_day]


def _render(mention: DayMention, chinese: bool, has_preposition: bool) -> str:
    day = mention.first
    if chinese:
        if (mention.last - day).days >= 364:
            return f"{day.year}年"
        if mention.one_day:
            return f"{day.year}年{day.month}月{day.day}日（{WEEKDAYS_ZH[day.weekday()]}）"
        if (mention.last - day).days >= 27:
            return f"{day.year}年{day.month}月"
        if (mention.last - day).days == 1:
            return f"{day.year}年{day.month}月{day.day}日至{mention.last.day}日的周末"
        return f"{day.year}年{day.month}月{day.day}日起的那一周"
    lead = "" if has_preposition else "on "
    if (mention.last - day).days >= 364:
        return f"in {day.year}"
    if mention.one_day:
        return f"{lead}{WEEKDAYS_EN[day.weekday()]} {day.isoformat()}"
    if (mention.last - day).days >= 27:
        return f"in {_MONTHS[day.month - 1].capitalize()} {day.year}"
    if (mention.last - day).days == 1:
        return f"{lead}the weekend of {day.isoformat()}"
    return f"in the week of {day.isoformat()}"


def anchor_days(text: str, now: datetime | date) -> str:
    """`text` with each relative day replaced by the day it means from `now` ("我后天有考试" said
    on Monday 2026-12-07 → "我2026年12月9日（周三）有考试"; "call mom tomorrow" → "call mom on
    Tuesday 2026-12-08"); dates and everything else stay as written."""
    pieces: list[str] = []
    cursor = 0
    for mention in day_mentions(text, now):
        if not mention.relative:
            continue
        prep = re.match(_PREPOSITIONS, mention.words, re.IGNORECASE)
        lead = prep.group(0) if prep is not None and not mention.chinese else ""
        pieces.append(text[cursor : mention.start])
        pieces.append(lead + _render(mention, mention.chinese, bool(lead)))
        cursor = mention.end
    pieces.append(text[cursor:])
    return "".join(pieces)
