"""What a statement is about, by kind (home, name, work, …), in English and Chinese: no model."""

from __future__ import annotations

import re

# One pattern per kind, matched against a forget request's topic ("where I live") and against
# what the user said or a memory's description ("I moved to Porto", "User lives in Porto") alike,
# so a forget covers its topic's statements when they share no word. Loose on purpose: it only
# decides what a forget request hides or deletes, where hiding too much errs the safe way.
TOPIC_PATTERNS: dict[str, re.Pattern[str]] = {
    kind: re.compile(pattern, re.I)
    for kind, pattern in {
        "home": r"\b(?:liv(?:e[sd]?|ing)|mov(?:e[sd]?|ing)|relocat\w*|home|address|hometown"
        r"|apartment|flat|neighbou?rhood)\b|住|搬|地址|老家|家乡|我家",
        "name": r"\b(?:names?|named|called|call me|nickname)\b|叫|名字|姓名|昵称",
        "work": r"\b(?:work\w*|jobs?|employ\w*|career|occupation|profession|office|boss"
        r"|colleagues?)\b|工作|上班|职业|公司|同事|老板",
        "age": r"\b(?:age|aged|years? old|born|birthday)\b|岁|年龄|生日|出生",
        "contact": r"\b(?:phone|e-?mail|number)\b|电话|手机|邮箱",
        "partner": r"\b(?:wife|husband|partner|married|girlfriend|boyfriend|spouse)\b"
        r"|老婆|老公|妻子|丈夫|结婚|女朋友|男朋友",
        "health": r"\b(?:allerg\w*|ill|illness|sick|diagnos\w*|medication|diet)\b"
        r"|过敏|生病|病|吃药",
    }.items()
}


def topics_of(text: str) -> frozenset[str]:
    """The kinds of statement `text` names or makes ("where I live", "我上周搬到了杭州" → home)."""
    return frozenset(kind for kind, pattern in TOPIC_PATTERNS.items() if pattern.search(text))
