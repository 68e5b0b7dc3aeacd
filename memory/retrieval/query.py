"""Reading a query before BM25: broad requests ("最近怎么样", "what's new") and time cues."""

from __future__ import annotations

import re
from dataclasses import dataclass

from memory.tokenize import normalize, tokenize

# Phrases that ask for "anything recent" rather than a topic. Chinese phrases are removed from the
# text before tokenizing (bigrams would otherwise leave fragments such as "怎么").
_BROAD_PHRASES_ZH = (
    "最近怎么样",
    "最近如何",
    "近况",
    "近来",
    "近期",
    "最近",
    "这几天",
    "这阵子",
    "这段时间",
    "新鲜事",
    "有什么新",
    "有啥新",
    "在忙什么",
    "忙什么",
    "忙啥",
    "怎么样",
    "如何",
    "有什么",
    "什么",
    "发生",
    "动态",
    "最新",
    "一下",
    "告诉",
    "说说",
    "聊聊",
    "记得",
    "知道",
    "关于",
    "情况",
)
_BROAD_WORDS_EN = frozenset(
    tokenize(
        "recent recently lately latest new news update updates happening happened going on up "
        "anything something everything doing been lately nowadays these days tell remember know "
        "memory memories about what's whats how's"
    )
)
_TIME_CUES_ZH = (
    "最近",
    "近来",
    "近期",
    "上周",
    "这周",
    "本周",
    "昨天",
    "今天",
    "前几天",
    "这几天",
    "刚才",
    "刚刚",
    "最新",
    "这阵子",
    "这段时间",
    "上个月",
    "这个月",
)
_TIME_CUES_EN = re.compile(
    r"\b(recent|recently|lately|latest|last (week|month|night)|this (week|month)|yesterday|"
    r"today|tonight|nowadays|these days|just now|new)\b"
)
_PUNCTUATION = re.compile(r"[\s\W_]+", re.UNICODE)


@dataclass(frozen=True)
class QueryReading:
    """What the query asks for: `tokens` for BM25, whether it is broad, time cues, a bare theme."""

    tokens: list[str]
    broad: bool
    time_cue: bool
    theme_key: str | None = None


def theme_key(text: str) -> str:
    """A theme name compared loosely: case, width, spaces and punctuation ignored."""
    return _PUNCTUATION.sub("", normalize(text))


def read_query(query: str, theme_keys: frozenset[str] = frozenset()) -> QueryReading:
    """Classify a query. A query is broad when nothing but "recent/new/what's up" words remain."""
    text = normalize(query)
    time_cue = any(cue in text for cue in _TIME_CUES_ZH) or bool(_TIME_CUES_EN.search(text))
    tokens = tokenize(text)
    remainder = text
    for phrase in _BROAD_PHRASES_ZH:
        remainder = remainder.replace(phrase, " ")
    content = [token for token in tokenize(remainder) if token not in _BROAD_WORDS_EN]
    kept_words = [
        word
        for word in re.findall(r"\w+", remainder)
        if not all(token in _BROAD_WORDS_EN for token in tokenize(word))
    ]
    remainder_key = theme_key(" ".join(kept_words))
    if remainder_key and remainder_key in theme_keys:
        return QueryReading(tokens, broad=True, time_cue=time_cue, theme_key=remainder_key)
    return QueryReading(tokens, broad=not content, time_cue=time_cue)
