"""What a statement is about, by kind (home, name, work, …), in English and Chinese: no model."""

from __future__ import annotations

import re
from dataclasses import dataclass


@dataclass(frozen=True)
class StatementKind:
    """The words that name a kind of statement: whole English words, English word starts
    (`prefixes`, for "relocated", "employer"), and Chinese strings found anywhere."""

    words: frozenset[str]
    prefixes: tuple[str, ...]
    chinese: tuple[str, ...]

    @classmethod
    def of(cls, words: str, prefixes: str, chinese: str) -> StatementKind:
        """From space-separated lists."""
        return cls(frozenset(words.split()), tuple(prefixes.split()), tuple(chinese.split()))


# Matched against a forget request's topic ("where I live") and against what the user said or a
# memory's description ("I moved to Porto", "User lives in Porto") alike, so that a forget covers
# its topic's statements when they share no word. Loose on purpose: it only decides what a
# forget request hides or deletes, where hiding too much errs the safe way.
_KIND_WORDS: dict[str, tuple[str, str, str]] = {
    "home": (
        "live lives lived living move moved moving home address hometown apartment flat house"
        " neighborhood neighbourhood",
        "relocat",
        "住 搬 地址 老家 家乡 我家",
    ),
    "name": ("name names named called call nickname surname", "", "叫 名字 姓名 昵称"),
    "work": (
        "work works worked working job jobs career occupation profession office boss colleague"
        " colleagues",
        "employ",
        "工作 上班 职业 公司 同事 老板",
    ),
    "age": ("age aged old born birthday", "", "岁 年龄 生日 出生"),
    "contact": ("phone email mail number", "", "电话 手机 邮箱"),
    "partner": (
        "wife husband partner married girlfriend boyfriend spouse",
        "",
        "老婆 老公 妻子 丈夫 结婚 女朋友 男朋友",
    ),
    "health": ("ill illness sick medication diet", "allerg diagnos", "过敏 生病 病 吃药"),
}
STATEMENT_KINDS = {kind: StatementKind.of(*lists) for kind, lists in _KIND_WORDS.items()}
_WORD = re.compile(r"[a-z]+")
_WORD_KIND = {word: kind for kind, spec in STATEMENT_KINDS.items() for word in spec.words}
_PREFIX_KIND = {p: kind for kind, spec in STATEMENT_KINDS.items() for p in spec.prefixes}
_PREFIX_LENGTHS = sorted({len(p) for p in _PREFIX_KIND})
_CHINESE_KIND = [(cue, kind) for kind, spec in STATEMENT_KINDS.items() for cue in spec.chinese]


def topics_of(text: str) -> frozenset[str]:
    """The kinds of statement `text` names or makes ("where I live", "我上周搬到了杭州" → home)."""
    kinds = {kind for cue, kind in _CHINESE_KIND if cue in text}
    for word in set(_WORD.findall(text.lower())):
        kind = _WORD_KIND.get(word)
        if kind is None:
            kind = next((_PREFIX_KIND[word[:n]] for n in _PREFIX_LENGTHS
                         if word[:n] in _PREFIX_KIND), None)  # fmt: skip
        if kind is not None:
            kinds.add(kind)
    return frozenset(kinds)
