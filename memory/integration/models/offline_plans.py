"""The offline model's rule for plans and reminders: a sentence of the user's naming a day
("我后天有考试", "I have an interview on December 15", "Remind me to call mom tomorrow") becomes an
event memory in the user's words; the library then fixes the day it names (memory.writer.dating)."""

from __future__ import annotations

import re
from datetime import date

from memory.integration.app_text import current_app_text
from memory.text.days import day_mentions
from memory.text.language import has_cjk

# Any date works for "does it name a day": the day itself is resolved later, from the turn.
_ANY_DAY = date(2000, 1, 3)
_REMIND_EN = re.compile(r"^(?:please\s+)?remind me (?:(to|that|about|of) )?(.+)$", re.I)
_WHEN_FIRST_EN = re.compile(r"^(.+?)\s+to\s+(.+)$", re.I)
_REMIND_ZH = re.compile(r"^(?:请)?提醒我(.+)$")
# The user's own plan: "我…" or a day first ("下周三我要…"); not a request ("帮我查…", "告诉我…").
_FIRST_PERSON_ZH = re.compile(r"^(?:[^，,。我]{1,8}[，,]?)?(?<![帮给诉叫让请替])我(?!们)")
_FIRST_PERSON_EN = (
    (re.compile(r"^I(?:'m| am)\b", re.I), "User is"),
    (re.compile(r"^I(?:'ve got| have got| have)\b", re.I), "User has"),
    (re.compile(r"^I(?:'ll| will)\b", re.I), "User will"),
    (re.compile(r"^I need\b", re.I), "User needs"),
    (re.compile(r"^I want\b", re.I), "User wants"),
    (re.compile(r"^I(?:'d| would)\b", re.I), "User would"),
    (re.compile(r"^I\b", re.I), "User"),
    (re.compile(r"^(?:my|our)\b", re.I), "User's"),
    (re.compile(r"^we(?:'re| are)?\b", re.I), "User and others are"),
)
_LEAD_EN = re.compile(r"^(?:(?:so|oh|well|also|and|btw|by the way),?\s+)+", re.I)


def plan_of(sentence: str) -> tuple[str, str] | None:
    """(description, section) for a sentence that plans something on a day, else None."""
    text = sentence.strip().rstrip(".!。！")
    if not text or text.endswith(("?", "？")) or not day_mentions(text, _ANY_DAY):
        return None
    section = current_app_text().section_name("event", "zh" if has_cjk(text) else "en")
    if has_cjk(text):
        reminder = _REMIND_ZH.match(text)
        if reminder:
            return f"用户请助手提醒：{reminder.group(1)}", section
        if _FIRST_PERSON_ZH.match(text):
            return text.replace("我", "用户", 1), section
        return None
    reminder = _REMIND_EN.match(text)
    if reminder:
        connector, asked = (reminder.group(1) or "").lower(), reminder.group(2)
        when_first = None if connector else _WHEN_FIRST_EN.match(asked)
        if when_first:  # "Remind me on Friday at 8 to call mom": the day, then what to do
            asked = f"{when_first.group(2)} {when_first.group(1)}"
        return f"User asked to be reminded {connector or 'to'} {asked}", section
    text = _LEAD_EN.sub("", text)
    for pattern, subject in _FIRST_PERSON_EN:
        if pattern.match(text):
            return pattern.sub(subject, text, count=1), section
    return None
