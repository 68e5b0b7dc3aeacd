"""Times a text names ("at 8pm", "下午3点半", "in 10 minutes", "Friday at 8"), resolved from a
moment in the speaker's zone: when a reminder comes."""

from __future__ import annotations

import re
from datetime import datetime, timedelta

from memory.text.days import day_mentions, zh_number

_TIME_EN = re.compile(
    r"\bat\s+(?P<h>\d{1,2})(?::(?P<m>\d{2}))?\s*(?P<ap>a\.?m\.?|p\.?m\.?)?(?![\d:])"
    r"|\b(?P<h2>\d{1,2})(?::(?P<m2>\d{2}))?\s*(?P<ap2>a\.?m\.?|p\.?m\.?)"
    r"|\b(?P<h3>\d{1,2}):(?P<m3>\d{2})\b"
    r"|\b(?P<part>in the morning|in the afternoon|in the evening|tonight|at noon|at night)\b",
    re.IGNORECASE,
)
_TIME_ZH = re.compile(
    r"(?P<part>凌晨|早上|早晨|上午|中午|下午|傍晚|晚上|今晚|明晚|明早)?\s*"
    r"(?P<h>\d{1,2}|[一二两三四五六七八九十]|十[一二])\s*[点點:：]\s*(?P<half>半)?(?:(?P<m>\d{1,2})\s*分?)?"
)
_PART_HOURS = {"in the morning": 9, "in the afternoon": 15, "in the evening": 19, "tonight": 20,
               "at noon": 12, "at night": 21}  # fmt: skip
_AFTERNOON_ZH = ("下午", "傍晚", "晚上", "今晚", "明晚")


def time_of_day(text: str) -> tuple[int, int] | None:
    """The first clock time `text` names ("at 8", "8:30pm", "下午3点半", "in the evening") as
    (hour, minute) on a 24-hour clock; a bare hour under 12 said with an evening word is p.m."""
    match = _TIME_EN.search(text)
    if match is not None:
        g = match.groupdict()
        if g["part"]:
            return _PART_HOURS[g["part"].lower()], 0
        hour = int(g["h"] or g["h2"] or g["h3"])
        minute = int(g["m"] or g["m2"] or g["m3"] or 0)
        suffix = (g["ap"] or g["ap2"] or "").lower()
        if suffix.startswith("p") and hour < 12:
            hour += 12
        if suffix.startswith("a") and hour == 12:
            hour = 0
        if not suffix and g["h"] and 1 <= hour <= 6:
            hour += 12  # "at 5" for a plan means the afternoon
        return (hour, minute) if hour < 24 and minute < 60 else None
    match = _TIME_ZH.search(text)
    if match is None:
        return None
    hour = zh_number(match["h"])
    minute = 30 if match["half"] else int(match["m"] or 0)
    if match["part"] in _AFTERNOON_ZH and hour < 12:
        hour += 12
    return (hour, minute) if hour < 24 and minute < 60 else None


_IN_MINUTES = re.compile(
    r"\bin\s+(?P<n>\d{1,4}|a|an|one|two|five|ten)\s+(?P<unit>minutes?|mins?|hours?)\b"
    r"|(?P<zn>\d{1,4}|[一二两三四五六七八九十]|半)\s*(?:个)?(?P<zunit>分钟|小时|钟头)[以之]?后",
    re.IGNORECASE,
)
_EN_COUNT = {"a": 1, "an": 1, "one": 1, "two": 2, "five": 5, "ten": 10}
# A day named without a time of day: the reminder comes in the morning.
MORNING = (9, 0)


def moment_named(text: str, now: datetime) -> datetime | None:
    """The moment `text` names from `now` (aware, in the user's zone): "in 10 minutes", "半小时后",
    "tomorrow at 8pm", "周五早上8点", "at 7:30" (today's, else tomorrow's when it has passed), a
    day alone at 9:00; None when it names neither a day nor a time."""
    match = _IN_MINUTES.search(text)
    if match is not None:
        if match["n"]:
            count = float(_EN_COUNT.get(match["n"].lower()) or int(match["n"]))
            hours = match["unit"].lower().startswith("h")
        else:
            count = 0.5 if match["zn"] == "半" else float(zh_number(match["zn"]))
            hours = match["zunit"] != "分钟"
        return now + timedelta(hours=count) if hours else now + timedelta(minutes=count)
    days = [m for m in day_mentions(text, now) if m.one_day]
    clock = time_of_day(text)
    if not days and clock is None:
        return None
    day = days[0].first if days else now.date()
    hour, minute = clock or MORNING
    moment = now.replace(year=day.year, month=day.month, day=day.day, hour=hour, minute=minute,
                         second=0, microsecond=0)  # fmt: skip
    if not days and moment <= now:
        moment += timedelta(days=1)
    return moment
