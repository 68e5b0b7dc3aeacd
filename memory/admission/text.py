"""What the admission rules read of a message, and the shape of a rule."""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass

from memory.language import CJK_CLASS
from memory.tokenize import normalize, tokenize

I = re.IGNORECASE  # noqa: E741 - the English patterns' one flag
CJK = re.compile(f"[{CJK_CLASS}]")


@dataclass(frozen=True)
class Message:
    """What the rules read of one message, computed once."""

    text: str
    lowered: str  # NFKC, lower case
    tokens: tuple[str, ...]  # BM25 tokens (stemmed English words, Chinese characters and bigrams)
    words: int  # English words plus Chinese characters: the message's length
    memories: tuple[str, ...]  # stored memories it may repeat

    @classmethod
    def of(cls, text: str, memories: tuple[str, ...] = ()) -> Message:
        lowered = normalize(text)
        words = len(re.findall(r"[a-z0-9']+", lowered)) + len(CJK.findall(lowered))
        return cls(text, lowered, tuple(tokenize(text)), words, memories)


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
