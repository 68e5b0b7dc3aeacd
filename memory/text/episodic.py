"""Episodic or evergreen: whether a memory is tied to a moment, by rule (English and Chinese)."""

from __future__ import annotations

import re
from typing import Protocol


class Written(Protocol):
    """What the rule reads of a memory: a `MemoryItem`, or retrieval's copy of one."""

    @property
    def theme(self) -> str: ...
    @property
    def description(self) -> str: ...


# Episodic: tied to a moment (a plan, an event, a dated fact). Evergreen is everything else
# (identity, lasting preferences, relationships): it does not fade with age.
_EPISODIC_EN = re.compile(
    r"\b(plan(s|ned|ning)?|going to|will|next (week|month|year|monday|tuesday|wednesday|"
    r"thursday|friday|saturday|sunday)|tomorrow|tonight|yesterday|last (week|month|night)|"
    r"this (week|weekend|month)|appointment|meeting|deadline|flight|trip|visit(ing)?|"
    r"interview|exam|booked|scheduled|on (mon|tues|wednes|thurs|fri|satur|sun)day|"
    r"(jan|feb|mar|apr|may|jun|jul|aug|sep|sept|oct|nov|dec)[a-z]* \d{1,2}|"
    r"\d{1,2} (jan|feb|mar|apr|may|jun|jul|aug|sep|sept|oct|nov|dec)[a-z]*|"
    r"\d{4}-\d{2}-\d{2})\b",
    re.IGNORECASE,
)
_EPISODIC_ZH = re.compile(
    r"(打算|计划|准备|要去|将要|明天|后天|今晚|下周|下个月|下星期|周[一二三四五六日末]|星期[一二三四五六日天]|"
    r"昨天|上周|这周|本周|预约|约了|会议|截止|航班|机票|出差|旅行|面试|考试|\d{1,2}月\d{1,2}[日号])"
)


def memory_kind(item: Written) -> str:
    """ "episodic" for plans, events and dated facts (by rule, English and Chinese), else
    "evergreen"."""
    text = f"{item.theme} {item.description}"
    if _EPISODIC_EN.search(text) or _EPISODIC_ZH.search(text):
        return "episodic"
    return "evergreen"
