"""The one language rule: Chinese when a text has Chinese characters, else English."""

from __future__ import annotations

import re

LANGUAGES = ("en", "zh")
LANGUAGE_POLICIES = ("auto", "en", "zh")
# Han ideographs (basic, extension A, compatibility), kana and Hangul: scripts without spaces
# between words, which the tokenizer splits into characters and the prompts treat as Chinese.
CJK_CLASS = "\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff\u3040-\u30ff\uac00-\ud7af"
_CJK_RUN = re.compile(f"[{CJK_CLASS}]+")
_CJK_CHAR = re.compile(f"[{CJK_CLASS}]")
_LATIN_WORD = re.compile(r"[A-Za-z0-9'’]+")


def latin_words(text: str) -> list[str]:
    """The words of `text` written in Latin letters or digits, apostrophes kept ("What's")."""
    return _LATIN_WORD.findall(text)


def word_count(text: str) -> float:
    """How long `text` is in words, two Chinese characters a word: a length that reads the same
    in both languages ("What's your favourite band?" 4, "你住在哪里？" 2.5)."""
    return len(latin_words(text)) + len(_CJK_CHAR.findall(text)) / 2


def has_cjk(text: str) -> bool:
    """Whether the text contains Chinese (or other space-less) characters."""
    return _CJK_RUN.search(text) is not None


def language_of(text: str) -> str:
    """ "zh" for text with Chinese characters, else "en"."""
    return "zh" if has_cjk(text) else "en"


def resolve_language(policy: str, text: str = "") -> str:
    """The language to use: `policy` when it is "en" or "zh", else the language of `text`."""
    if policy in LANGUAGES:
        return policy
    if policy != "auto":
        raise ValueError(f"language must be one of {', '.join(LANGUAGE_POLICIES)}; got {policy!r}")
    return language_of(text)
