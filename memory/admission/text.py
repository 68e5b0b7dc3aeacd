"""What the admission rules read of a message, and the shape of a rule."""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass

from memory.text.language import CJK_CLASS
from memory.text.tokenize import normalize, tokenize

I = re.IGNORECASE  # noqa: E741 - the English patterns' one flag
CJK = re.compile(f"[{CJK_CLASS}]")
# The assistant asked something: its message ends with a question ("…, and where do you work?",
# "…你住在哪里？"), possibly followed by a closing emoji or quote.
ASKED = re.compile(r"[?？]\W{0,3}\s*$|[吗呢]\W{0,3}\s*$")
MAX_AFTER_CHARS = 400


@dataclass(frozen=True)
class Message:
    """What the rules read of one message, computed once."""

    text: str
    lowered: str  # NFKC, lower case
    tokens: tuple[str, ...]  # BM25 tokens (stemmed English words, Chinese characters and bigrams)
    words: int  # English words plus Chinese characters: the message's length
    memories: tuple[str, ...]  # stored memories it may repeat
    answers_question: bool = False  # the assistant's message before it asked something

    @classmethod
    def of(cls, text: str, memories: tuple[str, ...] = (), after: str = "") -> Message:
        lowered = normalize(text)
        words = len(re.findall(r"[a-z0-9']+", lowered)) + len(CJK.findall(lowered))
        asked = bool(ASKED.search(normalize(after[-MAX_AFTER_CHARS:])))
        return cls(text, lowered, tuple(tokenize(text)), words, memories, asked)


Test = Callable[[Message], bool]


@dataclass(frozen=True)
class Rule:
    """One rule: its name (the reason recorded with the turn), its weight, its test, and whether
    it forces the turn to be written at once (`forces`: always; `urgent`: when it is admitted)."""

    name: str
    weight: float
    test: Test
    forces: bool = False
    urgent: bool = False


def matches_any(*patterns: str, flags: int = 0) -> Test:
    """A test that passes when any pattern is found in the lower-cased message."""
    compiled = [re.compile(pattern, flags) for pattern in patterns]
    return lambda message: any(p.search(message.lowered) for p in compiled)
